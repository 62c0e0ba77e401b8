"""The runtime store (SPEC 6): where the runner keeps prompt state, progress and journals.

Three implementations of :class:`RuntimeStore`:

* :class:`FileStore` -- files under a root, normally ``<packet>/.prompt_runner/``;
* :class:`MemoryStore` -- everything in memory, no filesystem writes at all
  (the default for API runs);
* :class:`NoopStore` -- discards every write and reads empty.

All values crossing the API are JSON-safe dicts; stores copy what they are
given and what they return.

The *state document* (:meth:`RuntimeStore.load_state`, what ``status --json``
prints)::

    {"schema_version": 1, "version": 1, "run_id": "...", "updated_at": "...",
     <other run meta>,
     "prompts": {"01": {"status": "...", ..., "attempts": [{...}, ...]}}}

File layout of :class:`FileStore` (root = ``.prompt_runner/``)::

    state.json                  run meta + one small summary per prompt
                                ({"status", "attempt_count"}), atomically replaced
    prompts/<prompt_id>.jsonl   the prompt's full record as an operation log
                                (see prompt_log): field updates, attempt
                                starts/finishes incl. verifier reports
    progress.log                ID:STATUS:ISO8601[:SUFFIX] lines (progress.py)
    runs/current.json           the current run's identity (atomic)
    runs/<run_id>/journal.jsonl run lifecycle journal (journal.py)
    run.pid                     the run lock (lock.py)
    logs/                       session transcripts (written by others)

Why split: rewriting one ``state.json`` holding every attempt of every prompt
after each attempt costs O(run length) per write, O(n^2) over a run. Here an
attempt costs one appended line of its own size, plus a rewrite of
``state.json`` when a summary changes (at most every
:data:`STATE_WRITE_INTERVAL_S`, and always at a prompt's end) -- and ``state.json`` grows with the
number of prompts in the packet, never with the number of attempts or the size
of verifier reports. ``load_state`` composes the full document by folding the
prompt logs (O(history), for ``status``); ``load_prompt`` folds one prompt.

The prompt logs are the record of truth for prompts; the summaries in
``state.json`` are derived from them and re-derived when a prompt is first
touched by a process, so a crash between the two writes heals itself.
``state.json`` is always a complete JSON document and no ``*.tmp.*`` file is
left behind by a completed write. Corrupt files raise
:class:`~prompt_runner.errors.StateError`; nothing is silently reset.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from prompt_runner.errors import StateError
from prompt_runner.state import progress as progress_log
from prompt_runner.state._clock import iso_now
from prompt_runner.state._store_common import (
    STATE_VERSION,
    LockLike,
    NullLock,
    check_fields,
    check_meta,
    empty_state,
    json_copy,
    new_attempt,
)
from prompt_runner.state.atomic import (
    SCHEMA_VERSION,
    read_json,
    write_bytes_atomic,
    write_json_atomic,
)
from prompt_runner.state.journal import Journal, JournalLike
from prompt_runner.state.jsonl import JsonlWriter
from prompt_runner.state.lines import LineAppender
from prompt_runner.state.lock import RunLock
from prompt_runner.state.memstore import MemoryStore, NoopStore
from prompt_runner.state.progress import ProgressRecord
from prompt_runner.state.prompt_log import (
    OP_FINISH,
    OP_START,
    OP_UPDATE,
    check_name,
    fold_prompt_log,
    new_prompt,
)

STATE_WRITE_INTERVAL_S = 0.5
"""Shortest gap (seconds) between two rewrites of ``state.json`` for status changes."""

__all__ = [
    "STATE_VERSION",
    "FileStore",
    "LockLike",
    "MemoryStore",
    "NoopStore",
    "NullLock",
    "RuntimeStore",
    "empty_state",
]


class RuntimeStore(Protocol):
    """Everything the runner persists. Prompt ids and run ids must match ``[A-Za-z0-9._-]+``."""

    @property
    def root(self) -> Path | None:
        """The directory the store writes under, or ``None`` for in-memory stores."""
        ...

    def load_state(self) -> dict[str, Any]:
        """The full state document (module doc).

        Before any run: ``{"schema_version": 1, "version": 1, "prompts": {}}``.
        """
        ...

    def load_prompt(self, prompt_id: str) -> dict[str, Any]:
        """One prompt's record with its ``attempts`` (``{"attempts": []}`` if unknown)."""
        ...

    def update_prompt(self, prompt_id: str, fields: Mapping[str, Any]) -> None:
        """Merge top-level ``fields`` (not ``attempts``) into the prompt's record."""
        ...

    def start_attempt(self, prompt_id: str, attempt: Mapping[str, Any]) -> int:
        """Append an attempt (``status`` defaults to ``"running"``); returns its key."""
        ...

    def finish_attempt(self, prompt_id: str, key: int, fields: Mapping[str, Any]) -> None:
        """Merge ``fields`` into the attempt ``key`` returned by :meth:`start_attempt` only."""
        ...

    def set_run_meta(self, fields: Mapping[str, Any]) -> None:
        """Merge run meta (``run_id``, ``fingerprint``, ``started_at``...) into the document."""
        ...

    def read_progress(self) -> dict[str, ProgressRecord]:
        """Latest ``progress.log`` record per prompt id."""
        ...

    def append_progress(
        self,
        prompt_id: str,
        status: str,
        suffix: str | None = None,
        *,
        at: datetime | str | None = None,
    ) -> ProgressRecord:
        """Append one progress line; returns the record."""
        ...

    def journal(self, run_id: str) -> JournalLike:
        """Open the journal of ``run_id``; the caller closes it."""
        ...

    def read_current_run(self) -> dict[str, Any] | None:
        """``runs/current.json``, or ``None`` when there is none."""
        ...

    def write_current_run(self, doc: Mapping[str, Any]) -> None:
        """Replace ``runs/current.json`` (``schema_version`` is added when missing)."""
        ...

    def lock(self) -> LockLike:
        """The run lock of this store (not yet acquired)."""
        ...

    def logs_dir(self) -> Path | None:
        """Where session logs go (not created), or ``None`` for in-memory stores."""
        ...


