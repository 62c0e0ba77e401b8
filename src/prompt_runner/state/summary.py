"""``state.json``: run meta plus one small summary per prompt, derived from the prompt logs.

The document (``{"schema_version": 1, "version": 1, "run_id": ..., <other run
meta>, "updated_at": ..., "prompts": {"01": {"status": ..., "attempt_count":
N}}}``) grows with the number of prompts, never with attempts or verifier
reports, and is atomically replaced without an fsync: it is a *cache* of the
prompt logs (the record of truth), re-derived from them when a writer opens
it, so a crash between a log append and a rewrite heals itself, and a corrupt
one is rebuilt rather than an error.

Rewrites are spaced: a status change rewrites it at once when the last
rewrite is older than :data:`STATE_WRITE_INTERVAL_S`, otherwise once that
interval has passed (the runner's session tick), before a backoff sleep, or
when the store closes -- so a fast run rewrites it about twice a second, not
at every status change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from prompt_runner.errors import StateError
from prompt_runner.state._clock import file_stamp, iso_now
from prompt_runner.state._store_common import check_meta, empty_state
from prompt_runner.state.atomic import SCHEMA_VERSION, read_json, write_bytes_atomic
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.prompt_log import is_safe_name, new_prompt

STATE_WRITE_INTERVAL_S = 0.5
"""Shortest gap (seconds) between two rewrites of ``state.json`` for status changes."""


def prompt_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``state.json`` summary of a folded prompt record: status and attempt count."""
    summary: dict[str, Any] = {"attempt_count": len(record.get("attempts", []))}
    if "status" in record:
        summary["status"] = record["status"]
    return summary


