"""A resumed run's event_count goes on from the events its stream holds
(session 15, tester finding 5): after a kill -9 and `run --remaining` the
snapshot said 10 events while events.jsonl held 16 of that run."""

from __future__ import annotations

import json
from pathlib import Path

from prompt_runner.control.store import ControlStore
from prompt_runner.providers.events import Event
from tests.control.test_plane_notify import _plane


def _events_in_stream(root: Path) -> int:
    lines = ControlStore(root).events_path.read_bytes().splitlines()
    return sum(1 for line in lines if json.loads(line)["kind"] != "run_finished")


def _emit(root: Path, texts: list[str], *, finish: bool) -> int:
    plane = _plane(root, notify=False)  # run id r1 each time: the same run, resumed
    for text in texts:
        plane.on_event("01", Event("assistant_text", {"text": text}))
    plane.on_event("01", Event("tool_use", {"tool": "Read"}))
    plane.boundary("01", next_mode=None)  # flushed: on disk as a killed runner leaves it
    if finish:
        plane.finish("failed")
    else:  # killed: no run_finished record; its files closed, so no writer thread lives on
        plane.store.close()
    snapshot = ControlStore(root).read_snapshot()
    assert snapshot is not None
    count: int = snapshot["event_count"]
    return count


def test_each_invocation_of_a_run_counts_on_from_the_last(tmp_path: Path) -> None:
    assert _emit(tmp_path, ["a", "b", "c", "d"], finish=True) == 5 == _events_in_stream(tmp_path)
    assert _emit(tmp_path, ["e", "f"], finish=False) == 8 == _events_in_stream(tmp_path)
    # the killed invocation wrote no run_finished; the next one counts what it left
    assert _emit(tmp_path, ["g"], finish=True) == 10 == _events_in_stream(tmp_path)
    plane = _plane(tmp_path, notify=False)  # the snapshot a resumed run starts with
    snapshot = ControlStore(tmp_path).read_snapshot()
    assert snapshot is not None and snapshot["event_count"] == 10
    plane.finish("completed")


def test_the_count_reads_a_record_across_two_reads_once(tmp_path: Path) -> None:
    store = ControlStore(tmp_path)
    store.init()
    store.prepare_event_stream("r1")
    finished = json.dumps({"kind": "run_finished", "run_id": "r1"}, separators=(",", ":"))
    for split in (1, 10, len(finished) - 1):  # the record starts `split` bytes before 1 MiB
        pad = (1 << 20) - split - 1  # one event line of this many bytes and its newline
        event = '{"kind":"assistant_text","text":"' + "x" * (pad - 35) + '"}'
        assert len(event) == pad
        text = f"{event}\n{finished}\n" + '{"kind":"raw"}\n' + "{torn"
        store.events_path.write_text(text, encoding="utf-8")
        assert store.count_stream_events() == 2, split  # the event and the raw one
