"""The request half of the control transport: ``control/requests/`` and ``outcomes/``.

Any process writes a request (:func:`write_request`): whole or not at all,
named so that name order is arrival order. The consumer (the runner holding
the run lock) reads each one without trusting it (:func:`read_request`),
decides it, and writes its write-once receipt (:func:`write_receipt`) before
the request file goes (:func:`discard_request`). The exactly-once protocol
that ties these to the control log is in :mod:`prompt_runner.control.store`.

Only the standard library and the light ``state`` helpers are imported:
``control`` commands write requests on the CLI's hot path.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from datetime import UTC, datetime
from pathlib import Path

from prompt_runner.state.atomic import create_file, fsync_dir, is_temp_name, temp_name
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.untrusted_json import loads_unique

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from typing import Any

MAX_REQUEST_BYTES = 1024 * 1024
"""Requests larger than this (1 MiB) are rejected as ``too large`` unread."""

# Reasons a pending request is rejected before its payload is looked at.
UNPARSEABLE = "unparseable"
TOO_LARGE = "too large"
BAD_NAME = "bad request name"
NOT_A_FILE = "not a regular file"
UNREADABLE = "unreadable"

_REQUEST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.json")
_last_name_us = 0


class PendingRequest:
    """One request waiting in ``requests/`` (immutable value).

    Attributes:
        name: the file name inside ``requests/`` (also the receipt's name).
        payload: the parsed JSON object, or ``None`` when ``error`` is set.
        error: why the request cannot be applied (``unparseable``, ``too large``,
            ``bad request name``, ``not a regular file``, ``unreadable``), else
            ``None``. The consumer logs and receipts it like any refusal.
        detail: a human explanation of ``error`` (e.g. the JSON parser's message).
    """

    __slots__ = ("detail", "error", "name", "payload")

    name: str
    payload: dict[str, Any] | None
    error: str | None
    detail: str | None

    def __init__(
        self,
        name: str,
        payload: dict[str, Any] | None,
        error: str | None = None,
        detail: str | None = None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "payload", payload)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "detail", detail)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"PendingRequest is immutable; cannot set {key}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PendingRequest):
            return NotImplemented
        return (self.name, self.payload, self.error, self.detail) == (
            other.name,
            other.payload,
            other.error,
            other.detail,
        )

    __hash__ = None  # type: ignore[assignment]  # payload is a dict

    def __repr__(self) -> str:
        return (
            f"PendingRequest(name={self.name!r}, payload={self.payload!r}, "
            f"error={self.error!r}, detail={self.detail!r})"
        )

    @property
    def ok(self) -> bool:
        """True when the payload parsed as a JSON object."""
        return self.error is None


def basename(name: str) -> str:
    """``name`` when it is a plain file name.

    Raises:
        ValueError: ``name`` is empty, ``.``/``..``, or holds ``/`` or NUL.
    """
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"{name!r} is not a plain file name")
    return name


def request_name() -> str:
    """``YYYYmmdd-HHMMSS-ffffff-<pid>-<random>.json``, strictly increasing per process."""
    global _last_name_us
    us = time.time_ns() // 1000
    if us <= _last_name_us:
        us = _last_name_us + 1
    _last_name_us = us
    stamp = datetime.fromtimestamp(us // 1_000_000, UTC).replace(microsecond=us % 1_000_000)
    return f"{stamp:%Y%m%d-%H%M%S-%f}-{os.getpid():07d}-{os.urandom(4).hex()}.json"


def write_request(layout: StateLayout, data: bytes) -> str:
    """Write one encoded request whole, or not at all; returns its file name.

    The bytes go to ``tmp/`` (fsynced), are renamed into ``requests/`` under a
    name taken just before the rename, and the directory is fsynced.

    Raises:
        OSError: the file cannot be written (no temp file is left).
    """
    layout.control_tmp_dir.mkdir(parents=True, exist_ok=True)
    layout.requests_dir.mkdir(parents=True, exist_ok=True)
    tmp = layout.control_tmp_dir / f"{os.getpid()}-{os.urandom(6).hex()}.tmp"
    try:
        create_file(tmp, data)
        name = request_name()
        os.rename(tmp, layout.requests_dir / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(layout.requests_dir)
    return name


def read_request(layout: StateLayout, name: str) -> PendingRequest | None:
    """Read request ``name`` without trusting it; ``None`` when it is gone.

    Nothing here raises on bad input: an odd name, a non-file, an oversized
    or unreadable file, non-JSON, JSON that repeats a key or nests deeper
    than :data:`~prompt_runner.state.untrusted_json.MAX_REQUEST_DEPTH`
    levels, and JSON that is not an object come back with ``error`` set
    (``unparseable``, the detail naming the key or the depth).
    """
    path = layout.requests_dir / name
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return PendingRequest(name, None, UNREADABLE, str(exc))
    if not stat.S_ISREG(st.st_mode):
        return PendingRequest(name, None, NOT_A_FILE, "not a regular file")
    if not _REQUEST_NAME.fullmatch(name):
        return PendingRequest(
            name, None, BAD_NAME, "names are [A-Za-z0-9._-] ending in .json, no dotfiles"
        )
    if st.st_size > MAX_REQUEST_BYTES:
        return PendingRequest(name, None, TOO_LARGE, f"{st.st_size} bytes")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return PendingRequest(name, None, UNREADABLE, str(exc))
    try:
        data = _read_at_most(fd, MAX_REQUEST_BYTES + 1)
    except OSError as exc:
        return PendingRequest(name, None, UNREADABLE, str(exc))
    finally:
        os.close(fd)
    if len(data) > MAX_REQUEST_BYTES:
        return PendingRequest(name, None, TOO_LARGE, f"over {MAX_REQUEST_BYTES} bytes")
    try:  # a repeated key, or nesting past MAX_REQUEST_DEPTH, is refused too
        payload = loads_unique(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JsonNestingError are ValueErrors
        return PendingRequest(name, None, UNPARSEABLE, str(exc))
    if not isinstance(payload, dict):
        kind = type(payload).__name__
        return PendingRequest(name, None, UNPARSEABLE, f"a JSON {kind}, not an object")
    return PendingRequest(name, payload)


def write_receipt(receipt: Path, data: bytes) -> None:
    """Make the receipt at ``receipt`` durable, write-once: an existing one is kept.

    The bytes go to a temporary sibling (fsynced) that is hard-linked into
    place (a link never overwrites), then the directory is fsynced. Where hard
    links are not supported the receipt is created exclusively instead.

    Raises:
        OSError: the receipt cannot be made durable.
    """
    receipt.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(receipt.with_name("receipt"))  # short: request names may be long
    try:
        create_file(tmp, data)
        try:
            os.link(tmp, receipt)
        except FileExistsError:
            pass
        except OSError:  # no hard links here: exclusive create instead
            with contextlib.suppress(FileExistsError):
                create_file(receipt, data)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    fsync_dir(receipt.parent)


def discard_request(layout: StateLayout, name: str) -> None:
    """Remove request ``name`` (a directory planted there too); a missing one is fine.

    Raises:
        ValueError: ``name`` is not a plain file name.
    """
    path = layout.requests_dir / basename(name)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except (IsADirectoryError, PermissionError):
        import shutil  # lazy: a planted directory is rare; shutil costs ~2 ms to import

        shutil.rmtree(path, ignore_errors=True)


def sweep_stale_temps(layout: StateLayout, *, older_than_s: float) -> None:
    """Remove temp files older than ``older_than_s`` seconds: orphans of killed writers.

    Every file in ``tmp/``, and temp-named dotfiles (see
    :func:`~prompt_runner.state.atomic.is_temp_name`) in ``outcomes/`` and
    ``control/``. Younger ones may belong to a live writer and are kept; a
    missing directory is skipped.
    """
    cutoff = time.time() - older_than_s
    for d, dot_only in (
        (layout.control_tmp_dir, False),
        (layout.outcomes_dir, True),
        (layout.control_dir, True),
    ):
        try:
            entries = list(os.scandir(d))
        except FileNotFoundError:
            continue
        for entry in entries:
            if dot_only and not is_temp_name(entry.name):
                continue
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
