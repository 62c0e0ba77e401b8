"""``watch`` never presents a dead runner's pid as the runner's: after a kill -9
the stale ``run.pid`` stays, and ``watch --once --json`` printed its pid beside
``runner: down`` (a new user's finding). ``pid`` is the live runner's or null,
in ``watch --once --json`` and in the bounded watch's samples. A real run, a
real SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from prompt_runner.api_watch import watch_sample
from tests.helpers.cli import cli
from tests.supervise._helpers import slow_packet


def _killed_run(tmp_path: Path) -> tuple[Path, int]:
    """A packet whose runner was killed (SIGKILL) mid-prompt: its run.pid stays."""
    packet = slow_packet(tmp_path, ids=("01",), delay_ms=20_000)
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            live = json.loads(cli("watch", packet, "--once", "--json").stdout)
            if live["runner"] == "up":
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the runner never came up")
        assert live["pid"] == runner.pid and live["last_pid"] is None  # a live runner's
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.wait()
    assert (packet / ".prompt_runner" / "run.pid").is_file()  # stale: nobody removed it
    return packet, runner.pid


def test_a_dead_runners_pid_is_not_shown_as_the_runners(tmp_path: Path) -> None:
    packet, killed = _killed_run(tmp_path)
    once = cli("watch", packet, "--once", "--json")
    assert once.returncode == 0, once.stderr
    sample = json.loads(once.stdout)
    assert sample["runner"] == "down" and sample["pid"] is None
    assert sample["last_pid"] == killed  # the stale run.pid's, named for what it is
    text = cli("watch", packet, "--once")
    assert "runner=DOWN" in text.stdout
    typed = watch_sample(packet)
    assert typed.pid is None and typed.last_pid == killed
    bounded = cli("watch", packet, "--for", "1s", "--every", "1s", "--json")
    *samples, _report = [json.loads(line) for line in bounded.stdout.splitlines()]
    assert samples
    assert all(s["runner"] == "down" and s["pid"] is None for s in samples)
    assert all(s["last_pid"] == killed for s in samples)
