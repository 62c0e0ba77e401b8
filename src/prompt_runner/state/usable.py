"""Is the runtime state directory usable? Checked before a run starts any session.

A run whose state cannot be written must stop before an agent works (exit 3,
one sentence naming the path and the cause), not fail later with a raw
``OSError``: a read-only file system, a full disk, or ``.prompt_runner``
being a file. Writes that fail later (the disk fills mid-run) raise the same
:class:`~prompt_runner.errors.StorageError` from ``state/atomic.py`` and
``state/lines.py``.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from prompt_runner.errors import StorageError
from prompt_runner.state.atomic import temp_name, write_bytes_atomic

GITIGNORE = b"# Prompt Runner runtime state; never committed\n*\n"
PROBE_BYTES = 4096  # one page: a full file system refuses it


def check_state_root(root: Path) -> None:
    """Refuse a state root that exists but is not a directory (reading or writing).

    Raises:
        StorageError: ``root`` is a file (or another non-directory).
    """
    if root.exists() and not root.is_dir():
        raise StorageError(
            root,
            NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)),
            doing="used as the runtime state directory",
        )


def prepare_state_dir(root: Path) -> None:
    """Create ``root`` and its ``.gitignore`` (``*``), and prove it takes a write.

    The probe writes and fsyncs :data:`PROBE_BYTES` bytes to a temporary file
    in ``root`` and removes it.

    Raises:
        StorageError: ``root`` cannot be created or written (read-only, full,
            no permission, or a file where a directory should be).
    """
    check_state_root(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(root, exc, doing="created") from exc
    ignore = root / ".gitignore"
    if not ignore.exists():
        write_bytes_atomic(ignore, GITIGNORE)
    probe = temp_name(root / "write-probe")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"\0" * PROBE_BYTES)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StorageError(root, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(probe)
