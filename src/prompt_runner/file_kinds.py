"""What kind of file a path is, told from ``stat`` alone: the one sentence for
a file that must be a regular one (a packet's files, the manifest that makes
a directory a packet) and is not -- a directory, a named pipe, a device, a
socket, a symbolic link that leads nowhere.

Below both :mod:`prompt_runner.paths` (which tells a packet directory by its
manifest) and :mod:`prompt_runner.packet.file_read` (which reads every packet
file by that rule); it imports only ``errno``, ``os``, ``stat`` and the error
tree, and never opens the file (a named pipe would block the open).
"""

from __future__ import annotations

import errno
import os
import stat

from .errors import UserError

TYPE_CHECKING = False  # pathlib costs import time on the status and watch start-ups
if TYPE_CHECKING:
    from pathlib import Path

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_regular_error(
    path: str,
    *,
    display: str | Path | None = None,
    not_file_fix: str = "replace it with a regular file, or remove it",
) -> UserError | None:
    """The error :func:`~prompt_runner.packet.file_read.read_regular` would
    raise for what ``path`` is, told from ``stat`` alone (nothing is opened,
    so a named pipe is never waited on): ``None`` when ``path`` is a regular
    file (or a symlink to one) or names nothing at all; else a directory, a
    named pipe, a device, a socket (the sentence ``read_regular`` says, with
    ``not_file_fix``), or a symlink that leads to nothing, loops or cannot be
    followed (naming its target)."""
    where = display if display is not None else path
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        gone = exc.errno in (errno.ENOENT, errno.ENOTDIR)
        try:
            target = os.readlink(path)
        except OSError:
            if gone:
                return None  # nothing there, not even a link
            return UserError(
                f"cannot be read ({exc.strerror or exc})", file=where, fix="check its permissions"
            )
        if gone:
            problem = "which does not exist"
        elif exc.errno == errno.ELOOP:
            problem = "which loops (it never reaches a file)"
        else:
            problem = f"which cannot be followed ({exc.strerror or exc})"
        return UserError(
            f"is a symbolic link to {target}, {problem}",
            file=where,
            fix="replace it with a regular file, or fix the link",
        )
    if stat.S_ISREG(mode):
        return None
    return UserError(not_regular(mode), file=where, fix=not_file_fix)


def not_regular(mode: int) -> str:
    """What a ``stat`` mode that is not a regular file's is, as a clause:
    ``is a directory, not a file``, ``is not a regular file (a named pipe)``."""
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return f"is not a regular file ({kind})"


def refused_directory(code: int | None) -> tuple[str, str] | None:
    """Why a directory the user named cannot be made where ``mkdir`` failed with
    errno ``code``, and what to name instead -- ``(clause, place)``, e.g.
    ``("is on a read-only file system", "a directory on a writable file system")``;
    ``None`` for a fault of the storage itself (a full disk, an I/O error)."""
    return {
        errno.EACCES: ("is not writable (permission denied)", "a directory you can write to"),
        errno.EPERM: ("is not writable (permission denied)", "a directory you can write to"),
        errno.EROFS: ("is on a read-only file system", "a directory on a writable file system"),
        errno.ENOENT: (
            "takes no new directory (the file system refuses one there, as /proc and /sys do)",
            "an ordinary directory you can write to",
        ),
    }.get(code or 0)
