"""Stress: 8 racing writers, a consumer SIGKILLed 10 times, a snapshot reader (SPEC 5).

Proves with real processes: no request lost, none decided twice, every
request receipted exactly once, per-writer arrival order kept, and a reader
polling ``snapshot.json`` never sees a half-written file.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from prompt_runner.control.store import ControlStore

WORKER = Path(__file__).with_name("_worker.py")
WRITERS = 8
PER_WRITER = 500
KILLS = 10


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    # stderr is inherited: pytest shows it on failure, and killed workers leak no pipes.
    return subprocess.Popen([sys.executable, str(WORKER), *args])


def _wait_until(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def _pending(store: ControlStore) -> list[str]:
    return os.listdir(store.requests_dir)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_racing_writers_and_a_repeatedly_killed_consumer_lose_and_repeat_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "state"
    store = ControlStore(root)
    store.init()
    stop = tmp_path / "stop"
    reader_out = tmp_path / "reader.json"
    rng = random.Random(os.environ.get("STRESS_SEED", "control"))

    consumer = _spawn("consumer", str(root), str(stop), "16384")
    reader = _spawn("reader", str(root), str(stop), str(reader_out))
    writer_outs = [tmp_path / f"writer-{i}.json" for i in range(WRITERS)]
    writers = [
        _spawn("writer", str(root), str(i), str(PER_WRITER), str(writer_outs[i]))
        for i in range(WRITERS)
    ]
    log_size = 0
    in_window = {"logged, no receipt": 0, "receipt, request kept": 0}
    try:
        for _ in range(KILLS):
            # Kill only once this consumer is deciding requests (or nothing is left):
            # it starts on a backlog, so the kill lands mid-decision.
            assert _wait_until(
                lambda size=log_size: (
                    _size(store.log_path) > size
                    or (all(w.poll() is not None for w in writers) and not _pending(store))
                ),
                60,
            )
            time.sleep(rng.uniform(0, 0.02))
            consumer.send_signal(signal.SIGKILL)
            consumer.wait()
            assert consumer.returncode == -signal.SIGKILL
            logged = {entry["request"] for entry in store.read_log()}
            for name in _pending(store):
                if store.request_outcome_path(name).exists():
                    in_window["receipt, request kept"] += 1
                elif name in logged:
                    in_window["logged, no receipt"] += 1
            log_size = _size(store.log_path)
            consumer = _spawn("consumer", str(root), str(stop), "16384")
        for w in writers:
            assert w.wait(timeout=120) == 0
        assert _wait_until(lambda: not _pending(store), 120), "requests left"
    finally:
        stop.touch()
        for proc in [consumer, reader, *writers]:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert consumer.returncode == 0
    assert reader.returncode == 0
    # The kills really landed between the commit point and the receipt.
    assert in_window["logged, no receipt"] >= 1, in_window

    # Nothing lost, nothing decided twice.
    log = store.read_log()
    ids = Counter(entry["id"] for entry in log)
    expected = {f"w{w}-{i}" for w in range(WRITERS) for i in range(PER_WRITER)}
    assert set(ids) == expected
    assert [i for i, n in ids.items() if n != 1] == []
    assert all(entry["outcome"] == "applied" for entry in log)

    # Exactly one receipt per request, matching its log entry.
    names = [n for out in writer_outs for n in json.loads(out.read_text(encoding="utf-8"))]
    assert len(names) == len(set(names)) == WRITERS * PER_WRITER
    receipts = sorted(n for n in os.listdir(store.outcomes_dir) if not n.startswith("."))
    assert receipts == sorted(names)
    by_name = {entry["request"]: entry for entry in log}
    for name in rng.sample(names, 200):
        assert store.read_outcome(name) == by_name[name]

    # Arrival order: each writer's requests were decided in the order it wrote them.
    for w in range(WRITERS):
        seq = [int(e["id"].split("-")[1]) for e in log if e["id"].startswith(f"w{w}-")]
        assert seq == sorted(seq)

    # Transport directories drained; nobody killed a writer, so no tmp orphans.
    assert os.listdir(store.requests_dir) == []
    assert os.listdir(store.tmp_dir) == []

    # The reader never saw half a snapshot.
    result = json.loads(reader_out.read_text(encoding="utf-8"))
    assert result["failures"] == 0, result["examples"]
    assert result["reads"] > 100
    assert store.read_snapshot() is not None
