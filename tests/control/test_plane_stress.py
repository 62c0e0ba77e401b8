"""The issue's stress acceptance with the real runner.

Eight writer processes submit requests while a real ``prompt-runner run``
consumes them, and the runner is ``kill -9``ed at random moments and restarted
with ``run --remaining``. At the end every request has exactly one receipt and
exactly one log entry (none applied twice, none lost), and a reader polling
``snapshot.json`` in a tight loop never saw a partial file.
"""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.control._helpers import control, make_packet

WRITERS = 8
PER_WRITER = int(os.environ.get("PR_STRESS_REQUESTS", "500"))
KILLS = int(os.environ.get("PR_STRESS_KILLS", "10"))
PROMPTS = 40


def _packet(root: Path) -> Path:
    prompts = {
        f"{i:02d}": {
            "simulate": {
                "attempts": [{"delay_ms": 300, "writes": [{"path": f"f{i:02d}.txt", "text": "x"}]}]
            },
            "verify": {"files_exist": [f"f{i:02d}.txt"]},
        }
        for i in range(1, PROMPTS + 1)
    }
    return make_packet(root, prompts)


def _runner(packet: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_requests_survive_kill_9_of_the_runner_exactly_once(tmp_path: Path) -> None:
    rng = random.Random(5)
    packet = _packet(tmp_path)
    store = control(packet)
    state_root = packet / ".prompt_runner"
    store.init()
    torn: list[str] = []
    reads = [0]
    stop = threading.Event()

    def poll_snapshot() -> None:
        while not stop.is_set():
            try:
                data = store.snapshot_path.read_bytes()
            except FileNotFoundError:
                continue
            try:
                json.loads(data)
                reads[0] += 1
            except ValueError:
                torn.append(data[:200].decode("utf-8", "replace"))

    reader = threading.Thread(target=poll_snapshot, daemon=True)
    reader.start()
    writer_script = Path(__file__).with_name("_writer.py")
    outs = [tmp_path / f"w{i}.json" for i in range(WRITERS)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                str(writer_script),
                str(state_root),
                str(i),
                str(PER_WRITER),
                str(out),
            ],
            env=env,
        )
        for i, out in enumerate(outs)
    ]
    runner = _runner(packet)
    kills = 0
    try:
        while kills < KILLS:
            time.sleep(rng.uniform(0.4, 1.8))
            if runner.poll() is None:
                runner.send_signal(signal.SIGKILL)
                kills += 1
            runner.wait()
            runner = _runner(packet, "--remaining")
        for w in writers:
            assert w.wait(timeout=300) == 0
        runner.wait(timeout=300)
        for _ in range(20):  # drain what arrived after the last runner looked
            if not store.pending_names():
                break
            runner = _runner(packet, "--remaining")
            runner.wait(timeout=300)
            if store.pending_names():
                runner = _runner(packet, "01")  # everything completed: a new run drains
                runner.wait(timeout=300)
    finally:
        stop.set()
        for proc in [runner, *writers]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join()

    names = [name for out in outs for name in json.loads(out.read_text())]
    assert len(names) == WRITERS * PER_WRITER == len(set(names))
    assert store.pending_names() == []
    receipts = set(os.listdir(store.outcomes_dir))
    assert set(names) <= receipts
    counts = collections.Counter(e.get("request") for e in store.read_log())
    assert [n for n in names if counts[n] != 1] == []  # decided exactly once, none lost
    assert all(store.read_outcome(n)["outcome"] == "applied" for n in names[::97])  # type: ignore[index]
    assert kills == KILLS
    assert torn == [] and reads[0] > 0
