"""A usage-limit wait and ``stop --after-prompt``, and one wait across a ``kill -9``
notified once (real subprocess runs with the fake ``claude`` of
``test_usage_limits``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import prompt_runner as api
from tests.runner.test_usage_limits import (
    NO_BUDGET,
    PROMPT,
    Run,
    claude_rejected,
    claude_success,
    until,
    waiting_until,
)


def _end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def test_stop_after_prompt_ends_a_usage_wait_at_once_keeping_it(tmp_path: Path) -> None:
    run = Run(tmp_path, [claude_rejected(300), claude_success()], PROMPT, {"recovery": NO_BUDGET})
    proc = run.start()
    try:
        shown = until(lambda: waiting_until(run))
        asked = time.monotonic()
        stop = run.cli("stop", str(run.packet), "--after-prompt", timeout=40)
        took = time.monotonic() - asked
        assert stop.returncode == 0, stop.stdout + stop.stderr
        assert took < 30  # not the 300 s of the window
        assert "waiting for a usage window" in stop.stdout + stop.stderr
        assert "current prompt to end" not in stop.stdout + stop.stderr
        proc.communicate(timeout=30)
        assert proc.returncode == 143
        state = run.status()
        assert state["waiting_until"] == shown  # the wait is kept for the next run
        assert run.prompt()["status"] == "interrupted"
    finally:
        _end(proc)


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_wait_resumed_after_kill_9_is_not_notified_started_twice(tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    hook = ["sh", "-c", f"cat >> '{notes}'; echo >> '{notes}'"]
    run = Run(
        tmp_path,
        [claude_rejected(60), claude_success()],
        PROMPT,
        {"recovery": {**NO_BUDGET, "usage_limit": {"max_wait": "2m"}}, "notify": {"command": hook}},
    )
    record = run.packet / ".prompt_runner" / "notifications.jsonl"
    proc = run.start()
    try:
        until(lambda: waiting_until(run))
        until(lambda: any(r["outcome"] == "delivered" for r in _lines(record)))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        again = run.start("--remaining")
        try:
            until(lambda: run.status().get("runner", {}).get("alive") and waiting_until(run))
            time.sleep(1.0)
            woke = run.cli("control", "wake", str(run.packet))
            assert woke.returncode == 0, woke.stdout + woke.stderr
            out, err = again.communicate(timeout=60)
            assert again.returncode == 0, out + err
        finally:
            _end(again)
    finally:
        _end(proc)
    kinds = [n["kind"] for n in _lines(notes)]
    assert kinds.count("usage_wait_started") == 1, kinds
    assert kinds.count("usage_wait_ended") == 1, kinds
    [ended] = [n for n in _lines(notes) if n["kind"] == "usage_wait_ended"]
    assert ended["details"]["resumed"] is True
    started = [e for e in api.control_events(run.packet) if e.get("kind") == "usage_wait_started"]
    assert started and started[-1].get("resumed") is True
