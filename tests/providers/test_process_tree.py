"""No agent process survives the runner: timeout, Ctrl-C and SIGTERM, through the real CLI.

The fake ``claude`` ignores SIGTERM and starts a grandchild that ignores it
too, then hangs. ``prompt-runner run`` is started as a subprocess on a packet
whose provider is ``claude``; after the session times out, or the runner gets
SIGINT (Ctrl-C) or SIGTERM, the runner must exit and no process of the agent's
tree may remain (checked with psutil, by pid and by the fake CLI's private
environment marker).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import NOREPAIR, make_packet

INIT = json.dumps(
    {"type": "system", "subtype": "init", "session_id": "tree-1", "model": "m", "cwd": "/"}
)
NO_RECOVERY = {
    "resume_attempts": 0,
    "retry": {
        "max_attempts": 0,
        "class_attempts": {"transport_timeout": 1},
        "base_delay_ms": 0,
        "max_delay_ms": 0,
        "jitter": False,
    },
    **NOREPAIR,
}


def start_runner(tmp_path: Path, timeout_ms: int) -> tuple[subprocess.Popen[str], Path, str]:
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    record = tmp_path / "record.jsonl"
    config = write_config(
        tmp_path / "fake.json",
        record,
        [{"stdout": INIT + "\n", "hang": True, "ignore_sigterm": True, "grandchild": True}],
    )
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={
            "profile": None,
            "provider": "claude",
            "model": None,
            "timeout": timeout_ms,
            "recovery": NO_RECOVERY,
        },
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return proc, record, str(config)


def wait_for_tree(record: Path, proc: subprocess.Popen[str]) -> tuple[int, int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        records = read_records(record)
        if records and "grandchild_pid" in records[0]:
            pid, grandchild = records[0]["pid"], records[0]["grandchild_pid"]
            if psutil.pid_exists(grandchild):
                return pid, grandchild
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.05)
    raise AssertionError("the fake CLI never started its grandchild")


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def leftovers(marker: str) -> list[int]:
    """Live processes whose environment carries this test's fake-CLI config."""
    found = []
    for p in psutil.process_iter(["pid"]):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and p.environ().get(CONFIG_ENV) == marker:
                found.append(p.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def assert_tree_gone(pids: tuple[int, int], marker: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (any(alive(p) for p in pids) or leftovers(marker)):
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)], "an agent process survived the runner"
    assert leftovers(marker) == []


def test_timeout_reaps_a_sigterm_ignoring_cli_and_its_grandchild(tmp_path: Path) -> None:
    proc, record, marker = start_runner(tmp_path, timeout_ms=1500)
    pids = wait_for_tree(record, proc)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0, output
    assert output.count("transport_timeout: the run deadline of 1500 ms passed") == 2, output
    assert len(read_records(record)) == 2  # the retry started a second tree
    assert_tree_gone(pids, marker)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_on_the_runner_reaps_the_tree(tmp_path: Path, sig: int) -> None:
    proc, record, marker = start_runner(tmp_path, timeout_ms=600_000)
    pids = wait_for_tree(record, proc)
    started = time.monotonic()
    proc.send_signal(sig)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0, output
    assert time.monotonic() - started < 30
    assert_tree_gone(pids, marker)


def test_an_agent_left_by_a_killed_runner_is_stopped_by_the_next_run(tmp_path: Path) -> None:
    """kill -9 cannot be caught: the agent (its own process group) survives the
    runner. The next run holds the lock, finds the registered agent still
    running (same pid and start time), stops its whole group and says so,
    before any session of its own."""
    proc, record, marker = start_runner(tmp_path, timeout_ms=600_000)
    pids = wait_for_tree(record, proc)
    agents = tmp_path / "demo" / ".prompt_runner" / "agents"
    deadline = time.monotonic() + 10
    while not list(agents.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p.name for p in agents.glob("*.json")] == [f"{pids[0]}.json"]
    proc.kill()
    proc.communicate(timeout=30)
    time.sleep(0.3)
    assert all(alive(p) for p in pids), "the agent should have outlived a SIGKILLed runner"

    env = dict(os.environ)
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = marker
    # The next run's own session ends quickly: its contract is already unmet and
    # the fake CLI exits at once this time.
    write_config(Path(marker), record, [{"stdout": INIT + "\n", "exit_code": 0}])
    again = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(tmp_path / "demo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"stopped agent pid {pids[0]} (prompt 01" in again.stdout, again.stdout + again.stderr
    assert_tree_gone(pids, marker)
    assert list(agents.glob("*.json")) == []
