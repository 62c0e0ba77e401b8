"""proc.run against real processes: exit codes, a missing executable, deadlines, whole
output, streaming, registration, and no child outliving an
interrupted caller (issue 12.7 and 12.11: the same faults outside the verifier,
e.g. a git call whose output passed 1 MB, a commit hook still running after
Ctrl-C)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from prompt_runner import proc

BIG = 3_000_000


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_run_captures_output_and_exit_code(tmp_path: Path) -> None:
    res = proc.run([sys.executable, "-c", "import sys; print('hi'); sys.exit(3)"], cwd=tmp_path)
    assert res.returncode == 3 and res.stdout == "hi\n" and not res.ok


def test_missing_executable_is_a_result(tmp_path: Path) -> None:
    res = proc.run(["definitely-not-a-command-xyz"], cwd=tmp_path)
    assert res.returncode is None and res.missing
    assert "definitely-not-a-command-xyz" in (res.start_error or "")


def test_timeout_kills_grandchild_that_ignores_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import os, signal, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    res = proc.run([sys.executable, "-c", script], cwd=tmp_path, timeout_ms=1000, grace_s=0.5)
    assert res.timed_out and not res.ok
    assert time.monotonic() - started < 10
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while psutil.pid_exists(grandchild) and time.monotonic() < deadline:
        try:
            if psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    alive = psutil.pid_exists(grandchild)
    if alive:
        try:
            alive = psutil.Process(grandchild).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            alive = False
    assert not alive


def test_captured_output_is_whole_past_one_megabyte(tmp_path: Path) -> None:
    program = f"import sys; sys.stdout.write('x' * {BIG} + 'END'); sys.stderr.write('e' * {BIG})"
    res = proc.run([sys.executable, "-c", program], cwd=tmp_path)
    assert res.ok and len(res.stdout) == BIG + 3 and res.stdout.endswith("END")
    assert len(res.stderr) == BIG


def test_streamed_output_reaches_the_sink_and_is_not_kept(tmp_path: Path) -> None:
    got: dict[str, int] = {"stdout": 0, "stderr": 0}
    tails: list[bytes] = []

    def sink(stream: str, data: bytes) -> None:
        got[stream] += len(data)
        tails.append(data[-3:])

    registered: list[int] = []
    forgotten: list[int] = []

    def on_start(pid: int):  # type: ignore[no-untyped-def]
        registered.append(pid)
        return lambda: forgotten.append(pid)

    program = f"import sys; sys.stdout.write('x' * {BIG} + 'END'); sys.stderr.write('e' * 10)"
    res = proc.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        on_output=sink,
        on_start=on_start,
        timeout_ms=30_000,
    )
    assert res.ok and res.stdout == "" and res.stderr == ""
    assert got == {"stdout": BIG + 3, "stderr": 10}
    assert b"END" in tails
    assert registered == forgotten and len(registered) == 1


@pytest.mark.parametrize("streamed", [False, True])
def test_an_interrupted_caller_ends_the_child_s_whole_group(tmp_path: Path, streamed: bool) -> None:
    pidfile = tmp_path / "pids"
    program = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pidfile)!r} + '.tmp', 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        f"os.replace({str(pidfile)!r} + '.tmp', {str(pidfile)!r})\n"
        "time.sleep(300)\n"
    )

    def ctrl_c_once_started() -> None:
        deadline = time.monotonic() + 30
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)  # the terminal's Ctrl-C reaches only us

    threading.Thread(target=ctrl_c_once_started, daemon=True).start()
    forgotten: list[int] = []
    kwargs = {"on_output": lambda stream, data: None} if streamed else {}
    with pytest.raises(KeyboardInterrupt):
        proc.run(
            [sys.executable, "-c", program],
            cwd=tmp_path,
            timeout_ms=300_000,
            grace_s=0.5,
            on_start=lambda pid: lambda: forgotten.append(pid),
            **kwargs,  # type: ignore[arg-type]
        )
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    try:
        assert not any(alive(p) for p in pids)
        assert forgotten == [pids[0]]
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("stream", [False, True])
def test_a_background_process_holding_the_pipes_does_not_make_a_finished_child_time_out(
    tmp_path: Path, stream: bool
) -> None:
    """``sh -c 'sleep 30 & echo started'`` (a verify command starting a daemon): the
    command finished when its leader did; the leftover is ended, not waited for."""
    chunks: list[bytes] = []
    began = time.monotonic()
    res = proc.run(
        ["sh", "-c", "sleep 30 & echo started; exit 4"],
        cwd=tmp_path,
        timeout_ms=20_000,
        on_output=(lambda _name, chunk: chunks.append(chunk)) if stream else None,
    )
    assert time.monotonic() - began < 10
    assert (res.returncode, res.timeout) == (4, None)
    assert (b"".join(chunks).decode() if stream else res.stdout) == "started\n"


def test_stdin_reaches_a_captured_child_that_runs_past_the_exit_checks(tmp_path: Path) -> None:
    """The captured wait looks at the leader every _EXIT_CHECK_S; the input is
    fed once, and a child that reads it after a while still gets it whole."""
    code = "import sys, time; time.sleep(0.7); print(sys.stdin.read()[::-1])"
    res = proc.run(
        [sys.executable, "-c", code], cwd=tmp_path, timeout_ms=20_000, stdin_text="abc" * 1000
    )
    assert (res.returncode, res.timeout, res.stdout) == (0, None, "cba" * 1000 + "\n")
