"""A detached child: started to outlive the process that started it (``prompt-runner start``).

:func:`detach` starts the program in a new session (so it has no controlling
terminal: closing the terminal, or SIGHUP to the starting session, never
reaches it, and it leads its own process group), with stdin from
``/dev/null`` and stdout and stderr appended to two log files. The caller
does not wait for it: a daemon thread reaps it when it exits, so a
long-lived caller (the library) is left no zombie. Like :func:`.start`, a
child that could not start is a :class:`~.request.ProcResult` saying why,
never an exception.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from .logged import popen_logged
from .request import ProcResult


class Detached:
    """A running detached child (see :func:`detach`).

    Attributes:
        pid: its pid, which is also its session and process-group id.
        argv: what was started.
    """

    def __init__(self, popen: subprocess.Popen[bytes], argv: tuple[str, ...]) -> None:
        self.pid = popen.pid
        self.argv = argv
        self._popen = popen
        threading.Thread(target=popen.wait, daemon=True, name=f"reap-{popen.pid}").start()

    def poll(self) -> int | None:
        """Its exit status once it has exited (negative: the signal), else ``None``."""
        return self._popen.poll()


def detach(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdout: Path,
    stderr: Path,
) -> Detached | ProcResult:
    """Start ``argv`` detached: a new session, stdin ``/dev/null``, output appended
    to ``stdout`` and ``stderr`` (their directories are created).

    Args:
        argv: program and arguments (never through a shell).
        cwd: its working directory.
        env: its whole environment.
        stdout, stderr: the log files its output is appended to.

    Returns:
        The :class:`Detached` child, or a :class:`ProcResult` with
        ``returncode=None`` and ``start_error`` (``missing`` for a missing
        executable) when it could not start. Never raises ``OSError`` for the
        child; a log file that cannot be opened is ``start_error`` too.
    """
    args = tuple(argv)
    popen = popen_logged(
        args, cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True
    )
    if isinstance(popen, ProcResult):
        return popen
    return Detached(popen, args)
