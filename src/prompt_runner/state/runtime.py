"""The runtime store protocol (SPEC 6): everything the runner persists.

Implementations: :class:`~prompt_runner.state.store.FileStore` (files under a
state root, layout in :mod:`prompt_runner.state.layout`),
:class:`~prompt_runner.state.memstore.MemoryStore` (the default for API runs:
no filesystem writes) and :class:`~prompt_runner.state.memstore.NoopStore`
(discards every write). All values crossing it are JSON-safe dicts; stores
copy what they are given and what they return.

The *state document* (:meth:`RuntimeStore.load_state`, what ``status --json``
prints)::

    {"schema_version": 1, "version": 1, "run_id": "...", "updated_at": "...",
     <other run meta>,
     "prompts": {"01": {"status": "...", ..., "attempts": [{...}, ...]}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from prompt_runner.state._store_common import LockLike
from prompt_runner.state.journal import JournalLike
from prompt_runner.state.progress import ProgressRecord


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

    def flush(self) -> None:
        """Make writes held back by group commit durable, and rewrite a waiting
        summary whose interval has passed (no-op for in-memory stores)."""
        ...

    def flush_summary_due(self) -> None:
        """Rewrite a waiting summary if its interval has passed (the runner
        calls this while a session runs)."""
        ...

    def flush_summary(self) -> None:
        """Rewrite a waiting summary now (before the runner sleeps or stops)."""
        ...

    def close(self) -> None:
        """Flush and close open files; the store stays usable (files reopen).

        Raises:
            StorageError: a held-back write cannot be made durable.
        """
        ...
