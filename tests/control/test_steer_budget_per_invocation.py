"""``recovery.max_steers`` is counted per invocation of a prompt, as the retry and
repair budgets are: a resumed run that executes a prompt again -- after it failed,
or after its runner was killed -- gives it a fresh steer budget, and a steer queued
for it meanwhile is delivered; within one invocation the budget still holds.
``steer_count`` stays the run's total."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prompt_runner.control import client
from tests.control._helpers import (
    FAST,
    NOREPAIR,
    current_run_id,
    log,
    make_packet,
    prompt_record,
    run_file,
    when_session_runs,
)
from tests.helpers.cli import cli

MAX_STEERS = 2


def _packet(tmp_path: Path, *, delay_ms: int, resume: dict[str, Any]) -> Path:
    """01: sessions that write nothing (the contract wants NOTES.md); a steer's
    resumed turn runs ``resume``; at most MAX_STEERS steers per invocation."""
    return make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"delay_ms": delay_ms}] * 3, "resume": resume},
                "verify": {"files_exist": ["NOTES.md"]},
            }
        },
        manifest={"recovery": {**FAST, **NOREPAIR, "max_steers": MAX_STEERS}},
    )


def _steers(packet: Path) -> list[dict[str, Any]]:
    return [e for e in log(packet) if e["command"] == "steer"]


def _interventions(packet: Path) -> list[dict[str, Any]]:
    path = packet / ".prompt_runner" / "interventions" / "01.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _queue(packet: Path, text: str) -> None:
    """``control steer`` while no runner is live: queued for the unfinished run."""
    queued = cli("control", "steer", packet, text)
    assert queued.returncode == 0, queued.stdout + queued.stderr
    assert "Steer queued" in queued.stdout


def test_a_prompt_run_again_after_failing_gets_a_fresh_steer_budget(tmp_path: Path) -> None:
    packet = _packet(tmp_path, delay_ms=20000, resume={"messages": ["noted"]})
    texts = ["live 0", "live 1", "live 2"]
    thread = when_session_runs(packet, lambda: [client.steer(packet, t) for t in texts])
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 1, out  # NOTES.md never written: 01 failed
    run_id = current_run_id(packet)
    # within the live invocation the budget holds: the steer past it is refused
    assert [e["outcome"] for e in _steers(packet)] == ["applied"] * MAX_STEERS + ["rejected"]
    assert "budget spent" in _steers(packet)[-1]["reason"]
    assert prompt_record(packet)["steer_count"] == MAX_STEERS

    for text in ("after the failure", "second after", "one too many"):
        _queue(packet, text)
    resumed = cli("run", packet, "--remaining", "--no-commit")
    assert current_run_id(packet) == run_id  # the same run, resumed
    assert "interrupting to steer" in resumed.stdout, resumed.stdout + resumed.stderr

    # the resumed invocation of 01 has its own MAX_STEERS: the queued steers are
    # delivered, up to the budget, and the one past it is refused
    later = _steers(packet)[MAX_STEERS + 1 :]
    assert [e["outcome"] for e in later] == ["applied"] * MAX_STEERS + ["rejected"], later
    assert [e["prompt_id"] for e in later] == ["01"] * 3
    assert "budget spent: 2 of max_steers 2 used on 01" in later[-1]["reason"]
    assert [i["text"] for i in _interventions(packet)] == [
        "live 0",
        "live 1",
        "after the failure",
        "second after",
    ]
    state = prompt_record(packet)
    assert (state["steered"], state["steer_count"]) == (True, 2 * MAX_STEERS)  # the run's total


def _wait_for(
    predicate: Any, what: str, runner: subprocess.Popen[str], timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if runner.poll() is not None:
            raise AssertionError(f"the run ended before {what}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _live(packet: Path) -> bool:
    try:
        snap = json.loads((packet / ".prompt_runner" / "control" / "snapshot.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(snap.get("status") == "running" and snap.get("event_count", 0) > 0)


def _delivered(packet: Path, count: int) -> bool:
    try:
        return len(_interventions(packet)) >= count
    except (OSError, ValueError):
        return False


def test_a_prompt_resumed_after_a_crash_gets_a_fresh_steer_budget(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        delay_ms=8000,
        resume={"delay_ms": 3000, "writes": [{"path": "NOTES.md", "text": "steered"}]},
    )
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        _wait_for(lambda: _live(packet), "01's session ran", runner)
        for i in range(MAX_STEERS):
            client.steer(packet, f"before the crash {i}")
        # the budget's steers delivered, the last one's resumed turn still running: kill -9
        _wait_for(lambda: _delivered(packet, MAX_STEERS), "the steers were delivered", runner)
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.wait()
    assert not (packet.parent / "repo" / "NOTES.md").exists()  # killed before the work was done
    assert [e["outcome"] for e in _steers(packet)] == ["applied"] * MAX_STEERS

    _queue(packet, "after the crash")
    resumed = cli("run", packet, "--remaining", "--no-commit")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr

    last = _steers(packet)[-1]
    assert (last["outcome"], last["prompt_id"], last["reason"]) == ("applied", "01", None)
    assert [i["text"] for i in _interventions(packet)][-1] == "after the crash"
    state = prompt_record(packet)
    assert state["status"] == "completed"  # the steer's resumed turn wrote NOTES.md
    assert state["steer_count"] == MAX_STEERS + 1
