"""Starting a child through ``subprocess``; the value objects of :mod:`prompt_runner.proc`.

The values are defined in :mod:`.values` (plain frozen classes, so a short
command need not import ``dataclasses``) and re-exported here. A
:class:`ProcRequest` names the program, its directory, its environment, its
stdin and its time bounds; a :class:`ProcResult` says how it ended -- its
exit status, its output, which bound it passed, whether it was interrupted or
terminated by the caller, or why it never started. :func:`start` is the one
place a child is created through ``subprocess`` (:mod:`.quick` starts a short
read-only one with ``os.posix_spawn``): in a new session (so it and every
grandchild share one process group), with the environment passed explicitly,
and a failed start (a missing executable, a bad directory) returned as a
result, never raised.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

from .values import (
    DEFAULT_GRACE_S,
    INTERRUPT_GRACE_S,
    ProcRequest,
    ProcResult,
    Timeout,
    decode,
)

__all__ = [
    "DEFAULT_GRACE_S",
    "INTERRUPT_GRACE_S",
    "ExitWaitingPopen",
    "ProcRequest",
    "ProcResult",
    "Timeout",
    "decode",
    "start",
]


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
        return ProcResult(
            args, None, start_error=f"{exc.strerror or exc}: {exc.filename or args[0]}"
        )
