"""Pages of a JSONL file read from byte offsets: the newest N, older ones, what was appended.

The dashboard never reads an events file whole: a run page starts with the
newest :data:`PAGE` records (read backwards from the end in 64 KiB blocks),
asks for the page before a given offset when the user scrolls back, and
follows from the end offset it was given. Every record comes with the byte
offset of its line, so a page boundary is always a line start.

A final line without its newline (being written, or torn by a crash) is
never returned: the page ends at the last newline, and the follower picks the
line up once it is complete. A line that is not a JSON object is shown as an
``unreadable`` record rather than dropped, so a corrupt line is visible. A line
longer than :data:`MAX_LINE_BYTES` is shown as a ``too_large`` record (its
size), so one giant event cannot make a page unbounded.

:class:`StreamId` tells a follower that the file it follows was replaced (a
new run archived the old stream: another inode, or a shorter file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..state.jsonl import decode_line
from ..state.lines import last_newline_offset

PAGE = 200
"""Records in a page unless the caller asks for another count."""

MAX_PAGE = 2000
"""The most records one page returns, whatever is asked."""

MAX_LINE_BYTES = 1 << 20
"""A line longer than this (1 MiB) is summarised, not decoded."""

_BLOCK = 64 * 1024
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Page:
    """Records of one page.

    Attributes:
        records: ``(offset of the line, record)`` in file order.
        start: offset of the first line returned (``end`` when none was).
        end: offset just past the last complete line returned.
        size: the file's size when it was read (0 for a missing file).
    """

    records: list[tuple[int, dict[str, Any]]]
    start: int
    end: int
    size: int

    @property
    def more_before(self) -> bool:
        """True when older lines exist before :attr:`start`."""
        return self.start > 0


@dataclass(frozen=True)
class StreamId:
    """Which file a follower reads: device and inode (``None`` when it is missing)."""

    dev: int | None
    ino: int | None

    @classmethod
    def of(cls, path: Path) -> StreamId:
        """The identity of ``path`` now."""
        try:
            st = os.stat(path)
        except OSError:
            return cls(None, None)
        return cls(st.st_dev, st.st_ino)

    @property
    def token(self) -> str:
        """A short text naming this identity (sent to the page and back)."""
        return "none" if self.ino is None else f"{self.dev}-{self.ino}"


def _decode(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_LINE_BYTES:
        return {"kind": "too_large", "bytes": len(raw)}
    try:
        return decode_line(raw)
    except ValueError:
        return {
            "kind": "unreadable",
            "bytes": len(raw),
            "preview": raw[:200].decode("utf-8", "replace"),
        }


def _limit(limit: int) -> int:
    return max(1, min(int(limit), MAX_PAGE))


def newest(path: Path, limit: int = PAGE, *, before: int | None = None) -> Page:
    """The newest ``limit`` complete records of ``path`` that end at or before ``before``.

    Args:
        path: a JSONL file (missing: an empty page).
        limit: how many records (1 .. :data:`MAX_PAGE`).
        before: an offset from an earlier page's ``start`` (``None``: the end of
            the file). An offset in the middle of a line ends the page at the
            line start before it.

    Cost: the bytes of the lines returned plus at most one block, however big
    the file is (a line longer than :data:`MAX_LINE_BYTES` is stepped over in
    blocks, not held).
    """
    limit = _limit(limit)
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return Page([], 0, 0, 0)
    try:
        size = os.fstat(fd).st_size
        end = size if before is None else max(0, min(int(before), size))
        end = _line_start_at_or_before(fd, end, size)
        records: list[tuple[int, dict[str, Any]]] = []
        pos = end  # everything in [pos, end) is complete lines already handled
        carry = b""  # bytes of the line that ends at ``pos + len(carry)``, not yet whole
        carried = 0  # bytes of that line stepped over (a line too long to hold)
        while pos > 0 and len(records) < limit:
            start = max(0, pos - _BLOCK)
            block = os.pread(fd, pos - start, start)
            data = block + carry
            cut = len(data)
            while len(records) < limit:
                nl = data.rfind(b"\n", 0, cut - 1) if cut > 0 else -1
                if nl < 0:
                    break
                line = data[nl + 1 : cut - 1]
                line_at = start + nl + 1
                if carried:
                    records.append((line_at, {"kind": "too_large", "bytes": carried + len(line)}))
                    carried = 0
                elif line.strip():
                    records.append((line_at, _decode(line)))
                cut = nl + 1
            carry = data[:cut]
            pos = start
            if len(carry) > MAX_LINE_BYTES:
                carried += len(carry)
                carry = carry[-1:]  # keep only its newline so the loop knows where it ends
                carried -= 1
        if pos == 0 and len(records) < limit and carry:
            line = carry[:-1]
            if carried:
                records.append((0, {"kind": "too_large", "bytes": carried + len(line)}))
            elif line.strip():
                records.append((0, _decode(line)))
        records.reverse()
        first = records[0][0] if records else end
        return Page(records, first, end, size)
    finally:
        os.close(fd)


def _line_start_at_or_before(fd: int, offset: int, size: int) -> int:
    """``offset`` if a line starts there (or it is 0), else the start of the line
    holding it; at the end of the file, just past the last newline."""
    if offset == 0:
        return 0
    if offset <= size and os.pread(fd, 1, offset - 1) == b"\n":
        return offset
    return last_newline_offset(fd, offset)


def after(path: Path, offset: int, *, max_bytes: int = 1 << 20) -> Page:
    """The complete records written after ``offset``, reading at most ``max_bytes``.

    Args:
        offset: an earlier page's ``end``. A file now shorter than it was
            replaced: the page then has ``size < offset`` and no records (the
            caller starts over; see :class:`StreamId`).
        max_bytes: read budget; a caller far behind gets the first part and
            asks again from the returned ``end``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return Page([], offset, offset, 0)
    try:
        size = os.fstat(fd).st_size
        if size <= offset:
            return Page([], offset, offset, size)
        want = min(size - offset, max(max_bytes, MAX_LINE_BYTES + 1))
        data = os.pread(fd, want, offset)
        last = data.rfind(b"\n")
        if last < 0:
            if len(data) > MAX_LINE_BYTES:  # one giant line: step over it
                skip = _next_newline(fd, offset + len(data), size)
                if skip is not None:
                    rec = {"kind": "too_large", "bytes": skip - offset - 1}
                    return Page([(offset, rec)], offset, skip, size)
            return Page([], offset, offset, size)
        records: list[tuple[int, dict[str, Any]]] = []
        at = 0
        while at <= last:
            nl = data.find(b"\n", at)
            line = data[at:nl]
            if line.strip():
                records.append((offset + at, _decode(line)))
            at = nl + 1
        return Page(records, offset, offset + last + 1, size)
    finally:
        os.close(fd)


def _next_newline(fd: int, pos: int, size: int) -> int | None:
    """Offset just past the first newline at or after ``pos``, or ``None``."""
    while pos < size:
        chunk = os.pread(fd, min(_BLOCK, size - pos), pos)
        index = chunk.find(b"\n")
        if index >= 0:
            return pos + index + 1
        pos += len(chunk)
    return None
