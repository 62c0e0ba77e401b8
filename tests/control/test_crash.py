"""SIGKILL real writer processes mid-work: nothing half-written is ever visible (SPEC 5)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from prompt_runner.control.store import ControlStore

WORKER = Path(__file__).with_name("_worker.py")


def _run_then_kill(args: list[str], ready: object, kill_after_s: float) -> None:
    proc = subprocess.Popen([sys.executable, str(WORKER), *args])
    try:
        deadline = time.monotonic() + 30
        while not ready() and time.monotonic() < deadline:  # type: ignore[operator]
            assert proc.poll() is None, "worker died on its own"
            time.sleep(0.01)
        time.sleep(kill_after_s)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def test_a_killed_writer_leaves_only_whole_requests(tmp_path: Path) -> None:
    store = ControlStore(tmp_path / "root")
    for kill_after in (0.0, 0.013, 0.031, 0.057, 0.1):
        before = len(store.pending_names())
        _run_then_kill(
            ["big_requests", str(store.state_root), str(700_000)],
            lambda n=before: len(store.pending_names()) > n,  # type: ignore[misc]
            kill_after,
        )
    items = store.pending_requests()
    assert len(items) >= 5
    assert all(i.ok and len(i.payload["params"]["text"]) == 700_000 for i in items)  # type: ignore[index]
    # A killed writer may leave its temp file, never a partial request.
    orphans = os.listdir(store.tmp_dir)
    assert len(orphans) <= 5
    old = time.time() - 3600
    for name in orphans:
        os.utime(store.tmp_dir / name, (old, old))
    store.init()
    assert os.listdir(store.tmp_dir) == []


def test_a_killed_log_writer_never_loses_or_glues_a_line(tmp_path: Path) -> None:
    root = tmp_path / "root"
    log_path = ControlStore(root).log_path
    for kill_after in (0.0, 0.02, 0.05):
        before = _size(log_path)
        _run_then_kill(
            ["log_appender", str(root), str(300_000)],
            lambda n=before: _size(log_path) > n,  # type: ignore[misc]
            kill_after,
        )
        store = ControlStore(root)  # the next open
        store.append_log({"n": "marker"})
    entries = store.read_log()
    assert entries[-1] == {"n": "marker"}
    # Every line is a whole record; each run counted 0, 1, 2 ... with no gap.
    runs: list[list[int]] = [[]]
    for entry in entries:
        if entry["n"] == "marker":
            runs.append([])
        else:
            assert entry["pad"] == "y" * 300_000
            runs[-1].append(entry["n"])
    assert [r == list(range(len(r))) for r in runs[:-1]] == [True, True, True]
    assert store.log_path.read_bytes().endswith(b"\n")
