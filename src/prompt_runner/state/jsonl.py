"""Append-only JSONL files: one JSON object per line.

Writing goes through :class:`JsonlWriter` (one ``os.write`` per record on an
``O_APPEND`` descriptor, torn-tail repair on open, optional group commit; see
:mod:`prompt_runner.state.lines`). Records are encoded compactly with
``ensure_ascii=False`` and NaN/infinity refused, so a line is always valid JSON.

Reading:

* :func:`read_records` -- the whole file, ``strict`` for records of truth
  (a bad line raises :class:`~prompt_runner.errors.StateError` naming the file
  and line) or lenient for caches and logs (bad lines skipped);
* :func:`read_from` -- a tailer: only the complete lines after a byte offset,
  plus the new offset, in time proportional to the new bytes.

A torn final line (no trailing ``\\n``) is never returned by a reader; it is
either completed by its writer or moved aside by the next writer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from prompt_runner.errors import StateError
from prompt_runner.state.lines import LineAppender, read_complete_lines, repair_torn_tail

__all__ = ["JsonlWriter", "encode_record", "read_from", "read_records", "repair_torn_tail"]

_FIX = "restore the file from a backup, or delete the bad line"


def encode_record(record: Mapping[str, Any]) -> bytes:
    """Encode ``record`` as one compact JSON line ending in ``\\n``.

    Raises:
        TypeError / ValueError: the record is not JSON-safe.
    """
    text = json.dumps(
        record, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_refuse
    )
    return (text + "\n").encode("utf-8")


def _refuse(value: object) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON-safe")


class JsonlWriter:
    """Append JSON objects to a JSONL file, one line per :meth:`append`.

    Args:
        path: the file; created with its parent directories when missing. A torn
            tail left by a killed writer is moved to ``<name>.torn.<stamp>`` on
            open (see :attr:`torn_path`).
        fsync_interval_ms: ``0`` = fsync after every append (default); ``N > 0``
            = group commit, at most one fsync per ``N`` milliseconds plus one on
            :meth:`flush`/:meth:`close`.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: Path, *, fsync_interval_ms: int = 0) -> None:
        self._lines = LineAppender(path, fsync_interval_ms=fsync_interval_ms)
        self.path = path

    @property
    def torn_path(self) -> Path | None:
        """Where a torn tail found on open was moved, or ``None`` if there was none."""
        return self._lines.torn_path

    @property
    def bytes_written(self) -> int:
        """Bytes appended through this writer."""
        return self._lines.bytes_written

    def append(self, record: Mapping[str, Any]) -> None:
        """Append ``record`` as exactly one line.

        Raises:
            TypeError / ValueError: the record is not JSON-safe (nothing is written).
            OSError: the write failed.
        """
        self._lines.append_line(encode_record(record))

    def flush(self) -> None:
        """``fsync`` appends made inside the current group-commit window."""
        self._lines.flush()

    def close(self) -> None:
        """Flush and close; idempotent."""
        self._lines.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def decode_line(raw: bytes) -> dict[str, Any]:
    """Decode one JSONL line into a dict.

    Raises:
        ValueError: not UTF-8, not JSON, or not a JSON object.
    """
    value = json.loads(raw.decode("utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


def read_records(path: Path, *, strict: bool) -> list[dict[str, Any]]:
    """Return every complete record of ``path`` in file order.

    Blank lines are ignored. A missing file yields ``[]``. A torn final line is
    not returned (in either mode).

    Args:
        strict: ``True`` for records of truth: a line that is not a JSON object
            raises. ``False`` for logs and caches: such lines are skipped.

    Raises:
        StateError: (strict only) a bad line; the message names the file and the
            1-based line number.
    """
    lines, _torn = read_complete_lines(path)
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            records.append(decode_line(raw))
        except ValueError as exc:
            if strict:
                raise StateError(
                    f"corrupt record at line {number} ({exc})", file=path, fix=_FIX
                ) from exc
    return records


def read_from(path: Path, offset: int, *, strict: bool = False) -> tuple[list[dict[str, Any]], int]:
    """Return the complete records written after byte ``offset`` and the offset to resume at.

    Reads only the bytes after ``offset``; the returned offset is just past the
    last complete line, so a torn final line is returned by a later call once
    its writer finishes it. Start with ``offset=0``.

    A missing file yields ``([], 0)``. A file shorter than ``offset`` was
    replaced or truncated by something other than torn-tail repair (which never
    cuts a complete line); it is read again from offset 0.

    Args:
        path: the JSONL file.
        offset: a value previously returned for this file, or 0.
        strict: raise on a bad line instead of skipping it.

    Raises:
        StateError: (strict only) a bad line; names the file and line number
            counted from ``offset``.
        ValueError: ``offset`` is negative.
    """
    if offset < 0:
        raise ValueError("offset must be >= 0")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return [], 0
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            offset = 0
        chunks: list[bytes] = []
        position = offset
        while position < size:
            chunk = os.pread(fd, min(size - position, 1 << 20), position)
            if not chunk:
                break
            chunks.append(chunk)
            position += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(data[:end].split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            records.append(decode_line(raw))
        except ValueError as exc:
            if strict:
                raise StateError(
                    f"corrupt record at line {number} after byte {offset} ({exc})",
                    file=path,
                    fix=_FIX,
                ) from exc
    return records, offset + end + 1
