"""``notifications.jsonl``: one line per delivery of an event to a target, with its outcome.

Each line (``schema_version`` 1)::

    {"schema_version": 1, "at": "2026-11-29T16:57:04.002Z",
     "event": "6f1c...",            the document's id
     "kind": "run_completed", "run_id": "...", "prompt": null,
     "target": "json://127.0.0.1:8080/hook?token={env:HOOK_TOKEN}",   redacted
     "outcome": "delivered",        delivered | failed | timed_out | dropped | abandoned
     "attempts": 1, "error": null, "elapsed_ms": 12}

``failed``: every attempt failed (``error`` is the last one's reason);
``timed_out``: the last attempt got no answer within ``notify.timeout``;
``dropped``: the queue was full, the event was never tried; ``abandoned``:
the run ended and its exit waited ``notify.timeout`` without the delivery
finishing, or a signal (Ctrl-C, a ``stop``'s SIGTERM) ended that wait first
(``error`` names it). Lines are appended with
:func:`~prompt_runner.state.lines.append_line_shared` because a run and a
``watch`` beside it may both append.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..state._clock import iso_now
from ..state.jsonl import encode_record
from ..state.lines import append_line_shared

SCHEMA_VERSION = 1

OUTCOMES = ("delivered", "failed", "timed_out", "dropped", "abandoned")


class Recorder:
    """Appends delivery lines to ``path`` (``None``: records nothing, e.g. a memory store).

    A write that fails is counted in :attr:`write_errors` and never raised:
    a full disk must not fail the run through its notifier.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.write_errors = 0
        self.outcomes: dict[str, int] = {}
        self._lock = threading.Lock()

    def write(self, fields: dict[str, Any]) -> None:
        """Append one delivery line (``schema_version`` and ``at`` are added)."""
        line = {"schema_version": SCHEMA_VERSION, "at": iso_now(millis=True), **fields}
        with self._lock:
            outcome = str(fields.get("outcome"))
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            if self.path is None:
                return
            try:
                append_line_shared(self.path, encode_record(line))
            except (OSError, TypeError, ValueError):
                self.write_errors += 1
