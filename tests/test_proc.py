"""proc.run / proc.spawn against real processes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil

from prompt_runner import proc


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


def test_spawn_streams_lines_and_terminates_group(tmp_path: Path) -> None:
    lines: list[str] = []
    script = "import time\nprint('one', flush=True)\nprint('two', flush=True)\ntime.sleep(60)\n"
    sp = proc.spawn(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        on_line=lines.append,
    )
    deadline = time.monotonic() + 10
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lines == ["one", "two"]
    assert sp.poll() is None
    sp.terminate(grace_s=0.5)
    assert sp.poll() is not None


def test_spawn_splits_lines_across_reads_whatever_the_child_writes(tmp_path: Path) -> None:
    """Lines arrive whole and decoded even when a write ends mid-line, mid-UTF-8
    character, with CRLF endings, with invalid bytes, or with no final newline."""
    script = (
        "import os, time\n"
        "w = lambda b: (os.write(1, b), time.sleep(0.05))\n"
        "w(b'first\\r\\nsec')\n"
        "w(b'ond \\xc3')\n"  # the first byte of 'é' ...
        "w(b'\\xa9 line\\n\\xff bad\\n')\n"  # ... and its second byte
        "w(b'x' * 200000 + b'\\n')\n"  # longer than one read
        "w(b'no newline at the end')\n"
    )
    lines: list[str] = []
    sp = proc.spawn(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        on_line=lines.append,
    )
    assert sp.wait(timeout_s=20) == 0
    assert lines == [
        "first",
        "second é line",
        "\ufffd bad",
        "x" * 200000,
        "no newline at the end",
    ]
