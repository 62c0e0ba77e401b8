"""Verify commands end with the runner (issue 12.11).

Real ``prompt-runner run`` / ``verify`` subprocesses, a real verify command
(python that writes its pid, starts a grandchild and sleeps), real signals.
Ctrl-C and SIGTERM end the command's whole process group; after ``kill -9``
the command is registered under ``.prompt_runner/agents/`` and the next run
stops it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet
from tests.helpers.procs import alive, wait_for

HANGS = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
"""


class Hanging:
    """A packet whose prompt 01 is verified by a command that hangs (pids in ``pidfile``)."""

    def __init__(self, tmp_path: Path, started: list[int]) -> None:
        self.pidfile = tmp_path / "verify.pids"
        self.started = started
        command: dict[str, object] = {
            "exec": sys.executable,
            "args": ["-c", HANGS, str(self.pidfile)],
        }
        command["timeout_ms"] = 600_000
        self.packet = make_packet(tmp_path, {"01": {"verify": {"commands": [command]}}})
        self.agents = self.packet / ".prompt_runner" / "agents"

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", *args, str(self.packet)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def pids(self) -> list[int]:
        assert wait_for(self.pidfile.exists), "the verify command never started"
        pids = [int(p) for p in self.pidfile.read_text().split()]
        self.started.extend(pids)
        self.pidfile.unlink()
        return pids


@pytest.mark.parametrize(
    ("command", "signum"),
    [("run", signal.SIGTERM), ("run", signal.SIGINT), ("verify", signal.SIGTERM)],
)
def test_a_signal_to_the_runner_ends_the_verify_command_s_group(
    tmp_path: Path, started: list[int], command: str, signum: signal.Signals
) -> None:
    setup = Hanging(tmp_path, started)
    runner = setup.start(command)
    pids = setup.pids()
    assert all(alive(p) for p in pids)
    runner.send_signal(signum)
    out, err = runner.communicate(timeout=30)
    assert runner.returncode == 128 + signum, out + err
    assert wait_for(lambda: not any(alive(p) for p in pids), 10), f"survivors: {pids}"
    assert not setup.agents.is_dir() or not list(setup.agents.glob("*.json"))


@pytest.mark.parametrize("command", ["run", "verify"])
def test_after_kill_9_the_next_run_stops_the_verify_command(
    tmp_path: Path, started: list[int], command: str
) -> None:
    setup = Hanging(tmp_path, started)
    runner = setup.start(command)
    pids = setup.pids()
    # the runner registers the command just after it starts it: the command may
    # write its pids first (a race of the test's, seen under load), so wait for it
    assert wait_for(lambda: len(list(setup.agents.glob("*.json"))) == 1, 10)
    [record_path] = list(setup.agents.glob("*.json"))
    record = json.loads(record_path.read_text())
    assert record["pid"] == pids[0] and record["kind"] == "verify command"
    runner.kill()
    runner.communicate(timeout=30)
    assert all(alive(p) for p in pids)  # its own session: SIGKILL of the runner spares it

    again = setup.start("run")
    assert wait_for(lambda: not any(alive(p) for p in pids[:2]), 30), f"survivors: {pids}"
    new = setup.pids()  # the next run's own verify command, which hangs in turn
    again.send_signal(signal.SIGTERM)
    out, _ = again.communicate(timeout=30)
    assert f"stopped verify command pid {pids[0]} (prompt 01" in out, out
    assert wait_for(lambda: not any(alive(p) for p in new), 10)


def test_a_live_verify_s_command_is_left_alone_by_a_run(tmp_path: Path, started: list[int]) -> None:
    """``verify`` holds no lock: a run starting next to it must not stop its command."""
    setup = Hanging(tmp_path, started)
    verifying = setup.start("verify")
    pids = setup.pids()
    # A run of the same packet, selecting a prompt that has no commands:
    (setup.packet / "prompts" / "02_step.prompt.md").write_text(
        "---\nid: '02'\nphase: 1\nname: Step 02\ntargets: [app]\n---\n# Step 02\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(setup.packet), "02", "--no-commit"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stopped verify command" not in done.stdout
    assert all(alive(p) for p in pids)
    verifying.send_signal(signal.SIGTERM)
    verifying.communicate(timeout=30)
    assert wait_for(lambda: not any(alive(p) for p in pids), 10)


def test_verify_leaves_no_state_behind(tmp_path: Path) -> None:
    command = {"exec": sys.executable, "args": ["-c", "pass"], "timeout_ms": 30_000}
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": [command]}}})
    done = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "verify", str(packet)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (packet / ".prompt_runner").exists()
