"""proc.run: whole output, streaming, registration, and no child outliving an
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
