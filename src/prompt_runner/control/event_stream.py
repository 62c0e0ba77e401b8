"""``control/events.jsonl``: the current run's canonical event stream (SPEC 5).

One stream per state root; a different run archives it byte for byte to
``control/events/<run_id>.jsonl`` (:meth:`EventStream.prepare`), the same run
appends to it. Batches are one write each, group-committed: fsync at most
every ``fsync_interval_s`` and on :meth:`EventStream.sync`. Only the run-lock
holder appends; any process reads (O(new bytes) from an offset).

Only the standard library and the light ``state`` helpers are imported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from prompt_runner.errors import StateError
from prompt_runner.state.atomic import fsync_dir, read_json_object, write_bytes_atomic
from prompt_runner.state.jsonl import dumps_lenient, read_from
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.lines import LineAppender, last_newline_offset

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1
WRITE_LINES = 2048
"""Lines per write of :meth:`EventStream.append_lines` (about 250 KB of events)."""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}")
FIX = "restore it or delete it to start over"
"""What an error about a damaged control file tells the user to do."""


def encode_lines(records: Iterable[Mapping[str, Any]]) -> bytes:
    """Records as one block of JSON lines (lenient: see ``state.jsonl.dumps_lenient``)."""
    return b"".join(dumps_lenient(r).encode("utf-8") + b"\n" for r in records)


class EventStream:
    """The event stream of one state root.

    Args:
        layout: the state root's layout.
        fsync_interval_s: longest time, in seconds, appended events may stay
            un-fsynced while appends keep arriving (group commit).

    The stream stays open once appended to; :meth:`close` closes it (it
    reopens on the next append). Not thread safe.
    """

    def __init__(self, layout: StateLayout, *, fsync_interval_s: float) -> None:
        self.layout = layout
        self.fsync_interval_s = fsync_interval_s
        self._appender: LineAppender | None = None

    def append(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Append a batch of events in one write.

        Values JSON cannot hold (datetimes, paths, enums, sets, dataclasses)
        are encoded, never dropped. The file is fsynced when the last fsync is
        older than the interval; call :meth:`sync` at the end of a run.

        Raises:
            OSError: the batch cannot be written.
        """
        if events:
            self._open().append_lines(encode_lines(events))

    def append_lines(self, lines: Sequence[str]) -> None:
        """Append already-encoded JSON object lines (no newline), one write per
        :data:`WRITE_LINES` lines (each write whole lines).

        The fast path for the runner, which encodes each event once and shares
        the encoding between its sinks; same durability as :meth:`append`. A
        busy stream's 100 ms batch is tens of thousands of lines: joined at
        once, its text and bytes are fresh multi-megabyte allocations whose
        page faults cost six times the copying (about 250 ns a line against
        40); joined a chunk at a time they reuse memory already mapped.

        Raises:
            OSError: a chunk cannot be written (the chunks before it stay).
        """
        if not lines:
            return
        appender = self._open()
        for start in range(0, len(lines), WRITE_LINES):
            chunk = lines[start : start + WRITE_LINES]
            appender.append_lines(("\n".join(chunk) + "\n").encode("utf-8", "backslashreplace"))

    def sync(self) -> None:
        """Fsync the stream if appended events are not yet durable."""
        if self._appender is not None:
            self._appender.flush()

    def close(self) -> None:
        """Fsync and close the stream; idempotent."""
        appender, self._appender = self._appender, None
        if appender is not None:
            appender.close()

    def read(self, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Return the events after byte ``offset`` and the offset to resume from.

        Only the bytes after ``offset`` are read. A final line without its
        newline (being written, or torn) is left for the next call; a line that
        is not a JSON object is skipped. If the file is now shorter than
        ``offset`` the stream was replaced by a new run's and is read from 0
        (followers may compare :meth:`run_id` to be sure).

        Args:
            offset: a value previously returned, or 0 for the whole stream.

        Returns:
            ``(events, next_offset)``; ``([], 0)`` when there is no stream.
        """
        return read_from(self.layout.events, max(offset, 0))

    def end_offset(self) -> int:
        """Offset just past the stream's last complete line: where ``--from current`` starts.

        Reads only the stream's tail, however long the stream is.
        """
        try:
            fd = os.open(self.layout.events, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            return last_newline_offset(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)

    def count_events(self) -> int:
        """The events in the stream: its complete lines, less the ``run_finished``
        record each runner invocation ends with (a resumed run's stream holds
        the events of every invocation of it).

        Counted from the bytes, 1 MiB at a time, without decoding a line: in an
        encoded event a ``"`` inside text is escaped, so ``{"kind":"run_finished"``
        appears only where such a record starts. A torn last line (no newline)
        is not counted. ``0`` for a missing stream.
        """
        needle = b'{"kind":"run_finished"'
        lines = finished = 0
        carry = b""
        try:
            fd = os.open(self.layout.events, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            while chunk := os.read(fd, 1 << 20):
                lines += chunk.count(b"\n")
                joined = carry + chunk
                finished += joined.count(needle)
                # the needle's last bytes are kept: a record starting across two reads
                # is counted once, with the next read (no needle fits in what is kept)
                carry = joined[-(len(needle) - 1) :]
        finally:
            os.close(fd)
        return lines - finished

    def run_id(self) -> str | None:
        """The run id the stream belongs to, or ``None`` if unknown."""
        try:
            meta = read_json_object(self.layout.events_meta, fix=FIX)
        except StateError:
            return None
        run_id = meta.get("run_id") if meta else None
        return run_id if isinstance(run_id, str) else None

    def prepare(self, run_id: str) -> None:
        """Make the stream that of ``run_id`` without losing a byte.

        The same run id keeps the stream and appends to it (a resumed run's
        old bytes stay an exact prefix). A different run id first renames the
        current stream, byte for byte, to ``events/<old_run_id>.jsonl``
        (``events/unknown-<time>.jsonl`` if its run is unknown; a numbered
        name if that archive exists) and starts an empty stream.

        Raises:
            ValueError: ``run_id`` is not usable as a file name.
            OSError: the stream cannot be archived or created.
        """
        if not _RUN_ID.fullmatch(run_id):
            raise ValueError(f"run id {run_id!r} is not a usable file name")
        self.close()  # reopened by the next append: repaired, and never the archive
        path = self.layout.events
        self.layout.events_archive_dir.mkdir(parents=True, exist_ok=True)
        current = self.run_id()
        if current != run_id:
            try:
                size = os.stat(path).st_size
            except FileNotFoundError:
                size = -1
            if size > 0 or (size == 0 and current is not None):
                label = current or "unknown-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
                self._archive(label)
            meta = {"schema_version": SCHEMA_VERSION, "run_id": run_id}
            write_bytes_atomic(self.layout.events_meta, dumps_lenient(meta).encode("utf-8"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.close(fd)
        fsync_dir(self.layout.control_dir)

    def _archive(self, label: str) -> None:
        target = self.layout.archived_events(label)
        n = 1
        while os.path.lexists(target):
            n += 1
            target = self.layout.archived_events(f"{label}.{n}")
        os.rename(self.layout.events, target)
        fsync_dir(target.parent)
        fsync_dir(self.layout.control_dir)

    def _open(self) -> LineAppender:
        if self._appender is None or self._appender.closed:
            self._appender = LineAppender(
                self.layout.events, fsync_interval_ms=self.fsync_interval_s * 1000
            )
        return self._appender
