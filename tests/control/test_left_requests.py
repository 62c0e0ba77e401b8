"""A request no session of the run could take still gets its one receipt: the
run refuses it as it ends, and the control log holds it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_a_steer_for_a_killed_run_is_refused_when_the_resumed_run_ends(tmp_path: Path) -> None:
    # Its contract already passes (README.md is in the repo): the resumed run's
    # verification first completes it with no session to steer.
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"delay_ms": 20_000}]},
                "verify": {"files_exist": ["README.md"]},
            }
        },
    )
    state_dir = packet / ".prompt_runner"
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (state_dir / "control" / "snapshot.json").exists():
            assert time.monotonic() < deadline, "the run never started its plane"
            time.sleep(0.05)
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.wait()
    steer = cli("control", "steer", packet, "look at the tests")
    assert steer.returncode == 0, steer.stdout + steer.stderr
    resumed = cli("run", packet, "--remaining", "--no-commit")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    status = cli("control", "status", packet, "--json")
    assert json.loads(status.stdout)["pending_requests"] == 0, status.stdout
    log = [
        json.loads(line) for line in (state_dir / "control" / "log.jsonl").read_text().splitlines()
    ]
    steers = [e for e in log if e.get("command") == "steer"]
    assert len(steers) == 1
    assert steers[0]["outcome"] == "rejected"
    assert steers[0]["reason"] == "the run ended before a session could take it"
    assert not list((state_dir / "control" / "requests").glob("*.json"))
