"""proc.spawn against real processes: lines, bounds, interrupt, terminate, a failed start."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil

from prompt_runner import proc


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
    ended = sp.wait(timeout_s=20)
    assert ended is not None and ended.returncode == 0
    assert lines == [
        "first",
        "second é line",
        "\ufffd bad",
        "x" * 200000,
        "no newline at the end",
    ]


def test_a_missing_executable_is_an_ended_handle_not_an_exception(tmp_path: Path) -> None:
    ended: list[proc.ProcResult] = []
    sp = proc.spawn(
        ["definitely-not-a-command-xyz"],
        cwd=tmp_path,
        env={"PATH": str(tmp_path)},
        on_line=lambda line: None,
        on_exit=ended.append,
    )
    result = sp.wait(timeout_s=0)
    assert result is not None and ended == [result]
    assert result.missing and result.returncode is None and sp.pid is None
    assert "definitely-not-a-command-xyz" in (result.start_error or "")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


GRANDCHILD_THEN_SILENCE = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "child = subprocess.Popen([sys.executable, '-c', "
    "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(60)\n"
)


def test_the_idle_bound_ends_a_silent_child_and_its_whole_group(tmp_path: Path) -> None:
    lines: list[str] = []
    started = time.monotonic()
    sp = proc.spawn(
        [sys.executable, "-c", GRANDCHILD_THEN_SILENCE],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        on_line=lines.append,
        idle_ms=600,
        deadline_ms=60_000,
        grace_s=0.3,
    )
    result = sp.wait(timeout_s=20)
    assert result is not None and result.timeout == "idle" and result.timed_out
    assert not result.ok and time.monotonic() - started < 10
    assert sp.pid is not None and _gone(sp.pid) and _gone(int(lines[0]))


def test_the_deadline_ends_a_chatty_child(tmp_path: Path) -> None:
    chatty = "import time\nwhile True:\n    print('x', flush=True)\n    time.sleep(0.02)\n"
    sp = proc.spawn(
        [sys.executable, "-c", chatty],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        on_line=lambda line: None,
        idle_ms=60_000,
        deadline_ms=700,
    )
    result = sp.wait(timeout_s=20)
    assert result is not None and result.timeout == "deadline"
    assert 700 <= result.duration_ms < 10_000


def test_interrupt_escalates_for_a_child_that_ignores_sigint(tmp_path: Path) -> None:
    stubborn = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('up', flush=True)\ntime.sleep(60)\n"
    )
    lines: list[str] = []
    sp = proc.spawn(
        [sys.executable, "-c", stubborn],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        on_line=lines.append,
        interrupt_grace_s=0.3,
    )
    deadline = time.monotonic() + 10
    while not lines and time.monotonic() < deadline:
        time.sleep(0.02)
    sp.interrupt()
    result = sp.wait(timeout_s=20)
    assert result is not None and result.interrupted and not result.terminated
    assert result.returncode == -15  # SIGINT was ignored; SIGTERM ended it
    assert result.timeout is None


def test_the_bounds_hold_while_the_prompt_is_written_to_a_child_that_never_reads_it(
    tmp_path: Path,
) -> None:
    ended: list[proc.ProcResult] = []
    started = time.monotonic()
    sp = proc.spawn(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        on_line=lambda line: None,
        stdin_text="x" * 4_000_000,  # far more than a pipe holds
        deadline_ms=500,
        grace_s=0.3,
        on_exit=ended.append,
    )
    result = sp.wait(timeout_s=20)
    assert time.monotonic() - started < 15
    assert result is not None and result.timeout == "deadline" and ended == [result]
