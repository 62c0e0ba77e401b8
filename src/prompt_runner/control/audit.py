"""The control plane's audit files: the amendment lock and the one-line appender.

Amendments (``amendments/<prompt_id>.jsonl``), steers
(``interventions/<prompt_id>.jsonl``) and control log lines written from
outside the runner are appended by :func:`append_record_line`: one fsynced
``O_APPEND`` write per record, from any process. Writers of amendments and
of the verification marker (``control/marker.py``) serialise on
:func:`amendment_lock`.

Standard library only: ``control steer`` takes the lock on the CLI's hot path.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..state.layout import StateLayout
from ..state.lines import append_line_shared


@contextlib.contextmanager
def amendment_lock(state_root: Path) -> Iterator[None]:
    """Hold the state root's exclusive amendment lock while the block runs.

    An ``flock`` on ``<state_root>/amendments/.lock`` (created if missing;
    the kernel drops it when the holder dies, so a crash never leaves it
    held). It blocks until the lock is free. Where ``fcntl`` does not exist
    the block runs unlocked.

    Raises:
        StorageError: the lock file cannot be created or opened (an ``OSError``).
    """
    try:
        import fcntl  # lazy: POSIX only; without it the block runs unlocked
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path = StateLayout(state_root).amendment_lock
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(path, flags, 0o644)
        except (FileNotFoundError, NotADirectoryError):  # mkdir names what is in the way
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise StorageError(exc.filename or path, exc) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def quiet_amendment_lock(state_root: Path) -> Iterator[None]:
    """The amendment lock, or nothing when it cannot be taken (a read-only state root)."""
    with contextlib.ExitStack() as stack:
        with contextlib.suppress(OSError):
            stack.enter_context(amendment_lock(state_root))
        yield


def append_record_line(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line to an audit file (amendments, interventions) and fsync it.

    A torn last line left by a crash is ended first, never glued to the record
    (:func:`prompt_runner.state.lines.append_line_shared`).

    Raises:
        StorageError: the line cannot be written (an ``OSError``).
    """
    data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    try:
        append_line_shared(path, data)
    except StorageError:
        raise
    except OSError as exc:
        raise StorageError(exc.filename or path, exc) from exc
