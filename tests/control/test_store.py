"""ControlStore: layout, requests, receipts, log, snapshot (SPEC 5, catalog G7)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from prompt_runner.control.requests import validate_request
from prompt_runner.control.store import MAX_REQUEST_BYTES, ControlStore, PendingRequest


@pytest.fixture
def store(tmp_path: Path) -> ControlStore:
    s = ControlStore(tmp_path / ".prompt_runner")
    s.init()
    return s


def _drop(store: ControlStore, name: str, content: bytes | str) -> Path:
    path = store.requests_dir / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


# -- layout ------------------------------------------------------------------------


def test_init_creates_the_spec_layout(store: ControlStore) -> None:
    control = store.state_root / "control"
    assert store.control_dir == control
    for sub in ("tmp", "requests", "outcomes", "events"):
        assert (control / sub).is_dir()
    assert store.log_path == control / "log.jsonl"
    assert store.snapshot_path == control / "snapshot.json"
    assert store.events_path == control / "events.jsonl"
    assert store.archived_events_path("R1") == control / "events" / "R1.jsonl"
    assert store.request_outcome_path("a.json") == control / "outcomes" / "a.json"


def test_outcome_path_refuses_anything_but_a_file_name(store: ControlStore) -> None:
    for bad in ("../x.json", "a/b.json", "", ".", ".."):
        with pytest.raises(ValueError):
            store.request_outcome_path(bad)


def test_init_sweeps_only_stale_temp_files(store: ControlStore) -> None:
    old = time.time() - 3600
    stale = [
        store.tmp_dir / "123-abc.tmp",
        store.outcomes_dir / ".receipt-1-ab.tmp",
        store.control_dir / ".snapshot.json-1-ab.tmp",
    ]
    fresh = store.tmp_dir / "456-def.tmp"
    receipt = store.outcomes_dir / "r.json"
    for p in [*stale, fresh, receipt]:
        p.write_text("{}", encoding="utf-8")
    for p in [*stale, receipt]:
        os.utime(p, (old, old))
    store.init()
    assert [p.exists() for p in stale] == [False, False, False]
    assert fresh.exists() and receipt.exists()


# -- write_request -----------------------------------------------------------------


def test_write_request_is_whole_named_in_order_and_leaves_no_temp(tmp_path: Path) -> None:
    store = ControlStore(tmp_path / "root")  # no init(): writers create what they need
    names = [
        store.write_request({"command": "steer", "params": {"text": str(i)}}) for i in range(50)
    ]
    assert names == sorted(names) and len(set(names)) == 50
    pattern = re.compile(rf"\d{{8}}-\d{{6}}-\d{{6}}-{os.getpid():07d}-[0-9a-f]{{8}}\.json")
    assert all(pattern.fullmatch(n) for n in names)
    assert os.listdir(store.tmp_dir) == []
    assert [p.payload for p in store.pending_requests()] == [
        {"command": "steer", "params": {"text": str(i)}} for i in range(50)
    ]


def test_write_request_refuses_an_oversized_request(store: ControlStore) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.write_request({"params": {"text": "x" * MAX_REQUEST_BYTES}})
    assert os.listdir(store.requests_dir) == [] and os.listdir(store.tmp_dir) == []


# -- pending_requests: bad input is returned, never raised ------------------------------


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("20260810-000000-000000-1.json", "{ not json", "unparseable"),
        ("20260810-000000-000000-2.json", "[1, 2]", "unparseable"),
        ("20260810-000000-000000-3.json", "", "unparseable"),
        ("20260810-000000-000000-4.json", b"\xff\xfe{}", "unparseable"),
        ("20260810-000000-000000-5.json", '"just a string"', "unparseable"),
        ("my request.json", "{}", "bad request name"),
        ("r\u00e9quest.json", "{}", "bad request name"),
        ("20260810-000000-000000-6", "{}", "bad request name"),
        (".hidden.json", "{}", "bad request name"),
        ("x" * 240 + ".json", "{}", "bad request name"),
    ],
)
def test_bad_requests_come_back_with_a_reason_and_can_be_receipted(
    store: ControlStore, name: str, content: bytes | str, error: str
) -> None:
    _drop(store, name, content)
    (item,) = store.pending_requests()
    assert item.name == name and item.error == error and item.payload is None
    assert not item.ok and item.detail
    store.complete_request(item.name, {"outcome": "rejected", "reason": item.error})
    assert store.read_outcome(name) == {"outcome": "rejected", "reason": error}
    assert os.listdir(store.requests_dir) == []
    assert store.pending_requests() == []


def test_a_10_mb_request_is_rejected_as_too_large(store: ControlStore) -> None:
    _drop(store, "20260810-000000-000000-1.json", b'{"a":"' + b"x" * (10 << 20) + b'"}')
    _drop(store, "20260810-000000-000000-2.json", b" " * (MAX_REQUEST_BYTES + 1))
    items = store.pending_requests()
    assert [(i.error, i.payload) for i in items] == [("too large", None)] * 2


def test_a_request_of_exactly_the_cap_is_read(store: ControlStore) -> None:
    body = b'{"command":"steer"}'
    _drop(store, "20260810-000000-000000-1.json", body + b" " * (MAX_REQUEST_BYTES - len(body)))
    (item,) = store.pending_requests()
    assert item.payload == {"command": "steer"}


def test_non_files_are_rejected_without_blocking_and_then_removed(store: ControlStore) -> None:
    (store.requests_dir / "20260810-000000-000000-1.json").mkdir()
    (store.requests_dir / "20260810-000000-000000-1.json" / "inner").write_text("x")
    os.mkfifo(store.requests_dir / "20260810-000000-000000-2.json")
    target = store.state_root / "elsewhere.json"
    target.write_text('{"command":"steer"}', encoding="utf-8")
    os.symlink(target, store.requests_dir / "20260810-000000-000000-3.json")
    items = store.pending_requests()
    assert [i.error for i in items] == ["not a regular file"] * 3
    for item in items:
        store.complete_request(item.name, {"outcome": "rejected"})
    assert os.listdir(store.requests_dir) == []
    assert target.exists()  # the link went, not what it pointed at
    assert store.pending_requests() == []


def test_undecodable_file_names_do_not_break_the_transport(store: ControlStore) -> None:
    raw = os.path.join(os.fsencode(store.requests_dir), b"bad\xffname.json")
    with open(raw, "wb") as f:
        f.write(b"{}")
    (item,) = store.pending_requests()
    assert item.error == "bad request name"
    store.complete_request(item.name, {"outcome": "rejected", "request": item.name})
    store.append_log({"request": item.name, "outcome": "rejected"})
    assert os.listdir(store.requests_dir) == []
    assert store.read_log()[0]["outcome"] == "rejected"


def test_catalog_g7_malformed_requests_in_arrival_order(store: ControlStore) -> None:
    files = {
        "20260810-000000-000000-1.json": "{ not json",
        "20260810-000000-000000-2.json": '{"params":{}}',
        "20260810-000000-000000-3.json": '{"command":"self_destruct","params":{}}',
        "20260810-000000-000000-4.json": (
            '{"command":"set_view","params":{"tool_output":"full"},"run_id":"20200101T000000Z-1"}'
        ),
        "20260810-000000-000000-5.json": (
            '{"command":"set_view","params":{"log_mode":"verbose"},"author":"ada"}'
        ),
    }
    for name in reversed(list(files)):  # creation order must not matter, names do
        _drop(store, name, files[name])
    for item in store.pending_requests():
        if item.payload is None:
            ok, reason = False, item.error or ""
        else:
            ok, reason = validate_request(item.payload, current_run_id="R-now")
        entry = {"request": item.name, "outcome": "applied" if ok else "rejected"}
        entry["reason"] = reason
        store.append_log(entry)
        store.complete_request(item.name, entry)
    log = store.read_log()
    assert [e["request"] for e in log] == list(files)
    assert [e["outcome"] for e in log] == ["rejected"] * 4 + ["applied"]
    assert log[0]["reason"] == "unparseable"
    assert "no command" in log[1]["reason"]
    assert log[2]["reason"] == "unknown command"
    assert "targets run" in log[3]["reason"]
    assert os.listdir(store.requests_dir) == []
    for name in files:
        outcome = store.read_outcome(name)
        assert outcome is not None and outcome["outcome"] in ("applied", "rejected")


# -- receipts ----------------------------------------------------------------------


def test_complete_request_never_overwrites_a_receipt(store: ControlStore) -> None:
    name = store.write_request({"command": "steer"})
    store.request_outcome_path(name).write_text('{"outcome":"applied"}', encoding="utf-8")
    store.complete_request(name, {"outcome": "rejected"})
    assert store.read_outcome(name) == {"outcome": "applied"}
    assert not (store.requests_dir / name).exists()
    assert [n for n in os.listdir(store.outcomes_dir)] == [name]  # no temp left


def test_pending_names_only_lists(store: ControlStore) -> None:
    assert ControlStore(store.state_root / "nowhere").pending_names() == []
    name = store.write_request({"command": "steer"})
    store.request_outcome_path(name).write_text("{}", encoding="utf-8")
    assert store.pending_names() == [name]
    assert (store.requests_dir / name).exists()


def test_a_receipted_request_is_acknowledged_not_returned(store: ControlStore) -> None:
    """Crash after the receipt, before the delete: the request is not applied again."""
    first = store.write_request({"command": "steer", "id": 1})
    second = store.write_request({"command": "steer", "id": 2})
    store.request_outcome_path(first).write_text('{"outcome":"applied"}', encoding="utf-8")
    assert [i.name for i in store.pending_requests()] == [second]
    assert sorted(os.listdir(store.requests_dir)) == [second]


def test_a_logged_request_is_receipted_from_its_log_entry(store: ControlStore) -> None:
    """Crash after the log line, before the receipt: receipted, not decided again."""
    name = store.write_request({"command": "steer", "id": 1})
    entry = {"request": name, "outcome": "applied", "author": "ada"}
    store.append_log(entry)
    fresh = ControlStore(store.state_root)  # the restarted consumer
    assert fresh.pending_requests() == []
    assert fresh.read_outcome(name) == entry
    assert os.listdir(store.requests_dir) == []
    assert store.pending_requests() == []  # the old instance agrees


def test_a_request_stays_pending_when_its_receipt_cannot_be_written(
    store: ControlStore,
) -> None:
    name = store.write_request({"command": "steer"})
    store.outcomes_dir.rmdir()
    store.outcomes_dir.write_text("not a directory", encoding="utf-8")
    with pytest.raises(OSError):
        store.complete_request(name, {"outcome": "applied"})
    assert (store.requests_dir / name).exists()


def test_pending_request_is_an_immutable_value() -> None:
    item = PendingRequest("a.json", {"command": "steer"})
    assert item.ok and item == PendingRequest("a.json", {"command": "steer"})
    with pytest.raises(AttributeError):
        item.name = "b.json"  # type: ignore[misc]


# -- log ---------------------------------------------------------------------------


def test_log_appends_and_streams_from_an_offset(store: ControlStore) -> None:
    assert store.read_log() == [] and store.read_log_from(0) == ([], 0)
    store.append_log({"n": 1})
    store.append_log({"n": 2})
    entries, offset = store.read_log_from(0)
    assert entries == [{"n": 1}, {"n": 2}] and offset == store.log_path.stat().st_size
    store.append_log({"n": 3})
    assert store.read_log_from(offset)[0] == [{"n": 3}]


def test_a_torn_log_line_is_moved_aside_not_glued(store: ControlStore) -> None:
    store.append_log({"n": 1})
    with store.log_path.open("ab") as f:
        f.write(b'{"n": 2, "trunc')
    # readers never return the torn line and never advance past it
    entries, offset = store.read_log_from(0)
    assert entries == [{"n": 1}] and offset == len(b'{"n":1}\n')
    ControlStore(store.state_root).append_log({"n": 3})  # the next open repairs
    assert store.read_log() == [{"n": 1}, {"n": 3}]
    assert store.log_path.read_bytes() == b'{"n":1}\n{"n":3}\n'
    (torn,) = store.control_dir.glob("log.jsonl.torn.*")  # one aside scheme: state/lines.py
    assert torn.read_bytes() == b'{"n": 2, "trunc'


def test_a_log_that_is_one_torn_line_is_emptied(store: ControlStore) -> None:
    store.log_path.write_bytes(b"x" * 100_000)
    store.append_log({"n": 1})
    assert store.log_path.read_bytes() == b'{"n":1}\n'


# -- snapshot -----------------------------------------------------------------------


def test_snapshot_round_trip_and_schema_version(store: ControlStore) -> None:
    assert store.read_snapshot() is None
    store.write_snapshot({"run_id": "R1", "status": "running"})
    store.write_snapshot({"run_id": "R1", "status": "completed"})
    assert store.read_snapshot() == {"run_id": "R1", "status": "completed", "schema_version": 1}
    assert sorted(os.listdir(store.control_dir)) == [
        "events",
        "outcomes",
        "requests",
        "snapshot.json",
        "tmp",
    ]


@pytest.mark.parametrize("content", ["{half", "[]", ""])
def test_a_damaged_snapshot_reads_as_missing_and_is_left_for_the_runner(
    store: ControlStore, content: str
) -> None:
    """The snapshot is a live view written without fsync (a power loss may leave
    it torn or empty): readers see no snapshot; the file is not deleted."""
    store.snapshot_path.write_text(content, encoding="utf-8")
    assert store.read_snapshot() is None
    assert store.snapshot_path.read_text(encoding="utf-8") == content


def test_receipts_and_requests_are_json_files(store: ControlStore) -> None:
    name = store.write_request({"command": "steer", "params": {"text": "h\u00e9"}})
    assert json.loads((store.requests_dir / name).read_text(encoding="utf-8"))["params"] == {
        "text": "h\u00e9"
    }
