"""Start a child with stdin ``/dev/null`` and its output appended to two log files.

The one start-up both :func:`.attached.attach` and :func:`.detached.detach`
use; they differ only in where the child lives (the caller's process group
with a parent-death signal, or a new session). A child that could not start
-- a log that cannot be opened, a missing executable -- is a
:class:`~.request.ProcResult` saying why, never an ``OSError``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from .request import ProcResult


def popen_logged(
    args: tuple[str, ...],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdout: Path,
    stderr: Path,
    start_new_session: bool = False,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes] | ProcResult:
    """Start ``args`` (never through a shell), its logs' directories created.

    Returns:
        The running child, or a :class:`ProcResult` with ``returncode=None``
        and ``start_error`` (``missing`` for a missing executable in an
        existing ``cwd``). The log files are closed here either way (the child
        keeps its own descriptors).
    """
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
        return subprocess.Popen(
            args,
            cwd=str(cwd),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=start_new_session,
            close_fds=True,
            preexec_fn=preexec_fn,
        )
    except FileNotFoundError as exc:
        missing = exc.filename in (None, args[0]) and os.path.isdir(cwd)
        return ProcResult(
            args, None, missing=missing, start_error=f"{exc.strerror}: {exc.filename or args[0]}"
        )
    except OSError as exc:
        return ProcResult(
            args, None, start_error=f"{exc.strerror or exc}: {exc.filename or args[0]}"
        )
    finally:
        out.close()
        err.close()
