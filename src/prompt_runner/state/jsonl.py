"""Append-only JSONL files: one JSON object per line.

Writing goes through :class:`JsonlWriter` (one ``os.write`` per record on an
``O_APPEND`` descriptor, torn-tail repair on open, optional group commit; see
:mod:`prompt_runner.state.lines`). Records of truth are encoded by
:func:`encode_record`: compact, ``ensure_ascii=False``, NaN/infinity and
non-JSON values refused, so a line is always valid JSON. Streams that must
keep whatever they are given (the control plane's events and log) use
:func:`dumps_lenient`, which encodes such values instead of refusing them.

Reading:

* :func:`read_records` -- the whole file, ``strict`` for records of truth
  (a bad line raises :class:`~prompt_runner.errors.StateError` naming the file
  and line) or lenient for caches and logs (bad lines skipped);
* :func:`read_from` -- a tailer: only the complete lines after a byte offset,
  plus the new offset, in time proportional to the new bytes;
* :func:`iter_from` -- the same as a stream of ``(record, offset_after_it)``
  in memory bounded by a chunk (``control events`` over a long run).

A line nested too deeply for the decoder is a bad line like any other (see
:mod:`prompt_runner.state.untrusted_json`); duplicate keys are not looked for
(the runner's encoder cannot write one).

A torn final line (no trailing ``\\n``) is never returned by a reader; it is
either completed by its writer or moved aside by the next writer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import orjson

from prompt_runner.errors import StateError
from prompt_runner.state._closing import Closing
from prompt_runner.state.lines import LineAppender, read_complete_lines, repair_torn_tail
from prompt_runner.state.untrusted_json import JsonNestingError

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "JsonlWriter",
    "dumps_lenient",
    "encode_record",
    "iter_from",
    "read_from",
    "read_records",
    "repair_torn_tail",
]

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


def _lenient_default(value: Any) -> Any:
    import dataclasses  # lazy: rare values; `control` commands import this module
    import enum
    from datetime import datetime

    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return str(value)


# One encoder each, built once: json.dumps with arguments builds a new encoder per call.
_LENIENT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_lenient_default)
_LENIENT_ASCII = json.JSONEncoder(separators=(",", ":"), default=_lenient_default)


def dumps_lenient(value: Mapping[str, Any]) -> str:
    """Encode ``value`` as one compact JSON line (no newline), never refusing a value.

    Datetimes become ISO 8601, enums their value, sets sorted lists, bytes
    text, dataclasses and objects with ``to_dict()`` dicts, anything else its
    ``str``. A string UTF-8 cannot hold (a lone surrogate from an odd file
    name) is written ``\\u`` escaped, so the line always encodes.
    """
    text = _LENIENT.encode(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _LENIENT_ASCII.encode(value)
    return text


class JsonlWriter(Closing):
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

    @property
    def appender(self) -> LineAppender:
        """The line appender underneath (for :func:`~prompt_runner.state.lines.sync_together`)."""
        return self._lines

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


_fast_loads, _FastRefused = orjson.loads, orjson.JSONDecodeError
_DIGITS_AS_ZERO = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))  # a digit -> "0"
_NINETEEN_DIGITS = b"0" * 19


def decode_line(raw: bytes) -> dict[str, Any]:
    """Decode one JSONL line into a dict.

    Read with orjson, faster than json on a record line. What orjson refuses
    (NaN, a lone surrogate escape, nesting past 1024, bad input) is read by
    ``json.loads`` as before, so what decodes and every error's text stay
    json's own; so is a line holding a run of 19 digits, which may be an
    integer beyond 64 bits (orjson would read it as a float).

    Raises:
        ValueError: not UTF-8, not JSON, nested too deeply to decode (a
            :class:`~prompt_runner.state.untrusted_json.JsonNestingError`), or
            not a JSON object.
    """
    if _NINETEEN_DIGITS in raw.translate(_DIGITS_AS_ZERO):
        value = _json_loads(raw)
    else:
        try:
            value = _fast_loads(raw)
        except _FastRefused:
            value = _json_loads(raw)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _json_loads(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:  # in place: a call through untrusted_json.loads costs every line
        raise JsonNestingError() from None


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
    return _decode_lines(path, lines, strict=strict, where="")


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
    lines = data[:end].split(b"\n")
    records = _decode_lines(path, lines, strict=strict, where=f" after byte {offset}")
    return records, offset + end + 1


def _decode_lines(
    path: Path, lines: list[bytes], *, strict: bool, where: str
) -> list[dict[str, Any]]:
    """The records of ``lines`` (blank ones skipped); a bad line is skipped, or
    (``strict``) a StateError naming its 1-based number ``where`` it counts from."""
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            records.append(decode_line(raw))
        except ValueError as exc:
            if strict:
                raise StateError(
                    f"corrupt record at line {number}{where} ({exc})", file=path, fix=_FIX
                ) from exc
    return records


CHUNK_BYTES = 1 << 20
"""How much :func:`iter_from` reads at a time (1 MiB)."""


def iter_from(path: Path, offset: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Yield ``(record, offset_after_it)`` for each complete JSON-object line after ``offset``.

    Reads :data:`CHUNK_BYTES` at a time, so memory stays bounded by a chunk
    and the longest line however long the file. A final line without its
    newline is left for a later call; lines that are not JSON objects are
    skipped. A negative ``offset``, or a file now shorter than ``offset`` (it
    was replaced), is read from 0. A missing file yields nothing.
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 -- closed in finally; a generator
    except FileNotFoundError:
        return
    try:
        size = os.fstat(f.fileno()).st_size
        if offset < 0 or offset > size:
            offset = 0
        f.seek(offset)
        pos = offset
        carry = b""
        while True:
            chunk = f.read(CHUNK_BYTES)
            if not chunk:
                return
            data = carry + chunk
            start = 0
            while True:
                nl = data.find(b"\n", start)
                if nl < 0:
                    break
                line = data[start:nl]
                pos += nl + 1 - start
                start = nl + 1
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except (ValueError, RecursionError):  # not JSON, or nested too deeply
                    continue
                if isinstance(value, dict):
                    yield value, pos
            carry = data[start:]
    finally:
        f.close()
