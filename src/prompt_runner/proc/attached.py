"""An attached child: one that must end with the process that started it (a fleet worker's run).

Every other child here starts in a new session. A Temporal fleet worker is the
unit that fails -- a machine, a container, a service -- and the runner it
starts for a member must fail with it: if it outlived a killed worker, the
member would run twice, once there and once on the worker that resumes it.
So :func:`attach` starts the program in the caller's own process group (a
signal to the worker's group, or to its service's cgroup, reaches it) and,
on Linux, with ``PR_SET_PDEATHSIG`` = SIGKILL: the kernel kills it when the
starting thread's process dies, even by SIGKILL alone. Its stdin is
``/dev/null`` and its output is appended to two log files. The agents the
runner starts are in their own sessions as always (the runner stops them).

``PR_SET_PDEATHSIG`` is set between fork and exec by a function that only
calls ``prctl`` through a handle made beforehand (nothing is imported or
allocated there); it follows the thread that forked, so the caller keeps that
thread until the child has ended (:meth:`Attached.wait`).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .logged import popen_logged
from .request import ProcResult

_PR_SET_PDEATHSIG = 1


def _deathsig() -> Callable[[], None] | None:
    """A pre-exec function that sets SIGKILL as the parent-death signal (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    # lazy: ctypes (and the tempfile, random ... that ctypes.util loads) only for
    # a child that gets the parent-death signal, not for every git call
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    kill = int(signal.SIGKILL)

    def set_deathsig() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)

    return set_deathsig


class Attached:
    """A running attached child (see :func:`attach`).

    Attributes:
        pid: its pid (in the caller's process group).
        argv: what was started.
    """

    def __init__(self, popen: subprocess.Popen[bytes], argv: tuple[str, ...]) -> None:
        self.pid = popen.pid
        self.argv = argv
        self._popen = popen

    def poll(self) -> int | None:
        """Its exit status once it has exited (negative: the signal), else ``None``."""
        return self._popen.poll()

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait at most ``timeout_s`` seconds (``None``: until it exits); its status or ``None``."""
        try:
            return self._popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the child alone (never raises for one that has gone)."""
        with contextlib.suppress(ProcessLookupError):
            self._popen.send_signal(signum)


def attach(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdout: Path,
    stderr: Path,
) -> Attached | ProcResult:
    """Start ``argv`` attached: the caller's process group, SIGKILL when the caller
    dies (Linux), stdin ``/dev/null``, output appended to ``stdout`` and ``stderr``.

    Returns:
        The :class:`Attached` child, or a :class:`ProcResult` with
        ``returncode=None`` and ``start_error`` when it could not start (a
        missing executable, a log that cannot be opened). Never raises ``OSError``.
    """
    args = tuple(argv)
    popen = popen_logged(
        args, cwd=cwd, env=env, stdout=stdout, stderr=stderr, preexec_fn=_deathsig()
    )
    if isinstance(popen, ProcResult):
        return popen
    return Attached(popen, args)
