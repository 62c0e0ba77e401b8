"""The control plane's file transport for one state root (SPEC 5).

Layout under ``state_root`` (a packet's ``.prompt_runner/`` or an operator
runtime directory)::

    control/
      tmp/             requests being written; renamed into requests/ when whole
      requests/        one file per command, kept until its outcome is durable
      outcomes/        write-once outcome receipt per request (same file name)
      log.jsonl        append-only audit: every command, who, when, outcome
      snapshot.json    atomically replaced run header
      events.jsonl     append-only canonical event stream of the current run
      events.meta.json the run id ``events.jsonl`` belongs to
      events/          earlier runs' streams, ``<run_id>.jsonl``

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
returned by readers and is moved aside to ``<file>.torn`` the first time this
store appends to that file, so it is never glued to the next record.

Only the standard library is imported: ``control status`` is on the CLI's hot
path.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from prompt_runner.errors import StateError

TYPE_CHECKING = False  # typing costs import time on the CLI hot path
if TYPE_CHECKING:
    from typing import Any

MAX_REQUEST_BYTES = 1024 * 1024
"""Requests larger than this (1 MiB) are rejected as ``too large`` unread."""

SCHEMA_VERSION = 1

# Reasons a pending request is rejected before its payload is looked at.
UNPARSEABLE = "unparseable"
TOO_LARGE = "too large"
BAD_NAME = "bad request name"
NOT_A_FILE = "not a regular file"
UNREADABLE = "unreadable"

_REQUEST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.json")
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}")
_STALE_TEMP_S = 600.0
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


class ControlStore:
    """File transport of the control plane under ``state_root / "control"``.

    Args:
        state_root: the packet's ``.prompt_runner/`` or an operator runtime dir.
        events_fsync_interval_s: longest time, in seconds, appended events may
            stay un-fsynced while appends keep arriving (group commit).
    """

    def __init__(self, state_root: Path, *, events_fsync_interval_s: float = 0.5) -> None:
        self.state_root = Path(state_root)
        self.events_fsync_interval_s = events_fsync_interval_s
        self._repaired: set[Path] = set()
        self._events_synced_at = time.monotonic()
        self._events_dirty = False
        self._logged: dict[str, dict[str, Any]] = {}
        self._log_offset = 0

    # -- paths ---------------------------------------------------------------

    @property
    def control_dir(self) -> Path:
        """``<state_root>/control``."""
        return self.state_root / "control"

    @property
    def requests_dir(self) -> Path:
        """Directory of pending requests."""
        return self.control_dir / "requests"

    @property
    def outcomes_dir(self) -> Path:
        """Directory of write-once outcome receipts."""
        return self.control_dir / "outcomes"

    @property
    def tmp_dir(self) -> Path:
        """Where requests are written before being renamed into ``requests/``."""
        return self.control_dir / "tmp"

    @property
    def log_path(self) -> Path:
        """The append-only control log (JSONL)."""
        return self.control_dir / "log.jsonl"

    @property
    def snapshot_path(self) -> Path:
        """The atomically replaced run snapshot."""
        return self.control_dir / "snapshot.json"

    @property
    def events_path(self) -> Path:
        """The current run's canonical event stream (JSONL)."""
        return self.control_dir / "events.jsonl"

    @property
    def events_meta_path(self) -> Path:
        """Sidecar naming the run id ``events.jsonl`` belongs to."""
        return self.control_dir / "events.meta.json"

    def archived_events_path(self, run_id: str) -> Path:
        """Where the stream of ``run_id`` is kept once a different run starts."""
        return self.control_dir / "events" / f"{run_id}.jsonl"

    def request_outcome_path(self, name: str) -> Path:
        """The receipt path for request file ``name`` (raises ValueError on a path)."""
        return self.outcomes_dir / _basename(name)

    # -- lifecycle -------------------------------------------------------------

    def init(self) -> None:
        """Create the directory layout and sweep stale temp files.

        Temp files older than ten minutes can only be orphans of killed
        processes; younger ones may belong to a live writer and are kept.

        Raises:
            OSError: the directories cannot be created.
        """
        for d in (self.tmp_dir, self.requests_dir, self.outcomes_dir, self.control_dir / "events"):
            d.mkdir(parents=True, exist_ok=True)
        cutoff = time.time() - _STALE_TEMP_S
        for d, dot_only in (
            (self.tmp_dir, False),
            (self.outcomes_dir, True),
            (self.control_dir, True),
        ):
            for entry in os.scandir(d):
                if dot_only and not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
                except OSError:
                    continue

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
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        self.requests_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.tmp_dir / f"{os.getpid()}-{os.urandom(6).hex()}.tmp"
        try:
            _write_new(tmp, data)
            name = _request_name()
            os.rename(tmp, self.requests_dir / name)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        _fsync_dir(self.requests_dir)
        return name

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
                self._discard_request(name)
                continue
            logged = self._logged.get(name)
            if logged is not None:
                self.complete_request(name, logged)
                continue
            item = self._read_request(name)
            if item is not None:
                items.append(item)
        return items

    def pending_names(self) -> list[str]:
        """Names in ``requests/``, oldest first, read-only (for status displays).

        Unlike :meth:`pending_requests` this acknowledges nothing, so any
        process may call it; it may include requests already decided.
        """
        try:
            return sorted(os.listdir(self.requests_dir))
        except FileNotFoundError:
            return []

    def complete_request(self, name: str, outcome: Mapping[str, Any]) -> None:
        """Persist the write-once receipt of ``name``, then remove the request.

        The receipt is written to a temp file, fsynced and hard-linked into
        ``outcomes/`` (a link never overwrites: an existing receipt is kept
        as it is), then the directory is fsynced, and only then is the
        request removed. A crash leaves at worst both files, which
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
            self.outcomes_dir.mkdir(parents=True, exist_ok=True)
            data = _dumps(outcome).encode("utf-8")
            tmp = self.outcomes_dir / f".receipt-{os.getpid()}-{os.urandom(6).hex()}.tmp"
            try:
                _write_new(tmp, data)
                try:
                    os.link(tmp, receipt)
                except FileExistsError:
                    pass
                except OSError:  # no hard links here: exclusive create instead
                    with contextlib.suppress(FileExistsError):
                        _write_new(receipt, data)
            finally:
                _unlink_quietly(tmp)
            _fsync_dir(self.outcomes_dir)
        self._discard_request(name)

    def read_outcome(self, name: str) -> dict[str, Any] | None:
        """Return the receipt of request ``name``, or ``None`` if it has none.

        Raises:
            StateError: the receipt exists but is not a JSON object.
        """
        return _read_json_object(self.request_outcome_path(name))

    def _read_request(self, name: str) -> PendingRequest | None:
        path = self.requests_dir / name
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
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return PendingRequest(name, None, UNPARSEABLE, str(exc))
        if not isinstance(payload, dict):
            kind = type(payload).__name__
            return PendingRequest(name, None, UNPARSEABLE, f"a JSON {kind}, not an object")
        return PendingRequest(name, payload)

    def _discard_request(self, name: str) -> None:
        path = self.requests_dir / _basename(name)
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        except (IsADirectoryError, PermissionError):
            import shutil

            shutil.rmtree(path, ignore_errors=True)

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
        self._append(self.log_path, [entry], sync=True)

    def read_log(self) -> list[dict[str, Any]]:
        """Return every complete entry of ``log.jsonl`` (``[]`` if there is none)."""
        return self.read_log_from(0)[0]

    def read_log_from(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """Return the log entries after byte ``offset`` and the offset to resume from.

        Reads only the bytes after ``offset`` (O(new bytes)); see :meth:`read_events`.
        """
        return _read_jsonl(self.log_path, offset)

    # -- snapshot --------------------------------------------------------------

    def write_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        """Replace ``snapshot.json`` atomically (temp file, ``os.replace``).

        A concurrent reader sees the old file or the new one, never a mix.
        ``schema_version`` is added when absent. Nothing is fsynced: the
        snapshot is a live view the runner rewrites at every event batch and
        boundary, not a record; after a power loss it may be stale, empty or
        gone, and :meth:`read_snapshot` treats a damaged one as missing.

        Raises:
            OSError: the snapshot cannot be written (the old one stays).
        """
        body = dict(snapshot)
        body.setdefault("schema_version", SCHEMA_VERSION)
        self._replace(self.snapshot_path, body, durable=False)

    def read_snapshot(self) -> dict[str, Any] | None:
        """Return the snapshot, or ``None`` when there is none (never written, or
        left damaged by a power loss: a view, rewritten by the next run)."""
        try:
            return _read_json_object(self.snapshot_path)
        except StateError:
            return None

    # -- events ----------------------------------------------------------------

    def append_events(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Append a batch of events to ``events.jsonl`` in one write.

        Values JSON cannot hold (datetimes, paths, enums, sets, dataclasses)
        are encoded, never dropped. The file is fsynced when the last fsync is
        older than ``events_fsync_interval_s``; call :meth:`sync_events` at the
        end of a run.

        Raises:
            OSError: the batch cannot be written.
        """
        if not events:
            return
        now = time.monotonic()
        sync = now - self._events_synced_at >= self.events_fsync_interval_s
        self._append(self.events_path, events, sync=sync)
        if sync:
            self._events_synced_at = now
            self._events_dirty = False
        else:
            self._events_dirty = True

    def append_event_lines(self, lines: Sequence[str]) -> None:
        """Append already-encoded JSON object lines (no newline) in one write.

        The fast path for the runner, which encodes each event once and shares
        the encoding between its sinks; same durability as :meth:`append_events`.
        """
        if not lines:
            return
        now = time.monotonic()
        sync = now - self._events_synced_at >= self.events_fsync_interval_s
        data = ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace")
        self._append_bytes(self.events_path, data, sync=sync)
        if sync:
            self._events_synced_at = now
            self._events_dirty = False
        else:
            self._events_dirty = True

    def append_event(self, event: Mapping[str, Any]) -> None:
        """Append one event; see :meth:`append_events` (prefer batches)."""
        self.append_events([event])

    def sync_events(self) -> None:
        """Fsync ``events.jsonl`` if appended events are not yet durable."""
        if self._events_dirty:
            _fsync_path(self.events_path)
            self._events_dirty = False
            self._events_synced_at = time.monotonic()

    def read_events(self, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
        """Return the events after byte ``offset`` and the offset to resume from.

        Only the bytes after ``offset`` are read. A final line without its
        newline (being written, or torn) is left for the next call; a line that
        is not a JSON object is skipped. If the file is now shorter than
        ``offset`` the stream was replaced by a new run's and is read from 0
        (followers may compare :meth:`event_stream_run_id` to be sure).

        Args:
            offset: a value previously returned, or 0 for the whole stream.

        Returns:
            ``(events, next_offset)``; ``([], 0)`` when there is no stream.
        """
        return _read_jsonl(self.events_path, offset)

    def events_end_offset(self) -> int:
        """Offset just past the stream's last complete line: where ``--from current`` starts.

        Reads only the stream's tail, however long the stream is.
        """
        try:
            fd = os.open(self.events_path, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            return _end_of_last_line(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)

    def event_stream_run_id(self) -> str | None:
        """The run id ``events.jsonl`` belongs to, or ``None`` if unknown."""
        try:
            meta = _read_json_object(self.events_meta_path)
        except StateError:
            return None
        run_id = meta.get("run_id") if meta else None
        return run_id if isinstance(run_id, str) else None

    def prepare_event_stream(self, run_id: str) -> None:
        """Make ``events.jsonl`` the stream of ``run_id`` without losing a byte.

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
        (self.control_dir / "events").mkdir(parents=True, exist_ok=True)
        current = self.event_stream_run_id()
        if current != run_id:
            try:
                size = os.stat(self.events_path).st_size
            except FileNotFoundError:
                size = -1
            if size > 0 or (size == 0 and current is not None):
                label = current or "unknown-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
                self._archive_events(label)
            self._replace(
                self.events_meta_path, {"schema_version": SCHEMA_VERSION, "run_id": run_id}
            )
        fd = os.open(self.events_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.close(fd)
        _fsync_dir(self.control_dir)
        self._repaired.discard(self.events_path)

    def _archive_events(self, label: str) -> None:
        target = self.archived_events_path(label)
        n = 1
        while os.path.lexists(target):
            n += 1
            target = self.archived_events_path(f"{label}.{n}")
        os.rename(self.events_path, target)
        _fsync_dir(target.parent)
        _fsync_dir(self.control_dir)

    # -- writing helpers -------------------------------------------------------

    def _append(self, path: Path, records: Iterable[Mapping[str, Any]], *, sync: bool) -> None:
        data = b"".join(_dumps(r).encode("utf-8") + b"\n" for r in records)
        self._append_bytes(path, data, sync=sync)

    def _append_bytes(self, path: Path, data: bytes, *, sync: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        created = False
        if path not in self._repaired:
            created = not _repair_torn_tail(path)
            self._repaired.add(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _write_all(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if created and sync:
            _fsync_dir(path.parent)

    def _replace(self, path: Path, body: Mapping[str, Any], *, durable: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}-{os.getpid()}-{os.urandom(6).hex()}.tmp")
        try:
            _write_new(tmp, _dumps(body).encode("utf-8"), sync=durable)
            os.replace(tmp, path)
        except BaseException:
            _unlink_quietly(tmp)
            raise


# -- module helpers ------------------------------------------------------------


def _request_name() -> str:
    """``YYYYmmdd-HHMMSS-ffffff-<pid>-<random>.json``, strictly increasing per process."""
    global _last_name_us
    us = time.time_ns() // 1000
    if us <= _last_name_us:
        us = _last_name_us + 1
    _last_name_us = us
    stamp = datetime.fromtimestamp(us // 1_000_000, UTC).replace(microsecond=us % 1_000_000)
    return f"{stamp:%Y%m%d-%H%M%S-%f}-{os.getpid():07d}-{os.urandom(4).hex()}.json"


def _basename(name: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"{name!r} is not a plain file name")
    return name


def _json_default(value: Any) -> Any:
    import dataclasses
    import enum

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
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_json_default)
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_json_default)


def _dumps(value: Mapping[str, Any]) -> str:
    text = _ENCODER.encode(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (odd file names): escape them
        text = _ASCII_ENCODER.encode(value)
    return text


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_new(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Create ``path`` exclusively, write ``data`` and (unless ``sync=False``) fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


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


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_path(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _read_json_object(path: Path) -> dict[str, Any] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise StateError(
            f"is not valid JSON ({exc})", file=path, fix="restore it or delete it to start over"
        ) from exc
    if not isinstance(value, dict):
        raise StateError(
            "must hold a JSON object", file=path, fix="restore it or delete it to start over"
        )
    return value


def _read_jsonl(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    try:
        f = open(path, "rb")  # noqa: SIM115 -- closed below; avoids a second stat
    except FileNotFoundError:
        return [], 0
    with f:
        size = os.fstat(f.fileno()).st_size
        if offset < 0 or offset > size:
            offset = 0
        f.seek(offset)
        data = f.read(size - offset)
    end = data.rfind(b"\n") + 1
    records: list[dict[str, Any]] = []
    for line in data[:end].splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records, offset + end


def _repair_torn_tail(path: Path) -> bool:
    """Move a final line without newline to ``<path>.torn`` and cut it off ``path``.

    Returns:
        False when ``path`` does not exist, else True.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return True
        cut = _end_of_last_line(fd, size)
        torn = os.pread(fd, size - cut, cut)
        aside = path.with_name(path.name + ".torn")
        afd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _write_all(afd, torn + b"\n")
            os.fsync(afd)
        finally:
            os.close(afd)
        os.ftruncate(fd, cut)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def _end_of_last_line(fd: int, size: int) -> int:
    """Byte offset just past the last newline in the first ``size`` bytes (0 if none)."""
    pos = size
    while pos > 0:
        start = max(0, pos - (1 << 16))
        i = os.pread(fd, pos - start, start).rfind(b"\n")
        if i >= 0:
            return start + i + 1
        pos = start
    return 0
