"""The in-memory and no-op runtime stores (API runs write nothing unless asked)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from prompt_runner.state import progress as progress_log
from prompt_runner.state._clock import iso_now
from prompt_runner.state._store_common import (
    LockLike,
    NullLock,
    check_fields,
    check_meta,
    empty_state,
    json_copy,
    new_attempt,
)
from prompt_runner.state.atomic import SCHEMA_VERSION
from prompt_runner.state.journal import JournalLike, MemoryJournal
from prompt_runner.state.progress import ProgressRecord
from prompt_runner.state.prompt_log import (
    OP_FINISH,
    OP_START,
    OP_UPDATE,
    apply_op,
    check_name,
    new_prompt,
)


class _NothingOnDisk:
    """What the in-memory stores share: no directory, nothing held back, nothing open."""

    @property
    def root(self) -> Path | None:
        """Always ``None``."""
        return None

    def logs_dir(self) -> Path | None:
        """Always ``None``."""
        return None

    def flush(self) -> None:
        """Nothing is held back."""

    def flush_summary_due(self) -> None:
        """Nothing is held back."""

    def flush_summary(self) -> None:
        """Nothing is held back."""

    def close(self) -> None:
        """Nothing is open."""


class MemoryStore(_NothingOnDisk):
    """A store kept entirely in memory; it never touches the filesystem."""

    def __init__(self) -> None:
        self._doc = empty_state()
        self._progress: dict[str, ProgressRecord] = {}
        self._journals: dict[str, MemoryJournal] = {}
        self._current: dict[str, Any] | None = None
        self._lock = NullLock()

    def load_state(self) -> dict[str, Any]:
        """A copy of the state document."""
        return copy.deepcopy(self._doc)

    def load_prompt(self, prompt_id: str) -> dict[str, Any]:
        """A copy of one prompt's record."""
        return copy.deepcopy(self._doc["prompts"].get(prompt_id, new_prompt()))

    def _apply(self, prompt_id: str, op: dict[str, Any]) -> None:
        prompts: dict[str, Any] = self._doc["prompts"]
        prompt = prompts.get(check_name("prompt id", prompt_id))
        if prompt is None:
            if op["op"] == OP_FINISH:
                raise ValueError(f"prompt {prompt_id}: no attempt with key {op['key']!r}")
            prompt = prompts[prompt_id] = new_prompt()
        apply_op(prompt, op)
        self._doc["updated_at"] = iso_now(millis=True)

    def update_prompt(self, prompt_id: str, fields: Mapping[str, Any]) -> None:
        """Merge ``fields`` into the prompt record."""
        self._apply(prompt_id, {"op": OP_UPDATE, "fields": check_fields(fields)})

    def start_attempt(self, prompt_id: str, attempt: Mapping[str, Any]) -> int:
        """Append an attempt; returns its 1-based key."""
        known = self._doc["prompts"].get(prompt_id, {})
        key = len(known.get("attempts", [])) + 1
        self._apply(prompt_id, {"op": OP_START, "key": key, "attempt": new_attempt(attempt)})
        return key

    def finish_attempt(self, prompt_id: str, key: int, fields: Mapping[str, Any]) -> None:
        """Merge ``fields`` into attempt ``key``; ``ValueError`` if there is no such attempt."""
        self._apply(prompt_id, {"op": OP_FINISH, "key": key, "fields": json_copy(dict(fields))})

    def set_run_meta(self, fields: Mapping[str, Any]) -> None:
        """Merge run meta into the document."""
        self._doc.update(check_meta(fields))
        self._doc["updated_at"] = iso_now(millis=True)

    def read_progress(self) -> dict[str, ProgressRecord]:
        """Latest progress record per prompt."""
        return dict(self._progress)

    def append_progress(
        self,
        prompt_id: str,
        status: str,
        suffix: str | None = None,
        *,
        at: datetime | str | None = None,
    ) -> ProgressRecord:
        """Record a progress line (validated like the file form)."""
        record = progress_log.make_progress_record(prompt_id, status, suffix, at=at)
        self._progress[prompt_id] = record
        return record

    def journal(self, run_id: str) -> JournalLike:
        """The in-memory journal of ``run_id`` (the same object on every call)."""
        return self._journals.setdefault(run_id, MemoryJournal(run_id))

    def read_current_run(self) -> dict[str, Any] | None:
        """A copy of the current-run document, or ``None``."""
        return copy.deepcopy(self._current)

    def write_current_run(self, doc: Mapping[str, Any]) -> None:
        """Replace the current-run document."""
        self._current = {"schema_version": SCHEMA_VERSION, **json_copy(dict(doc))}

    def lock(self) -> LockLike:
        """A no-op lock."""
        return self._lock


class NoopStore(_NothingOnDisk):
    """A store that discards every write and reads empty (no files, no memory growth).

    Attempt keys still count up per prompt so :meth:`finish_attempt` calls pair up.
    """

    def __init__(self) -> None:
        self._keys: dict[str, int] = {}

    def load_state(self) -> dict[str, Any]:
        """Always the empty document."""
        return empty_state()

    def load_prompt(self, prompt_id: str) -> dict[str, Any]:
        """Always ``{"attempts": []}``."""
        return new_prompt()

    def update_prompt(self, prompt_id: str, fields: Mapping[str, Any]) -> None:
        """Discard."""

    def start_attempt(self, prompt_id: str, attempt: Mapping[str, Any]) -> int:
        """Discard; returns the next key for the prompt."""
        self._keys[prompt_id] = self._keys.get(prompt_id, 0) + 1
        return self._keys[prompt_id]

    def finish_attempt(self, prompt_id: str, key: int, fields: Mapping[str, Any]) -> None:
        """Discard."""

    def set_run_meta(self, fields: Mapping[str, Any]) -> None:
        """Discard."""

    def read_progress(self) -> dict[str, ProgressRecord]:
        """Always ``{}``."""
        return {}

    def append_progress(
        self,
        prompt_id: str,
        status: str,
        suffix: str | None = None,
        *,
        at: datetime | str | None = None,
    ) -> ProgressRecord:
        """Validate and discard; returns the record that would have been written."""
        return progress_log.make_progress_record(prompt_id, status, suffix, at=at)

    def journal(self, run_id: str) -> JournalLike:
        """A journal that numbers records and keeps none."""
        return MemoryJournal(run_id, keep=False)

    def read_current_run(self) -> dict[str, Any] | None:
        """Always ``None``."""
        return None

    def write_current_run(self, doc: Mapping[str, Any]) -> None:
        """Discard."""

    def lock(self) -> LockLike:
        """A no-op lock."""
        return NullLock()
