"""The one rule for reading a file a user points the runner at: a packet's
manifest, prompt files, checklists, profiles and templates, and the workspace
and fleet manifests.

The file must be a regular file (a named pipe would block the read forever, a
device such as ``/dev/zero`` never ends it), checked on the opened descriptor
-- the open itself never blocks (``O_NONBLOCK``) -- so a file swapped after a
check cannot slip past it; and at most ``limit`` bytes are read, so a huge or
growing file is refused instead of filling memory. Standard library only (the
parsed-packet cache uses it before any YAML is loaded), and no ``pathlib``:
``status`` and ``watch`` read prompt files through it on their text paths
(:mod:`prompt_runner.packet.prompt_ids_text`).
"""

from __future__ import annotations

import os
import stat

from ..errors import UserError
from ..file_kinds import not_regular

TYPE_CHECKING = False  # typing and pathlib cost import time on the status and watch start-ups
if TYPE_CHECKING:
    from pathlib import Path

MAX_FILE_BYTES = 10_000_000
"""Largest packet file (manifest, prompt, checklist, profile, template) read, in bytes."""


def read_regular(
    path: str | Path,
    *,
    display: str | Path | None = None,
    limit: int = MAX_FILE_BYTES,
    not_file_fix: str = "replace it with a regular file, or remove it",
    missing: str = "file not found",
    missing_fix: str = "check the path",
) -> bytes:
    """The bytes of the regular file at ``path`` (a symlink is followed), at most ``limit``.

    Args:
        path: the file.
        display: how messages name it (default ``path``).
        limit: the most bytes accepted; a longer file is refused.
        not_file_fix: the fix named when ``path`` is a directory or not a regular file.
        missing: the clause when ``path`` does not exist, ``missing_fix`` its fix.

    Returns:
        The whole content, ``len <= limit``.

    Raises:
        UserError: missing (``missing``), a directory, not a regular file
            (a named pipe, a device, a socket: refused before any read), larger
            than ``limit`` bytes, or unreadable (the OS reason).
    """
    where = display if display is not None else path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UserError(missing, file=where, fix=missing_fix) from None
    except OSError as exc:
        raise UserError(
            f"cannot be read ({exc.strerror or exc})", file=where, fix="check its permissions"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(not_regular(info.st_mode), file=where, fix=not_file_fix)
        if info.st_size > limit:
            raise _too_large(where, limit)
        parts = []
        total = 0
        want = info.st_size + 1
        while True:
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(where, limit)  # it grew while being read
            want = min(1 << 16, limit + 1 - total)
    except OSError as exc:
        raise UserError(
            f"cannot be read ({exc.strerror or exc})", file=where, fix="check its permissions"
        ) from None
    finally:
        os.close(fd)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _too_large(where: str | Path, limit: int) -> UserError:
    return UserError(
        f"is larger than {limit:,} bytes",
        file=where,
        fix="make it smaller (a packet's files are text; keep large data in the repos)",
    )