class StateSummary:
    """The writer's (or a reader's) view of ``state.json`` under one layout.

    Args:
        layout: the state root's layout.
        load_prompt: folds one prompt's log into its record (raises
            ``StateError``/``ValueError`` for a damaged log).

    A writer loads the document once and then owns it; a reader that never
    wrote re-reads the file on every :meth:`current`. Not thread safe.
    """

    def __init__(self, layout: StateLayout, load_prompt: Callable[[str], dict[str, Any]]) -> None:
        self.layout = layout
        self._load_prompt = load_prompt
        self._doc: dict[str, Any] | None = None
        self.counts: dict[str, int] = {}
        """Prompt id -> attempts in its log, for each prompt this process touched."""
        self.dirty = False
        """A status change waits for the next rewrite."""
        self.written_at = -STATE_WRITE_INTERVAL_S
        """``time.monotonic()`` of the last rewrite."""
        self._wrote_meta = False

    def doc(self) -> dict[str, Any]:
        """The writer's in-memory document (loaded once, then owned by this instance).

        On load every prompt's summary is re-derived from its log: a writer
        killed before its last (spaced) rewrite leaves summaries behind the
        logs, also for prompts this run will not touch.
        """
        if self._doc is None:
            self._doc = self._read(heal=True)
            self._reconcile(self._doc)
        return self._doc

    def current(self) -> dict[str, Any]:
        """For reads: this instance's document once it wrote, else a fresh read from disk.

        A store used only to read (``status``, ``watch``) thus sees the writer's updates.
        """
        if self.counts or self._wrote_meta:
            return self.doc()
        return self._read()

    def prompt_ids(self, doc: Mapping[str, Any]) -> list[str]:
        """The prompts of ``doc`` in order, then those with a log on disk but no summary.

        A name the store could not have written (``01 copy.jsonl``, a backup a
        user made; a key ``"0 1"`` in an edited ``state.json``) is not a prompt's
        and is passed over, so a stray file never stops ``status`` or a resume.
        """
        ids = [pid for pid in doc["prompts"] if is_safe_name(pid)]
        directory = self.layout.prompts_dir
        if directory.is_dir():
            logs = directory.glob("*.jsonl")
            on_disk = sorted(p.stem for p in logs if is_safe_name(p.stem))
            known = set(ids)  # a list's `in` made this quadratic: 0.2 s at 5,000 prompts
            ids += [pid for pid in on_disk if pid not in known]
        return ids

    def touch(self, prompt_id: str) -> dict[str, Any]:
        """The prompt's summary, re-derived from its log once per process.

        Raises:
            StateError: the prompt's log is corrupt.
        """
        summaries: dict[str, Any] = self.doc()["prompts"]
        if prompt_id not in self.counts:
            record = self._load_prompt(prompt_id)
            self.counts[prompt_id] = len(record["attempts"])
            derived = prompt_summary(record)
            if summaries.get(prompt_id) != derived:
                summaries[prompt_id] = derived
        summary: dict[str, Any] = summaries.setdefault(prompt_id, prompt_summary(new_prompt()))
        return summary

    def set_meta(self, fields: Mapping[str, Any]) -> None:
        """Merge run meta into the document and rewrite it now.

        Raises:
            ValueError: a reserved key or a value that is not JSON-safe.
        """
        self.doc().update(check_meta(fields))
        self._wrote_meta = True
        self.write()

    def changed(self) -> None:
        """A prompt's status changed: rewrite now, or once the interval has passed."""
        if time.monotonic() - self.written_at >= STATE_WRITE_INTERVAL_S:
            self.write()
        else:
            self.dirty = True

    def flush_due(self) -> None:
        """Rewrite if a change waits and the interval has passed."""
        if self.dirty and time.monotonic() - self.written_at >= STATE_WRITE_INTERVAL_S:
            self.write()

    def flush(self) -> None:
        """Rewrite now if a change waits."""
        if self.dirty:
            self.write()

    def write(self) -> None:
        """Replace ``state.json`` (atomic, not fsynced: it is rebuilt from the logs).

        Raises:
            StorageError: the file cannot be written.
        """
        self.dirty = False
        self.written_at = time.monotonic()
        doc = self.doc()
        doc["updated_at"] = iso_now(millis=True)
        # Written at every prompt boundary, so encoded with orjson (imported
        # here, off the light `status` path): ~40x the standard library's
        # indent=2 encoder on a long run's document. Its values already passed
        # the NaN-refusing check of every store write (`json_copy`), which
        # orjson would not repeat.
        import orjson  # lazy: CLI start-up (`status` reads, never writes)

        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
        write_bytes_atomic(self.layout.state_json, data, durable=False)

    def _reconcile(self, doc: dict[str, Any]) -> None:
        summaries: dict[str, Any] = doc["prompts"]
        for prompt_id in self.prompt_ids(doc):
            if prompt_id in self.counts:
                continue
            try:
                record = self._load_prompt(prompt_id)
            except (StateError, ValueError):
                continue  # a damaged log stops the prompt when it is touched, not here
            self.counts[prompt_id] = len(record["attempts"])
            derived = prompt_summary(record)
            if summaries.get(prompt_id) != derived:
                summaries[prompt_id] = derived
                self.dirty = True

    def _read(self, *, heal: bool = False) -> dict[str, Any]:
        """The file, or the empty document; a corrupt file is a corrupt *cache*.

        A writer (``heal=True``) moves a corrupt file aside to
        ``state.json.corrupt.<stamp>`` and starts from the empty document
        (``recovered_from`` names the aside file); a reader just ignores it.
        The run meta it held comes back with the next run.

        Raises:
            StateError: the file has a ``schema_version`` this version does not read.
        """
        path = self.layout.state_json
        try:
            doc = read_json(path)
        except FileNotFoundError:
            return empty_state()
        except StateError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("prompts"), dict):
            if heal and path.exists():
                aside = path.with_name(f"{path.name}.corrupt.{file_stamp()}")
                path.replace(aside)
                rebuilt = empty_state()
                rebuilt["recovered_from"] = aside.name
                return rebuilt
            return empty_state()
        if doc.get("schema_version", 1) != SCHEMA_VERSION:
            raise StateError(
                f"has schema_version {doc.get('schema_version')!r}, this version reads 1",
                file=path,
                fix="use the Prompt Runner version that wrote it, or start with --new-run",
            )
        return doc
