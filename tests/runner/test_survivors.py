"""Agents a SIGKILLed runner left running are stopped by the next run, whatever it selects.

The runner is ``prompt-runner run`` in a real subprocess, its agent a fake
``claude`` CLI (tests/helpers/fake_cli.py) that hangs, ignores SIGTERM and
has a grandchild. After ``kill -9`` of the runner the agent's process group
survives (it has its own group) and is registered under
``.prompt_runner/agents/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from prompt_runner import api
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import NOREPAIR, make_packet

INIT = json.dumps({"type": "system", "subtype": "init", "session_id": "s-1", "model": "m"})
RESULT = json.dumps(
    {"type": "result", "subtype": "success", "is_error": False, "session_id": "s-1"}
)
HANG = {"stdout": INIT + "\n", "hang": True, "ignore_sigterm": True, "grandchild": True}


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until_gone(pids: list[int], seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[list[int]]:
    """Whatever the outcome, no agent of a test outlives it."""
    started: list[int] = []
    yield started
    for pid in started:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()


class Setup:
    """A packet whose prompt 01 (contract: README.md exists) runs on a fake claude."""

    def __init__(self, tmp_path: Path, started: list[int]) -> None:
        self.started = started
        self.bin = tmp_path / "bin"
        install_fake_cli(self.bin, "claude")
        self.record = tmp_path / "record.jsonl"
        self.config = tmp_path / "fake.json"
        self.packet = make_packet(
            tmp_path,
            {"01": {"verify": {"files_exist": ["README.md"]}}},
            manifest={"profile": None, "provider": "claude", "model": None, "recovery": NOREPAIR},
        )
        self.agents = self.packet / ".prompt_runner" / "agents"

    def env(self, runs: list[dict[str, Any]]) -> dict[str, str]:
        write_config(self.config, self.record, runs)
        env = dict(os.environ)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env[CONFIG_ENV] = str(self.config)
        return env

    def cli(self, *args: str, runs: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "prompt_runner", *args],
            env=self.env(runs),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def start_and_kill(self, *args: str) -> list[int]:
        """Start ``run PACKET ARGS`` on a hanging agent, SIGKILL the runner once the
        agent is registered; return the agent's pid and its grandchild's."""
        before = len(read_records(self.record))
        proc = subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(self.packet), *args],
            env=self.env([HANG]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            pids: list[int] = []
            while time.monotonic() < deadline:
                records = read_records(self.record)[before:]
                if records and "grandchild_pid" in records[0] and list(self.agents.glob("*.json")):
                    pids = [records[0]["pid"], records[0]["grandchild_pid"]]
                    self.started.extend(pids)
                    break
                assert proc.poll() is None, "the runner ended before its agent was registered"
                time.sleep(0.05)
            assert pids, "the agent never started"
        finally:
            proc.kill()
            proc.wait(timeout=30)
        time.sleep(0.2)
        assert all(alive(p) for p in pids), "the agent should outlive a SIGKILLed runner"
        return pids


def test_run_remaining_that_selects_nothing_stops_the_agent_of_a_killed_rerun(
    tmp_path: Path, no_leftovers: list[int]
) -> None:
    """A run that re-ran completed prompt 01 by id is killed with SIGKILL; the
    next ``run --remaining`` runs 01 again (its re-run was interrupted, so it is
    not completed) -- and must first stop the agent it left running."""
    s = Setup(tmp_path, no_leftovers)
    first = s.cli("run", str(s.packet), "--no-commit", runs=[{"stdout": f"{INIT}\n{RESULT}\n"}])
    assert first.returncode == 0, first.stdout + first.stderr
    pids = s.start_and_kill("01", "--no-commit")

    again = s.cli("run", str(s.packet), "--remaining", "--no-commit", runs=[HANG])
    assert again.returncode == 0, again.stdout + again.stderr
    assert "re-ran it and was interrupted: --remaining runs it again" in again.stdout
    assert f"stopped agent pid {pids[0]} (prompt 01" in again.stdout
    assert wait_until_gone(pids) == []
    assert list(s.agents.glob("*.json")) == []


def test_a_library_run_without_a_lock_stops_survivors_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_leftovers: list[int]
) -> None:
    """The API default (memory store, no commits) takes no run lock; it takes it
    just to stop registered survivors, whatever it selects."""
    s = Setup(tmp_path, no_leftovers)
    pids = s.start_and_kill("--no-commit")
    env = s.env([{"stdout": f"{INIT}\n{RESULT}\n"}])
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv(CONFIG_ENV, env[CONFIG_ENV])
    result = api.run(s.packet, ids=["01"])
    assert result.prompts == {"01": "completed"}
    assert wait_until_gone(pids) == []
    assert list(s.agents.glob("*.json")) == []
    assert not (s.packet / ".prompt_runner" / "run.pid").exists()


def test_a_run_that_selects_nothing_clears_a_dead_runners_pid_file(tmp_path: Path) -> None:
    """A runner killed after its last prompt left ``run.pid``; the next
    ``run --remaining`` (nothing left) takes the stale lock over and releases it."""
    packet = make_packet(tmp_path, {"01": {}})
    assert (
        subprocess.run(
            [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
            capture_output=True,
            timeout=120,
        ).returncode
        == 0
    )
    pid_file = packet / ".prompt_runner" / "run.pid"
    pid_file.write_text("2147483646 1\n")  # a pid no process has
    again = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--remaining"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0 and "Nothing remaining" in again.stdout, again.stderr
    assert not pid_file.exists()
