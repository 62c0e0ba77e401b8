"""ProcessGroup.stop: the one INT -> TERM -> KILL escalation, on real process groups."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

from prompt_runner import proc

# Records each signal it gets in `log`; `obey` names the one it exits on (others are ignored).
CHILD = """
import os, signal, subprocess, sys, time
log, obey, pidfile = sys.argv[1], sys.argv[2], sys.argv[3]
grandchild = subprocess.Popen([sys.executable, "-c",
    "import signal, time; [signal.signal(s, signal.SIG_IGN) for s in (2, 15)]; time.sleep(60)"])
def got(signum, frame):
    with open(log, "a") as f:
        f.write(signal.Signals(signum).name + "\\n")
    if signal.Signals(signum).name == obey:
        os._exit(0)
for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, got)
with open(pidfile + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {grandchild.pid}")
os.replace(pidfile + ".tmp", pidfile)
while True:
    time.sleep(0.05)
"""


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def start(tmp_path: Path, obey: str) -> tuple[subprocess.Popen[bytes], list[int], Path]:
    log, pidfile = tmp_path / "signals", tmp_path / "pids"
    popen = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(log), obey, str(pidfile)], start_new_session=True
    )
    deadline = time.monotonic() + 30
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return popen, [int(p) for p in pidfile.read_text().split()], log


def test_stop_escalates_int_then_term_then_kill_on_the_whole_group(tmp_path: Path) -> None:
    popen, pids, log = start(tmp_path, obey="none")
    group = proc.ProcessGroup(popen.pid, exited=lambda: popen.poll() is not None)
    started = time.monotonic()
    group.stop(interrupt_grace_s=0.3, grace_s=0.3)
    popen.wait(timeout=10)
    assert time.monotonic() - started < 5
    assert log.read_text().split() == ["SIGINT", "SIGTERM"]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)  # the grandchild ignored both: SIGKILL ended it


def test_stop_ends_at_the_signal_the_group_obeys(tmp_path: Path) -> None:
    popen, pids, log = start(tmp_path, obey="SIGTERM")
    group = proc.ProcessGroup(popen.pid, exited=lambda: popen.poll() is not None)
    group.stop(grace_s=5)  # no interrupt step: TERM first
    assert popen.wait(timeout=10) == 0  # exited on its own handler, not killed
    assert log.read_text().split() == ["SIGTERM"]
    deadline = time.monotonic() + 10
    while alive(pids[1]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pids[1])  # what it left in its group was still ended


def test_a_group_that_is_gone_gets_no_signal_and_stop_returns_at_once(tmp_path: Path) -> None:
    popen = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    popen.wait(timeout=10)
    group = proc.ProcessGroup(popen.pid, exited=lambda: popen.poll() is not None)
    started = time.monotonic()
    group.stop(interrupt_grace_s=5, grace_s=5)
    assert time.monotonic() - started < 1 and group.gone()