class FileStore:
    """The file-backed store under ``root`` (layout in the module doc).

    Args:
        root: the store directory (``<packet>/.prompt_runner/`` or an operator
            directory); created on first write.
        fsync_interval_ms: group commit window for the prompt logs; ``0``
            (default) fsyncs every operation.

    Raises (on creation):
        StorageError: ``root`` exists and is not a directory (exit 3).

    One writer at a time: hold :meth:`lock` while writing. Readers (``status``,
    ``watch``) may read concurrently through their own instance; they see
    complete documents and complete lines, and a read-only instance re-reads
    ``state.json`` on every :meth:`load_state`.
    """

    def __init__(self, root: Path, *, fsync_interval_ms: int = 0) -> None:
        from .usable import check_state_root

        check_state_root(root)  # a file where the directory should be: StorageError
        self._root = root
        self._fsync_interval_ms = fsync_interval_ms
        self._doc: dict[str, Any] | None = None
        self._counts: dict[str, int] = {}
        self._writers: dict[str, JsonlWriter] = {}
        self._progress: LineAppender | None = None
        self._state_dirty = False
        self._state_written_at = -STATE_WRITE_INTERVAL_S
        self._wrote_meta = False

    @property
    def root(self) -> Path | None:
        """The store directory."""
        return self._root

    @property
    def state_path(self) -> Path:
        """``<root>/state.json``."""
        return self._root / "state.json"

    def prompt_log_path(self, prompt_id: str) -> Path:
        """``<root>/prompts/<prompt_id>.jsonl``."""
        return self._root / "prompts" / f"{check_name('prompt id', prompt_id)}.jsonl"

    # -- state.json ---------------------------------------------------------------

    def _summary_doc(self) -> dict[str, Any]:
        """The writer's in-memory ``state.json`` (loaded once, then owned by this instance).

        On load every prompt's summary is re-derived from its log: a writer
        killed before its last ``state.json`` rewrite (rewrites are spaced, see
        :meth:`_summary_changed`) leaves summaries behind the logs, also for
        prompts this run will not touch.
        """
        if self._doc is None:
            self._doc = self._read_state_file(heal=True)
            self._reconcile(self._doc)
        return self._doc

    def _reconcile(self, doc: dict[str, Any]) -> None:
        summaries: dict[str, Any] = doc["prompts"]
        for prompt_id in self._prompt_ids(doc):
            if prompt_id in self._counts:
                continue
            try:
                record = self.load_prompt(prompt_id)
            except (StateError, ValueError):
                continue  # a damaged log stops the prompt when it is touched, not here
            self._counts[prompt_id] = len(record["attempts"])
            derived = _summary(record)
            if summaries.get(prompt_id) != derived:
                summaries[prompt_id] = derived
                self._state_dirty = True

    def _current_summary_doc(self) -> dict[str, Any]:
        """For reads: this instance's document once it wrote, else a fresh read from disk.

        A store used only to read (``status``, ``watch``) thus sees the writer's updates.
        """
        if self._counts or self._wrote_meta:
            return self._summary_doc()
        return self._read_state_file()

    def _read_state_file(self, *, heal: bool = False) -> dict[str, Any]:
        """``state.json``, a derived summary of the prompt logs.

        A corrupt ``state.json`` is a corrupt *cache*, not a record of truth: it
        is rebuilt from the prompt logs. A writer (``heal=True``) moves the bad
        file aside to ``state.json.corrupt.<stamp>`` first; a reader just
        ignores it. The run meta it held comes back with the next run.
        """
        try:
            doc = read_json(self.state_path)
        except FileNotFoundError:
            return empty_state()
        except StateError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("prompts"), dict):
            if heal and self.state_path.exists():
                from prompt_runner.state._clock import file_stamp

                aside = self.state_path.with_name(f"state.json.corrupt.{file_stamp()}")
                self.state_path.replace(aside)
                rebuilt = empty_state()
                rebuilt["recovered_from"] = aside.name
                return rebuilt
            return empty_state()
        if doc.get("schema_version", 1) != SCHEMA_VERSION:
            raise StateError(
                f"has schema_version {doc.get('schema_version')!r}, this version reads 1",
                file=self.state_path,
                fix="use the Prompt Runner version that wrote it, or start with --new-run",
            )
        return doc

    def _summary_changed(self) -> None:
        """A prompt's status changed: rewrite ``state.json`` now, or, when the last
        rewrite is younger than :data:`STATE_WRITE_INTERVAL_S`, once that interval
        has passed (at the next :meth:`flush` or session tick), before a backoff
        sleep (:meth:`flush_summary`), or at :meth:`close` -- so a fast run
        rewrites it about twice a second, not at every status change."""
        if time.monotonic() - self._state_written_at >= STATE_WRITE_INTERVAL_S:
            self._write_state_file()
        else:
            self._state_dirty = True

    def flush_summary_due(self) -> None:
        """Rewrite ``state.json`` if a change waits and the interval has passed
        (the runner calls this while a session runs)."""
        if self._state_dirty and (
            time.monotonic() - self._state_written_at >= STATE_WRITE_INTERVAL_S
        ):
            self._write_state_file()

    def _write_state_file(self) -> None:
        self._state_dirty = False
        self._state_written_at = time.monotonic()
        doc = self._summary_doc()
        doc["updated_at"] = iso_now(millis=True)
        # Derived from the prompt logs (rebuilt if ever corrupt): atomic, no fsync.
        # Written at every prompt boundary, so encoded with orjson (imported here,
        # off the light `status` path): ~40x the standard library's indent=2
        # encoder on a long run's document. Its values already passed the
        # NaN-refusing check of every store write (`json_safe`), which orjson
        # would not repeat.
        import orjson

        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
        write_bytes_atomic(self.state_path, data, durable=False)

    def _prompt_ids(self, doc: dict[str, Any]) -> list[str]:
        ids = list(doc["prompts"])
        directory = self._root / "prompts"
        if directory.is_dir():
            logs = directory.glob("*.jsonl")
            on_disk = sorted(p.stem for p in logs if not p.name.startswith("."))
            ids += [pid for pid in on_disk if pid not in ids]
        return ids

    # -- reads --------------------------------------------------------------------

    def load_state(self) -> dict[str, Any]:
        """Compose the full state document from ``state.json`` and the prompt logs.

        Raises:
            StateError: ``state.json`` or a prompt log is corrupt.
        """
        doc = copy.deepcopy(self._current_summary_doc())
        newest = doc.get("updated_at")
        prompts: dict[str, Any] = {}
        for prompt_id in self._prompt_ids(doc):
            record, last_at = fold_prompt_log(self.prompt_log_path(prompt_id))
            prompts[prompt_id] = record
            if last_at is not None and (newest is None or last_at > newest):
                newest = last_at
        doc["prompts"] = prompts
        if newest is not None:
            doc["updated_at"] = newest
        return doc

    def load_prompt(self, prompt_id: str) -> dict[str, Any]:
        """Fold one prompt's log (cost: that prompt's history only)."""
        record, _ = fold_prompt_log(self.prompt_log_path(prompt_id))
        return record

    # -- writes -------------------------------------------------------------------

    def _touch(self, prompt_id: str) -> dict[str, Any]:
        """Return the prompt's summary, re-deriving it from its log once per process."""
        summaries: dict[str, Any] = self._summary_doc()["prompts"]
        if prompt_id not in self._counts:
            record = self.load_prompt(prompt_id)
            self._counts[prompt_id] = len(record["attempts"])
            derived = _summary(record)
            if summaries.get(prompt_id) != derived:
                summaries[prompt_id] = derived
        summary: dict[str, Any] = summaries.setdefault(prompt_id, _summary(new_prompt()))
        return summary

    def _append(self, prompt_id: str, op: dict[str, Any]) -> None:
        writer = self._writers.get(prompt_id)
        if writer is None:
            for stale in list(self._writers.values()):  # keep one open file: prompts run in turn
                stale.close()
            self._writers.clear()
            writer = JsonlWriter(
                self.prompt_log_path(prompt_id), fsync_interval_ms=self._fsync_interval_ms
            )
            self._writers[prompt_id] = writer
        writer.append({"schema_version": SCHEMA_VERSION, "at": iso_now(millis=True), **op})

    def update_prompt(self, prompt_id: str, fields: Mapping[str, Any]) -> None:
        """Append an ``update`` operation; rewrite ``state.json`` if the status changed."""
        checked = check_fields(fields)
        summary = self._touch(prompt_id)
        self._append(prompt_id, {"op": OP_UPDATE, "fields": checked})
        if "status" in checked and summary.get("status") != checked["status"]:
            summary["status"] = checked["status"]
            self._summary_changed()

    def start_attempt(self, prompt_id: str, attempt: Mapping[str, Any]) -> int:
        """Append an ``attempt_start`` operation; returns the 1-based key."""
        record = new_attempt(attempt)
        summary = self._touch(prompt_id)
        key = self._counts[prompt_id] + 1
        self._append(prompt_id, {"op": OP_START, "key": key, "attempt": record})
        self._counts[prompt_id] = key
        # The count reaches state.json with the next status change; the prompt log
        # is the record of truth and re-derives it (one rewrite less per attempt).
        summary["attempt_count"] = key
        return key

    def finish_attempt(self, prompt_id: str, key: int, fields: Mapping[str, Any]) -> None:
        """Append an ``attempt_finish`` operation for attempt ``key``.

        Raises:
            ValueError: no attempt ``key`` exists for this prompt.
        """
        checked = json_copy(dict(fields))
        self._touch(prompt_id)
        if not isinstance(key, int) or not 1 <= key <= self._counts[prompt_id]:
            raise ValueError(f"prompt {prompt_id}: no attempt with key {key!r}")
        self._append(prompt_id, {"op": OP_FINISH, "key": key, "fields": checked})

    def set_run_meta(self, fields: Mapping[str, Any]) -> None:
        """Merge run meta into ``state.json`` (rewritten atomically)."""
        self._summary_doc().update(check_meta(fields))
        self._wrote_meta = True
        self._write_state_file()

    def flush(self) -> None:
        """fsync prompt-log appends held back by group commit; rewrite a waiting
        ``state.json`` if its interval has passed (see :meth:`flush_summary`)."""
        for writer in self._writers.values():
            writer.flush()
        self.flush_summary_due()

    def flush_summary(self) -> None:
        """Rewrite ``state.json`` now if a status change waits (before the runner
        sleeps or stops, so the file never lags behind an idle runner)."""
        if self._state_dirty:
            self._write_state_file()

    def close(self) -> None:
        """Flush and close open prompt logs; the store stays usable (files reopen)."""
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        if self._state_dirty:
            self._write_state_file()
        if self._progress is not None:
            self._progress.close()
            self._progress = None

    # -- progress, journal, current run, lock -------------------------------------

    def read_progress(self) -> dict[str, ProgressRecord]:
        """``<root>/progress.log`` (see :func:`~prompt_runner.state.progress.read_progress`)."""
        return progress_log.read_progress(self._root / "progress.log")

    def append_progress(
        self,
        prompt_id: str,
        status: str,
        suffix: str | None = None,
        *,
        at: datetime | str | None = None,
    ) -> ProgressRecord:
        """Append to ``<root>/progress.log`` and fsync it.

        The file stays open between appends (closed by :meth:`close`); a torn
        tail left by a killed writer is repaired when it opens.
        """
        record = progress_log.make_progress_record(prompt_id, status, suffix, at=at)
        if self._progress is None or self._progress.closed:
            self._progress = LineAppender(self._root / "progress.log")
        self._progress.append_line(record.render().encode("utf-8"))
        return record

    def journal(self, run_id: str) -> JournalLike:
        """Open ``<root>/runs/<run_id>/journal.jsonl`` (close it when done).

        Keep one journal of a run open at a time: ``seq`` is continued from what
        the file holds when it is opened.

        Raises:
            StateError: the journal is corrupt before its last line.
        """
        path = self._root / "runs" / check_name("run id", run_id) / "journal.jsonl"
        return Journal(path, run_id)

    def read_current_run(self) -> dict[str, Any] | None:
        """``<root>/runs/current.json``, or ``None`` when missing.

        Raises:
            StateError: the file is corrupt or not a JSON object.
        """
        path = self._root / "runs" / "current.json"
        try:
            doc = read_json(path)
        except FileNotFoundError:
            return None
        if not isinstance(doc, dict):
            raise StateError(
                "is not a JSON object",
                file=path,
                fix="delete it; the next run then starts a new run generation",
            )
        return doc

    def write_current_run(self, doc: Mapping[str, Any]) -> None:
        """Atomically replace ``<root>/runs/current.json``."""
        body = {"schema_version": SCHEMA_VERSION, **json_copy(dict(doc))}
        write_json_atomic(self._root / "runs" / "current.json", body)

    def lock(self) -> LockLike:
        """The run lock at ``<root>/run.pid``."""
        return RunLock(self._root / "run.pid")

    def logs_dir(self) -> Path | None:
        """``<root>/logs`` (not created here)."""
        return self._root / "logs"


def _summary(record: Mapping[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {"attempt_count": len(record.get("attempts", []))}
    if "status" in record:
        summary["status"] = record["status"]
    return summary


def read_state(root: Path) -> dict[str, Any]:
    """The state document under the state root ``root``, for readers (``status``).

    Before any run (no ``root``) this is the empty document; nothing is written.
    """
    if not root.exists():
        return empty_state()
    store = FileStore(root)
    doc = store.load_state()
    if "run_id" not in doc:
        # state.json (which holds the run meta) was lost or rebuilt: the current
        # run's identity is also in runs/current.json.
        try:
            current = store.read_current_run()
        except StateError:
            current = None
        if current and current.get("run_id"):
            doc["run_id"] = current["run_id"]
            for key in ("packet", "started_at"):
                if current.get(key) is not None:
                    doc.setdefault(key, current[key])
    return doc
