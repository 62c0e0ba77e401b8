"""What to start and how it ended: the value objects of :mod:`prompt_runner.proc`.

A :class:`ProcRequest` names the program, its directory, its environment,
its stdin and its time bounds; a :class:`ProcResult` says how it ended -- its
exit status, its output, which bound it passed, whether it was interrupted or
terminated by the caller, or why it never started. :func:`start` is the one
place a child is created: in a new session (so it and every grandchild share
one process group), with the environment passed explicitly, and a failed
start (a missing executable, a bad directory) returned as a result, never
raised.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DEFAULT_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL."""

INTERRUPT_GRACE_S = 5.0
"""Seconds between SIGINT and SIGTERM when a spawned child is interrupted."""

Timeout = Literal["deadline", "idle"]
"""Which bound ended a child: the whole run's deadline, or too long without output."""


@dataclass(frozen=True, slots=True)
class ProcRequest:
    """One process to start (never through a shell).

    Attributes:
        argv: program and arguments; ``argv[0]`` is looked up on ``env["PATH"]``.
        cwd: working directory.
        env: the full environment of the child (``None`` = the runner's own).
        stdin_text: written to stdin, which is then closed (``None`` = /dev/null).
        deadline_ms: bound on the whole run in milliseconds (``None`` = none).
        idle_ms: bound on the time without any output in milliseconds
            (``None`` = none; enforced for spawned children).
        grace_s: seconds between SIGTERM and SIGKILL when the group is ended.
        interrupt_grace_s: seconds between SIGINT and SIGTERM when a spawned
            child is interrupted.
    """

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] | None = None
    stdin_text: str | None = None
    deadline_ms: int | None = None
    idle_ms: int | None = None
    grace_s: float = DEFAULT_GRACE_S
    interrupt_grace_s: float = INTERRUPT_GRACE_S


@dataclass(frozen=True, slots=True)
class ProcResult:
    """How a child ended (or why it never started).

    Attributes:
        argv: the argv that was started.
        returncode: exit status (negative = killed by that signal); ``None``
            when the process never started.
        stdout, stderr: the whole decoded output (UTF-8, replacement on bad
            bytes); empty when it was streamed to a sink. A spawned child's
            ``stderr`` is its last lines.
        timeout: the bound that ended it (``"deadline"`` or ``"idle"``), else ``None``.
        missing: the executable was not found.
        start_error: why the process could not start (missing or otherwise).
        interrupted: the caller interrupted it (SIGINT first).
        terminated: the caller ended it (SIGTERM, then SIGKILL).
        duration_ms: wall time in milliseconds.
    """

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timeout: Timeout | None = None
    missing: bool = False
    start_error: str | None = None
    interrupted: bool = False
    terminated: bool = False
    duration_ms: int = 0

    @property
    def timed_out(self) -> bool:
        """True when a time bound passed and the group was ended."""
        return self.timeout is not None

    @property
    def ok(self) -> bool:
        """True when the process ran and exited 0 in time."""
        return self.returncode == 0 and self.timeout is None


class ExitWaitingPopen(subprocess.Popen[bytes]):
    """A ``Popen`` whose timed :meth:`wait` blocks on the child's exit.

    The standard timed wait polls ``waitpid`` with sleeps of 1, 2, 4... ms, so
    ``communicate(timeout=...)`` -- which waits once the pipes are closed, when
    the child is usually a moment from exiting -- sleeps past the exit: about a
    millisecond per git call. Here the wait first blocks on a pidfd (Linux
    5.3+), which turns readable as the child exits; where none can be opened
    the standard wait runs alone.
    """

    def wait(self, timeout: float | None = None) -> int:
        if timeout is not None and self.returncode is None:
            timeout = _until_exit(self.pid, timeout)
        return super().wait(timeout)


def _until_exit(pid: int, timeout: float) -> float:
    """Block until ``pid`` has exited or ``timeout`` seconds passed; returns the
    seconds left (all of them, at once, where no pidfd can be opened)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or already reaped
        return timeout
    try:
        started = time.monotonic()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll(min(max(0, int(timeout * 1000) + 1), 2**31 - 1))
        return max(0.0, timeout - (time.monotonic() - started))
    finally:
        os.close(fd)


def start(request: ProcRequest) -> subprocess.Popen[bytes] | ProcResult:
    """Start ``request`` in a new session with stdout and stderr piped.

    Returns:
        The running process, or a :class:`ProcResult` with ``returncode=None``
        and ``start_error`` (``missing`` when the executable does not exist
        in an existing ``cwd``) when it could not start. Never raises
        ``OSError``.
    """
    args = request.argv
    try:
        return ExitWaitingPopen(
            args,
            cwd=str(request.cwd),
            env=dict(request.env) if request.env is not None else None,
            stdin=subprocess.PIPE if request.stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        missing = exc.filename in (None, args[0]) and Path(request.cwd).is_dir()
        error = f"{exc.strerror}: {exc.filename or args[0]}"
        return ProcResult(args, None, missing=missing, start_error=error)
    except OSError as exc:
        return ProcResult(args, None, start_error=f"{exc.strerror or exc}: {args[0]}")


def decode(data: bytes | None) -> str:
    """``data`` as text (UTF-8, replacement on bad bytes); ``""`` for none."""
    if not data:
        return ""
    return data.decode("utf-8", errors="replace")
