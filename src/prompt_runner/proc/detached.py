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

import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

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
    try:
        for log in (stdout, stderr):
            log.parent.mkdir(parents=True, exist_ok=True)
        out = open(stdout, "ab")  # noqa: SIM115 -- handed to the child, closed below
        try:
            err = open(stderr, "ab")  # noqa: SIM115
        except OSError:
            out.close()
            raise
    except OSError as exc:
        return ProcResult(args, None, start_error=f"cannot open the log ({exc})")
    try:
        popen = subprocess.Popen(
            args,
            cwd=str(cwd),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    except FileNotFoundError as exc:
        missing = exc.filename in (None, args[0]) and os.path.isdir(cwd)
        return ProcResult(
            args, None, missing=missing, start_error=f"{exc.strerror}: {exc.filename or args[0]}"
        )
    except OSError as exc:
        return ProcResult(args, None, start_error=f"{exc.strerror or exc}: {args[0]}")
    finally:
        out.close()
        err.close()
    return Detached(popen, args)
