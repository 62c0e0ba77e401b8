"""The supervisor's lock: one ``start`` or ``stop`` of a run at a time.

An exclusive ``flock`` of ``<supervisor_dir>/.lock``, taken while a command
reads the record, decides and writes it. The kernel drops it when its holder
dies, so it never goes stale; the file itself stays (empty).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import StorageError


@contextlib.contextmanager
def supervisor_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive lock ``path`` for the ``with`` block (waits for another holder).

    Raises:
        StorageError: the lock file or its directory cannot be created or opened.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise StorageError(path, exc, doing="created") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor drops the lock
