"""The control plane's file transport for one state root (SPEC 5).

Under ``<state_root>/control/`` (a packet's ``.prompt_runner/`` or an operator
runtime directory; paths in :class:`~prompt_runner.state.layout.StateLayout`):
``tmp/`` and ``requests/`` (one file per command, kept until its outcome is
durable), ``outcomes/`` (write-once receipts), ``log.jsonl`` (every command,
who, when, outcome), ``snapshot.json`` (the live run header) and
``events.jsonl`` with ``events.meta.json`` and ``events/`` (the event stream,
:mod:`prompt_runner.control.event_stream`).

A directory rather than a socket: no daemon, it survives the runner dying,
and every piece is inspectable with ``cat``.

Who writes what. Any process may call :meth:`ControlStore.write_request`.
Everything else that writes (log, receipts, snapshot, events) belongs to the
one consumer -- the runner holding the packet's run lock -- and a store
instance is not thread safe.

Exactly-once application (the consumer's protocol)::

    for item in store.pending_requests():
        entry = decide(item)                 # apply, or refuse with a reason
        store.append_log({**entry, "request": item.name})   # commit point
        store.complete_request(item.name, entry)            # receipt, then delete

The log line is the commit point of a decision, the receipt the commit point
of the request file. A crash before the log line loses only in-memory effects
that died with the process, so deciding again is correct. A crash after the
log line but before the receipt is repaired by :meth:`pending_requests`: it
sees the request's name in the log, writes the receipt from that log entry
and removes the request without returning it. A crash after the receipt but
before the delete is acknowledged the same way. So every request is decided
and logged exactly once and none is lost. (The alternative -- receipt first,
log after -- can lose the audit line, which SPEC 5 forbids: refusals too must
leave a trace.)

Durability: requests, receipts and log lines are fsynced (and their
directories where a name appears); events are group-committed: one write per
batch, fsync at most every ``events_fsync_interval_s`` (and on
:meth:`sync_events`). A torn final JSONL line (a crash mid-append) is never
returned by readers and is moved aside to ``<file>.torn.<stamp>`` when this
store first appends to that file, so it is never glued to the next record.

Every file goes through ``state/``: paths from
:class:`~prompt_runner.state.layout.StateLayout`, appends through
:class:`~prompt_runner.state.lines.LineAppender` (kept open: call
:meth:`ControlStore.close` when done), replaced files through
:func:`~prompt_runner.state.atomic.write_bytes_atomic`, reads through
:mod:`prompt_runner.state.jsonl`; requests and receipts are
:mod:`prompt_runner.control.inbox`. Only the standard library and those
light modules are imported: ``control status`` is on the CLI's hot path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from prompt_runner.control import inbox
from prompt_runner.control.event_stream import FIX, SCHEMA_VERSION, EventStream, encode_lines
from prompt_runner.control.inbox import MAX_REQUEST_BYTES, PendingRequest
from prompt_runner.errors import StateError
from prompt_runner.state._closing import Closing
from prompt_runner.state.atomic import DeferredReplace, read_json_object, write_bytes_atomic
from prompt_runner.state.jsonl import dumps_lenient, read_from
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.lines import LineAppender

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_REQUEST_BYTES", "SCHEMA_VERSION", "ControlStore", "PendingRequest"]

_STALE_TEMP_S = 600.0
_dumps = dumps_lenient  # the encoding of every line and document written here


class ControlStore(Closing):
    """File transport of the control plane under ``state_root / "control"``.

    Args:
        state_root: the packet's ``.prompt_runner/`` or an operator runtime dir.
        events_fsync_interval_s: longest time, in seconds, appended events may
            stay un-fsynced while appends keep arriving (group commit).

    The log and the event stream stay open once appended to; :meth:`close`
    (or ``with``) closes them. A closed store stays usable (files reopen).
    """

    def __init__(self, state_root: Path, *, events_fsync_interval_s: float = 0.5) -> None:
        self.state_root = Path(state_root)
        self.layout = StateLayout(self.state_root)
        self._requests_path = os.fspath(self.layout.requests_dir)  # listed per tick
        self.events = EventStream(self.layout, fsync_interval_s=events_fsync_interval_s)
        """The event stream (``events.jsonl``); the ``*event*`` methods below use it."""
        self._log: LineAppender | None = None
        self._logged: dict[str, dict[str, Any]] = {}
        self._log_offset = 0
        self._snapshot_writer: DeferredReplace | None = None

    # -- paths ---------------------------------------------------------------

    @property
    def control_dir(self) -> Path:
        """``<state_root>/control``."""
        return self.layout.control_dir

    @property
    def requests_dir(self) -> Path:
        """Directory of pending requests."""
        return self.layout.requests_dir

    @property
    def outcomes_dir(self) -> Path:
        """Directory of write-once outcome receipts."""
        return self.layout.outcomes_dir

    @property
    def tmp_dir(self) -> Path:
        """Where requests are written before being renamed into ``requests/``."""
        return self.layout.control_tmp_dir

    @property
    def log_path(self) -> Path:
        """The append-only control log (JSONL)."""
        return self.layout.control_log

    @property
    def snapshot_path(self) -> Path:
        """The atomically replaced run snapshot."""
        return self.layout.snapshot

    @property
    def events_path(self) -> Path:
        """The current run's canonical event stream (JSONL)."""
        return self.layout.events

    @property
    def events_meta_path(self) -> Path:
        """Sidecar naming the run id ``events.jsonl`` belongs to."""
        return self.layout.events_meta

    def archived_events_path(self, run_id: str) -> Path:
        """Where the stream of ``run_id`` is kept once a different run starts."""
        return self.layout.archived_events(run_id)

    def request_outcome_path(self, name: str) -> Path:
        """The receipt path for request file ``name`` (raises ValueError on a path)."""
        return self.outcomes_dir / inbox.basename(name)

    # -- lifecycle -------------------------------------------------------------

    def init(self) -> None:
        """Create the directory layout and sweep stale temp files.

        Temp files older than ten minutes can only be orphans of killed
        processes; younger ones may belong to a live writer and are kept.

        Raises:
            OSError: the directories cannot be created.
        """
        for d in (self.tmp_dir, self.requests_dir, self.outcomes_dir):
            d.mkdir(parents=True, exist_ok=True)
        self.layout.events_archive_dir.mkdir(exist_ok=True)
        inbox.sweep_stale_temps(self.layout, older_than_s=_STALE_TEMP_S)

    def close(self) -> None:
        """Write a deferred snapshot, make appended events durable and close the log
        and the stream; idempotent.

        Raises:
            StorageError: held-back events cannot be made durable, or the last
                deferred snapshot could not be written.
        """
        log, self._log = self._log, None
        writer, self._snapshot_writer = self._snapshot_writer, None
        try:
            if writer is not None:
                writer.close()
        finally:
            try:
                self.events.close()
            finally:
                if log is not None:
                    log.close()

    # -- requests --------------------------------------------------------------

    def write_request(self, request: Mapping[str, Any]) -> str:
        """Write one request whole, or not at all, and return its file name.

        The JSON is written to ``tmp/``, fsynced, renamed into ``requests/``
        and the directory fsynced. The name is a sortable UTC timestamp with
        microseconds, taken just before the rename and strictly increasing
        within a process, plus the pid and a random suffix, so racing writers
        never collide and name order is arrival order.

        Args:
            request: a JSON-serialisable mapping (see ``requests.build_request``).

        Returns:
            The request's file name inside ``requests/``.

        Raises:
            ValueError: the request serialises to more than ``MAX_REQUEST_BYTES``.
            OSError: the file cannot be written.
        """
        data = _dumps(request).encode("utf-8")
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError(f"request is {len(data)} bytes; the limit is {MAX_REQUEST_BYTES}")
        return inbox.write_request(self.layout, data)

    def pending_requests(self) -> list[PendingRequest]:
        """Return pending requests in arrival (= name) order, without removing them.

        A request that already has a receipt, or whose name already appears
        as ``request`` in the control log, was decided before a crash: it is
        acknowledged (receipted from its log entry if needed, then removed)
        and not returned. Nothing here raises on bad input: odd names,
        dotfiles, non-JSON, JSON that is not an object, oversized files and
        non-files come back with ``error`` set.

        Returns:
            One :class:`PendingRequest` per file, oldest first.

        Only the consumer (the run-lock holder) calls this: it writes receipts.

        Raises:
            OSError: the requests directory exists but cannot be listed, or
                the receipt of an already-logged request cannot be written.
        """
        try:
            names = sorted(os.listdir(self.requests_dir))
        except FileNotFoundError:
            return []
        self._refresh_logged()
        items: list[PendingRequest] = []
        for name in names:
            if os.path.lexists(self.outcomes_dir / name):
                inbox.discard_request(self.layout, name)
                continue
            logged = self._logged.get(name)
            if logged is not None:
                self.complete_request(name, logged)
                continue
            item = inbox.read_request(self.layout, name)
            if item is not None:
                items.append(item)
        return items

    def pending_names(self) -> list[str]:
        """Names in ``requests/``, oldest first, read-only (for status displays).

        Unlike :meth:`pending_requests` this acknowledges nothing, so any
        process may call it; it may include requests already decided.
        """
        try:
            return sorted(os.listdir(self._requests_path))
        except FileNotFoundError:
            return []

    def complete_request(self, name: str, outcome: Mapping[str, Any]) -> None:
        """Persist the write-once receipt of ``name``, then remove the request.

        The receipt is made durable first (see :func:`inbox.write_receipt`; an
        existing receipt is kept as it is), and only then is the request
        removed. A crash leaves at worst both files, which
        :meth:`pending_requests` acknowledges.

        Args:
            name: the request's file name, as returned by :meth:`pending_requests`.
            outcome: JSON-serialisable receipt body (usually the log entry).

        Raises:
            ValueError: ``name`` is not a plain file name.
            OSError: the receipt cannot be made durable (the request stays).
        """
        receipt = self.request_outcome_path(name)
        if not os.path.lexists(receipt):
            inbox.write_receipt(receipt, _dumps(outcome).encode("utf-8"))
        inbox.discard_request(self.layout, name)

    def read_outcome(self, name: str) -> dict[str, Any] | None:
        """Return the receipt of request ``name``, or ``None`` if it has none.

        Raises:
            StateError: the receipt exists but is not a JSON object.
        """
        return read_json_object(self.request_outcome_path(name), fix=FIX)

    def _refresh_logged(self) -> None:
        entries, self._log_offset = self.read_log_from(self._log_offset)
        for entry in entries:
            request = entry.get("request")
            if isinstance(request, str):
                self._logged[request] = entry

    # -- log -------------------------------------------------------------------

    def append_log(self, entry: Mapping[str, Any]) -> None:
        """Append one entry to ``log.jsonl`` and fsync it.

        An entry carrying ``request: <name>`` marks that request as decided
        (see the module docstring).

        Raises:
            OSError: the line cannot be written or synced.
        """
        if self._log is None or self._log.closed:
            self._log = LineAppender(self.log_path)
        self._log.append_lines(encode_lines([entry]))

    def read_log(self) -> list[dict[str, Any]]:
        """Return every complete entry of ``log.jsonl`` (``[]`` if there is none)."""
        return self.read_log_from(0)[0]

    def read_log_from(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """Return the log entries after byte ``offset`` and the offset to resume from.

        Reads only the bytes after ``offset`` (O(new bytes)); see :meth:`read_events`.
        """
        return read_from(self.log_path, max(offset, 0))

    # -- snapshot --------------------------------------------------------------

    def write_snapshot(self, snapshot: Mapping[str, Any], *, deferred: bool = False) -> None:
        """Replace ``snapshot.json`` atomically (temp file, ``os.replace``).

        A concurrent reader sees the old file or the new one, never a mix.
        ``schema_version`` is added when absent. Nothing is fsynced: the
        snapshot is a live view the runner rewrites at every event batch and
        boundary, not a record; after a power loss it may be stale, empty or
        gone, and :meth:`read_snapshot` treats a damaged one as missing.

        ``snapshot`` is encoded now. With ``deferred=True`` the file is replaced
        by this store's kept writer thread (``state.atomic.DeferredReplace``:
        the newest snapshot handed over wins, a reader in this process --
        :meth:`read_snapshot`, ``control.runs.snapshot`` -- waits for it) and
        the call returns at once; :meth:`flush_snapshot` and :meth:`close` wait
        for it. A plain call waits for a deferred one first, so the file never
        goes back to an older snapshot.

        Raises:
            OSError: the snapshot cannot be written (the old one stays); a
                deferred write's error is raised by the next call, once.
        """
        body = dict(snapshot)
        body.setdefault("schema_version", SCHEMA_VERSION)
        data = _dumps(body).encode("utf-8")
        if deferred:
            if self._snapshot_writer is None:
                self._snapshot_writer = DeferredReplace(self.snapshot_path)
            self._snapshot_writer.replace(data)
            return
        try:
            self.flush_snapshot()
        finally:  # written even after a deferred write's error, which is raised then
            write_bytes_atomic(self.snapshot_path, data, durable=False)

    def flush_snapshot(self) -> None:
        """Wait until a deferred snapshot is written (at once when none is pending).

        Raises:
            OSError: a deferred write failed since the last report.
        """
        if self._snapshot_writer is not None:
            self._snapshot_writer.flush()

    def read_snapshot(self) -> dict[str, Any] | None:
        """Return the snapshot, or ``None`` when there is none (never written, or
        left damaged by a power loss: a view, rewritten by the next run)."""
        try:
            return read_json_object(self.snapshot_path, fix=FIX)
        except StateError:
            return None

    # -- events (control/event_stream.py) ----------------------------------------

    def append_events(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Append a batch of events in one write (:meth:`EventStream.append`)."""
        self.events.append(events)

    def append_event_lines(self, lines: Sequence[str]) -> None:
        """Append encoded event lines in one write (:meth:`EventStream.append_lines`)."""
        self.events.append_lines(lines)

    def append_event(self, event: Mapping[str, Any]) -> None:
        """Append one event; see :meth:`append_events` (prefer batches)."""
        self.events.append([event])

    def sync_events(self) -> None:
        """Fsync ``events.jsonl`` if appended events are not yet durable."""
        self.events.sync()

    def read_events(self, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Events after byte ``offset`` and the offset to resume from (:meth:`EventStream.read`)."""
        return self.events.read(offset)

    def events_end_offset(self) -> int:
        """Offset just past the stream's last complete line (``--from current``)."""
        return self.events.end_offset()

    def event_stream_run_id(self) -> str | None:
        """The run id ``events.jsonl`` belongs to, or ``None`` if unknown."""
        return self.events.run_id()

    def prepare_event_stream(self, run_id: str) -> None:
        """Make ``events.jsonl`` the stream of ``run_id`` (:meth:`EventStream.prepare`)."""
        self.events.prepare(run_id)

    def count_stream_events(self) -> int:
        """The events in ``events.jsonl`` (:meth:`EventStream.count_events`)."""
        return self.events.count_events()
