"""Event stream: batched appends, offset streaming, archive vs resume (SPEC 5, catalog G8)."""

from __future__ import annotations

import dataclasses
import enum
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prompt_runner.control import store as store_module
from prompt_runner.control.store import ControlStore


@pytest.fixture
def store(tmp_path: Path) -> ControlStore:
    s = ControlStore(tmp_path / ".prompt_runner", events_fsync_interval_s=3600)
    s.init()
    return s


def _events(run: str, n: int) -> list[dict[str, object]]:
    return [{"kind": "assistant_text", "text": f"{run}-{i}", "at_ms": i} for i in range(n)]


def test_a_fresh_run_archives_the_previous_stream_byte_identical(store: ControlStore) -> None:
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 5))
    r1_bytes = store.events_path.read_bytes()
    store.prepare_event_stream("R2")
    assert store.archived_events_path("R1").read_bytes() == r1_bytes
    assert store.events_path.read_bytes() == b""
    assert store.event_stream_run_id() == "R2"
    store.append_events(_events("R2", 2))
    events, _ = store.read_events()
    assert [e["text"] for e in events] == ["R2-0", "R2-1"]


def test_a_resumed_run_appends_and_keeps_its_bytes_as_a_prefix(store: ControlStore) -> None:
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 3))
    before = store.events_path.read_bytes()
    resumed = ControlStore(store.state_root)
    resumed.prepare_event_stream("R1")
    resumed.append_events(_events("R1b", 2))
    after = store.events_path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert os.listdir(store.control_dir / "events") == []


def test_an_unknown_stream_is_archived_not_lost(store: ControlStore) -> None:
    store.events_path.write_bytes(b'{"kind":"legacy"}\n')
    store.prepare_event_stream("R1")
    (archived,) = os.listdir(store.control_dir / "events")
    assert archived.startswith("unknown-") and archived.endswith(".jsonl")
    assert (store.control_dir / "events" / archived).read_bytes() == b'{"kind":"legacy"}\n'


def test_an_existing_archive_is_never_overwritten(store: ControlStore) -> None:
    store.archived_events_path("R1").write_bytes(b"older\n")
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 1))
    store.prepare_event_stream("R2")
    assert store.archived_events_path("R1").read_bytes() == b"older\n"
    assert store.archived_events_path("R1.2").read_bytes().startswith(b'{"kind"')


def test_a_crash_after_archiving_before_the_sidecar_recovers(store: ControlStore) -> None:
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 1))
    os.rename(store.events_path, store.archived_events_path("R1"))  # sidecar still says R1
    store.prepare_event_stream("R2")
    assert store.event_stream_run_id() == "R2"
    assert store.events_path.read_bytes() == b""
    assert os.listdir(store.control_dir / "events") == ["R1.jsonl"]


def test_a_run_id_must_be_a_file_name(store: ControlStore) -> None:
    for bad in ("", "../x", "a/b", ".hidden"):
        with pytest.raises(ValueError):
            store.prepare_event_stream(bad)


def test_read_events_streams_only_new_bytes(store: ControlStore) -> None:
    assert store.read_events() == ([], 0)
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 3))
    events, offset = store.read_events(0)
    assert len(events) == 3
    store.append_events(_events("R1-more", 2))
    more, offset2 = store.read_events(offset)
    assert [e["text"] for e in more] == ["R1-more-0", "R1-more-1"]
    assert store.read_events(offset2) == ([], offset2)


def test_a_line_being_written_is_left_for_the_next_read(store: ControlStore) -> None:
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 1))
    with store.events_path.open("ab") as f:
        f.write(b'{"kind":"res')
    events, offset = store.read_events(0)
    assert len(events) == 1
    with store.events_path.open("ab") as f:
        f.write(b'ult","ok":true}\n')
    assert store.read_events(offset)[0] == [{"kind": "result", "ok": True}]


def test_a_replaced_stream_is_read_from_the_start(store: ControlStore) -> None:
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 10))
    _, offset = store.read_events(0)
    store.prepare_event_stream("R2")
    store.append_events(_events("R2", 1))
    events, _ = store.read_events(offset)
    assert [e["text"] for e in events] == ["R2-0"]


def test_a_torn_event_line_is_moved_aside_on_resume(store: ControlStore) -> None:
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 1))
    with store.events_path.open("ab") as f:
        f.write(b'{"kind":"tor')
    resumed = ControlStore(store.state_root)
    resumed.prepare_event_stream("R1")
    resumed.append_events(_events("R1b", 1))
    events, _ = store.read_events()
    assert [e["text"] for e in events] == ["R1-0", "R1b-0"]
    (torn,) = store.control_dir.glob("events.jsonl.torn.*")  # one aside scheme: state/lines.py
    assert torn.read_bytes() == b'{"kind":"tor'


class _Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class _Point:
    x: int


def test_values_json_cannot_hold_are_encoded_never_dropped(store: ControlStore) -> None:
    at = datetime(2026, 8, 10, 12, 0, tzinfo=UTC)
    store.append_events(
        [
            {
                "kind": "result",
                "result": ("ok", "done"),
                "at": at,
                "colour": _Colour.RED,
                "path": Path("a/b"),
                "tags": {"b", "a"},
                "point": _Point(1),
                "raw": b"bytes",
            }
        ]
    )
    (event,), _ = store.read_events()
    assert event == {
        "kind": "result",
        "result": ["ok", "done"],
        "at": "2026-08-10T12:00:00+00:00",
        "colour": "red",
        "path": "a/b",
        "tags": ["a", "b"],
        "point": {"x": 1},
        "raw": "bytes",
    }


def test_a_batch_is_one_write_and_fsync_is_group_committed(
    store: ControlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[int] = []
    syncs: list[int] = []
    real_write, real_fsync = os.write, os.fsync

    def counting_write(fd: int, data: bytes) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    def counting_fsync(fd: int) -> None:
        syncs.append(fd)
        real_fsync(fd)

    store.prepare_event_stream("R1")
    monkeypatch.setattr(store_module.os, "write", counting_write)
    monkeypatch.setattr(store_module.os, "fsync", counting_fsync)
    for _ in range(20):
        store.append_events(_events("R1", 50))
    assert len(writes) == 20  # one write per batch of 50
    assert syncs == []  # inside the interval: no fsync at all
    store.sync_events()
    assert len(syncs) == 1
    store.sync_events()
    assert len(syncs) == 1  # nothing new to make durable

    eager = ControlStore(store.state_root, events_fsync_interval_s=0)
    eager.append_events(_events("R1", 5))
    assert len(syncs) == 2
    assert len(store.read_events()[0]) == 1005


def test_from_current_starts_after_the_last_complete_line(store: ControlStore) -> None:
    assert store.events_end_offset() == 0
    store.prepare_event_stream("R1")
    store.append_events(_events("R1", 3))
    end = store.events_end_offset()
    assert end == store.events_path.stat().st_size
    with store.events_path.open("ab") as f:
        f.write(b'{"kind":"half')
    assert store.events_end_offset() == end
    with store.events_path.open("ab") as f:
        f.write(b'"}\n')
    store.append_event({"kind": "result", "ok": True})
    events, _ = store.read_events(end)
    assert events == [{"kind": "half"}, {"kind": "result", "ok": True}]
