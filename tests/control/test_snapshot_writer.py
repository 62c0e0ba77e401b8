"""The plane's snapshot is replaced by the store's kept writer thread: a reader in
the runner's process waits for the newest one, ``finish`` leaves the last one on
disk before it returns, and a plain ``write_snapshot`` never lets an older
deferred one land after it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from prompt_runner.control import runs
from prompt_runner.control.plane import ControlPlane
from prompt_runner.control.store import ControlStore
from prompt_runner.providers.events import Event
from prompt_runner.render.text import Console


def _plane(root: Path) -> ControlPlane:
    return ControlPlane(root, run_id="R1", packet="demo", console=Console(None), notify=False)


def test_a_reader_in_the_runners_process_sees_each_boundarys_snapshot(tmp_path: Path) -> None:
    (tmp_path / "prompt_runner_packet.md").write_text("---\nname: demo\n---\n")
    root = tmp_path / ".prompt_runner"
    plane = _plane(root)
    plane.start()
    reader = ControlStore(root)  # another store instance, as control status has
    try:
        for n in range(1, 101):
            plane.on_event(f"p{n}", Event("tool_use", {"tool": "Bash"}, at_ms=n))
            plane.boundary(f"p{n}")
            snap = reader.read_snapshot() or {}
            assert (snap["prompt_id"], snap["tool_count"]) == (f"p{n}", n)
        # the client's reader (control status) waits too
        assert runs.snapshot(tmp_path)["prompt_id"] == "p100"
    finally:
        plane.finish("completed")


def test_finish_leaves_the_last_snapshot_on_disk_and_no_writer_thread(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    plane = _plane(root)
    plane.start()
    for n in range(1, 51):
        plane.on_event("01", Event("tool_use", {"tool": "Bash"}, at_ms=n))
        plane.boundary("01", next_mode="retry")
    plane.finish("completed")
    # a plain read, as another process reads it: nothing waits here
    snap = json.loads((root / "control" / "snapshot.json").read_bytes())
    assert (snap["status"], snap["tool_count"], snap["event_count"]) == ("completed", 50, 50)
    assert not [t for t in threading.enumerate() if t.name == "replace snapshot.json"]
    assert not [p.name for p in (root / "control").iterdir() if ".tmp." in p.name]


def test_a_plain_write_lands_after_every_deferred_one(tmp_path: Path) -> None:
    store = ControlStore(tmp_path)
    store.init()
    for n in range(200):
        store.write_snapshot({"n": n}, deferred=True)
    store.write_snapshot({"n": "plain"})
    assert json.loads(store.snapshot_path.read_bytes())["n"] == "plain"
    store.close()
    assert json.loads(store.snapshot_path.read_bytes())["n"] == "plain"
