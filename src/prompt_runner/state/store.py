"""The file-backed runtime store (SPEC 6): prompt state, progress and journals on disk.

:class:`FileStore` implements :class:`~prompt_runner.state.runtime.RuntimeStore`
under a state root, normally ``<packet>/.prompt_runner/`` (paths named by
:class:`~prompt_runner.state.layout.StateLayout`)::

    state.json                  run meta + one small summary per prompt
                                ({"status", "attempt_count"}; state/summary.py)
    prompts/<prompt_id>.jsonl   the prompt's full record as an operation log
                                (see prompt_log): field updates, attempt
                                starts/finishes incl. verifier reports
    progress.log                ID:STATUS:ISO8601[:SUFFIX] lines (progress.py)
    runs/current.json           the current run's identity (current_run.py)
    runs/<run_id>/journal.jsonl run lifecycle journal (journal.py)
    run.pid                     the run lock (lock.py)
    logs/                       session transcripts (written by others)

Why split: rewriting one ``state.json`` holding every attempt of every prompt
after each attempt costs O(run length) per write, O(n^2) over a run. Here an
attempt costs one appended line of its own size, plus a spaced rewrite of
``state.json`` when a summary changes. ``load_state`` composes the full
document by folding the prompt logs (O(history), for ``status``);
``load_prompt`` folds one prompt.

The prompt logs are the record of truth for prompts; the summaries in
``state.json`` are derived from them. ``state.json`` is always a complete JSON
document and no ``*.tmp.*`` file is left behind by a completed write. Corrupt
records of truth raise :class:`~prompt_runner.errors.StateError`; nothing is
silently reset.

The protocol and the in-memory stores are re-exported here, so
``from prompt_runner.state.store import FileStore, MemoryStore, RuntimeStore``
keeps working.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from prompt_runner.state import current_run
from prompt_runner.state import progress as progress_log
from prompt_runner.state._clock import iso_now
from prompt_runner.state._store_common import (
    STATE_VERSION,
    LockLike,
    NullLock,
    check_fields,
    empty_state,
    json_copy,
    new_attempt,
    record_copy,
)
from prompt_runner.state.atomic import SCHEMA_VERSION
from prompt_runner.state.journal import Journal, JournalLike
from prompt_runner.state.jsonl import JsonlWriter
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.lines import LineAppender, sync_together
from prompt_runner.state.lock import RunLock
from prompt_runner.state.memstore import MemoryStore, NoopStore
from prompt_runner.state.progress import ProgressRecord
from prompt_runner.state.prompt_log import (
    OP_FINISH,
    OP_START,
    OP_UPDATE,
    apply_op,
    check_name,
    fold_prompt_log,
    new_prompt,
)
from prompt_runner.state.runtime import RuntimeStore
from prompt_runner.state.summary import STATE_WRITE_INTERVAL_S, StateSummary
from prompt_runner.state.usable import check_state_root

__all__ = [
    "STATE_VERSION",
    "STATE_WRITE_INTERVAL_S",
    "FileStore",
    "LockLike",
    "MemoryStore",
    "NoopStore",
    "NullLock",
    "RuntimeStore",
    "empty_state",
    "read_state",
]


class FileStore:
    """The file-backed store under ``root`` (layout in the module doc).

    Args:
        root: the store directory (``<packet>/.prompt_runner/`` or an operator
            directory); created on first write.
        fsync_interval_ms: group commit window for the prompt logs and
            ``progress.log``; ``0`` (default) fsyncs every operation. With a
            window, appends are durable at the latest at :meth:`flush`, which
            fsyncs them all at once (``state.lines.sync_together``).

    Raises (on creation):
        StorageError: ``root`` exists and is not a directory (exit 3).

    One writer at a time: hold :meth:`lock` while writing. Readers (``status``,
    ``watch``) may read concurrently through their own instance; they see
    complete documents and complete lines, and a read-only instance re-reads
    ``state.json`` on every :meth:`load_state`.
    """

    def __init__(self, root: Path, *, fsync_interval_ms: int = 0) -> None:
        check_state_root(root)  # a file where the directory should be: StorageError
        self._root = root
        self.layout = StateLayout(root)
        self._fsync_interval_ms = fsync_interval_ms
        self._summary = StateSummary(self.layout, self.load_prompt)
        self._writers: dict[str, JsonlWriter] = {}
        self._folded: dict[str, dict[str, Any]] = {}
        """The record of the prompt whose log this store appends to, folded once and
        kept current by each append (:meth:`load_prompt`)."""
        self._progress: LineAppender | None = None

    @property
    def root(self) -> Path | None:
        """The store directory."""
        return self._root

    @property
    def state_path(self) -> Path:
        """``<root>/state.json``."""
        return self.layout.state_json

    def prompt_log_path(self, prompt_id: str) -> Path:
        """``<root>/prompts/<prompt_id>.jsonl``."""
        return self.layout.prompt_log(check_name("prompt id", prompt_id))

    # -- reads --------------------------------------------------------------------

    def load_state(self) -> dict[str, Any]:
        """Compose the full state document from ``state.json`` and the prompt logs.

        Raises:
            StateError: ``state.json`` or a prompt log is corrupt.
        """
        doc: dict[str, Any] = record_copy(self._summary.current())
        newest = doc.get("updated_at")
        prompts: dict[str, Any] = {}
        for prompt_id in self._summary.prompt_ids(doc):
            record, last_at = fold_prompt_log(self.prompt_log_path(prompt_id))
            prompts[prompt_id] = record
            if last_at is not None and (newest is None or last_at > newest):
                newest = last_at
        doc["prompts"] = prompts
        if newest is not None:
            doc["updated_at"] = newest
        return doc

    def load_prompt(self, prompt_id: str) -> dict[str, Any]:
        """Fold one prompt's log (cost: that prompt's history only); returns a new dict.

        While this store appends to the prompt's log (the writer holds the run
        lock, and only the lock holder writes prompt logs) the log is folded
        once and the record kept current by each append, so the runner's
        repeated reads of the running prompt (several a prompt) do not read the
        file again; any other prompt, and any store that is not appending to
        it (a reader such as ``status``), folds the file each time.

        Raises:
            StateError: a complete line of the log is not a valid operation.
        """
        kept = self._folded.get(prompt_id)
        if kept is None:
            record, _ = fold_prompt_log(self.prompt_log_path(prompt_id))
            if prompt_id not in self._writers:
                return record
            self._folded[prompt_id] = kept = record
        copied: dict[str, Any] = record_copy(kept)
        return copied

    # -- writes -------------------------------------------------------------------

    def _append(self, prompt_id: str, op: dict[str, Any]) -> None:
        writer = self._writers.get(prompt_id)
        if writer is None:
            for stale in list(self._writers.values()):  # keep one open file: prompts run in turn
                stale.close()
            self._writers.clear()
            self._folded.clear()
            writer = JsonlWriter(
                self.prompt_log_path(prompt_id), fsync_interval_ms=self._fsync_interval_ms
            )
            self._writers[prompt_id] = writer
            if writer.appender.created:  # a new log: its fold is the empty record
                self._folded[prompt_id] = new_prompt()
        kept = self._folded.pop(prompt_id, None)  # kept again only once the line is written
        writer.append({"schema_version": SCHEMA_VERSION, "at": iso_now(millis=True), **op})
        if kept is not None:
            try:
                apply_op(kept, op)  # op's values are JSON copies: what a fold reads back
            except (ValueError, KeyError, TypeError, AttributeError):
                return  # the next load_prompt folds the file, and says what is wrong
            self._folded[prompt_id] = kept

    def update_prompt(self, prompt_id: str, fields: Mapping[str, Any]) -> None:
        """Append an ``update`` operation; rewrite ``state.json`` if the status changed."""
        checked = check_fields(fields)
        summary = self._summary.touch(prompt_id)
        self._append(prompt_id, {"op": OP_UPDATE, "fields": checked})
        if "status" in checked and summary.get("status") != checked["status"]:
            summary["status"] = checked["status"]
            self._summary.changed()

    def start_attempt(self, prompt_id: str, attempt: Mapping[str, Any]) -> int:
        """Append an ``attempt_start`` operation; returns the 1-based key."""
        record = new_attempt(attempt)
        summary = self._summary.touch(prompt_id)
        counts = self._summary.counts
        key = counts[prompt_id] + 1
        self._append(prompt_id, {"op": OP_START, "key": key, "attempt": record})
        counts[prompt_id] = key
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
        self._summary.touch(prompt_id)
        if not isinstance(key, int) or not 1 <= key <= self._summary.counts[prompt_id]:
            raise ValueError(f"prompt {prompt_id}: no attempt with key {key!r}")
        self._append(prompt_id, {"op": OP_FINISH, "key": key, "fields": checked})

    def set_run_meta(self, fields: Mapping[str, Any]) -> None:
        """Merge run meta into ``state.json`` (rewritten atomically)."""
        self._summary.set_meta(fields)

    def flush(self) -> None:
        """fsync prompt-log and ``progress.log`` appends held back by group commit
        (their fsyncs in flight together); rewrite a waiting ``state.json`` if its
        interval has passed (see :meth:`flush_summary`)."""
        held = [writer.appender for writer in self._writers.values()]
        if self._progress is not None:
            held.append(self._progress)
        sync_together(held)
        self._summary.flush_due()

    def flush_summary_due(self) -> None:
        """Rewrite ``state.json`` if a change waits and the interval has passed
        (the runner calls this while a session runs)."""
        self._summary.flush_due()

    def flush_summary(self) -> None:
        """Rewrite ``state.json`` now if a status change waits (before the runner
        sleeps or stops, so the file never lags behind an idle runner)."""
        self._summary.flush()

    def heal_summary(self) -> None:
        """Re-derive ``state.json``'s prompt summaries from the prompt logs and
        rewrite it now if one was behind: a runner killed after a prompt's
        progress line but before the (spaced) rewrite leaves it so, and a
        resumed run with nothing left to run writes nothing else.

        Raises:
            StorageError: ``state.json`` cannot be written.
        """
        self._summary.doc()  # loading reconciles every summary with its log
        self._summary.flush()

    def close(self) -> None:
        """Flush and close open prompt logs; the store stays usable (files reopen)."""
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
        self._folded.clear()
        self._summary.flush()
        if self._progress is not None:
            self._progress.close()
            self._progress = None

    # -- progress, journal, current run, lock -------------------------------------

    def read_progress(self) -> dict[str, ProgressRecord]:
        """``<root>/progress.log`` (see :func:`~prompt_runner.state.progress.read_progress`)."""
        return progress_log.read_progress(self.layout.progress_log)

    def append_progress(
        self,
        prompt_id: str,
        status: str,
        suffix: str | None = None,
        *,
        at: datetime | str | None = None,
    ) -> ProgressRecord:
        """Append to ``<root>/progress.log`` and fsync it (with a group commit
        window: at the latest at :meth:`flush`, as the prompt logs).

        The file stays open between appends (closed by :meth:`close`); a torn
        tail left by a killed writer is repaired when it opens.
        """
        record = progress_log.make_progress_record(prompt_id, status, suffix, at=at)
        if self._progress is None or self._progress.closed:
            self._progress = LineAppender(
                self.layout.progress_log, fsync_interval_ms=self._fsync_interval_ms
            )
        self._progress.append_line(record.render().encode("utf-8"))
        return record

    def journal(self, run_id: str) -> JournalLike:
        """Open ``<root>/runs/<run_id>/journal.jsonl`` (close it when done).

        Keep one journal of a run open at a time: ``seq`` is continued from what
        the file holds when it is opened.

        Raises:
            StateError: the journal is corrupt before its last line.
        """
        return Journal(self.layout.journal(check_name("run id", run_id)), run_id)

    def read_current_run(self) -> dict[str, Any] | None:
        """``<root>/runs/current.json``, or ``None`` when missing.

        Raises:
            StateError: the file is corrupt or not a JSON object (the same
                error every reader gets, see :mod:`~prompt_runner.state.current_run`).
        """
        return current_run.read_current_run(self.layout.current_run)

    def write_current_run(self, doc: Mapping[str, Any]) -> None:
        """Atomically replace ``<root>/runs/current.json``."""
        current_run.write_current_run(self.layout.current_run, json_copy(dict(doc)))

    def lock(self) -> LockLike:
        """The run lock at ``<root>/run.pid``."""
        return RunLock(self.layout.run_pid)

    def logs_dir(self) -> Path | None:
        """``<root>/logs`` (not created here)."""
        return self.layout.logs_dir


def read_state(root: Path) -> dict[str, Any]:
    """The state document under the state root ``root``, for readers (``status``).

    Before any run (no ``root``) this is the empty document; nothing is written.

    Raises:
        StateError: a record of truth is corrupt, ``runs/current.json`` included.
    """
    if not root.exists():
        return empty_state()
    store = FileStore(root)
    doc = store.load_state()
    if "run_id" not in doc:
        # state.json (which holds the run meta) was lost or rebuilt: the current
        # run's identity is also in runs/current.json.
        current = store.read_current_run()
        if current and current.get("run_id"):
            doc["run_id"] = current["run_id"]
            for key in ("packet", "started_at"):
                if current.get(key) is not None:
                    doc.setdefault(key, current[key])
    return doc
