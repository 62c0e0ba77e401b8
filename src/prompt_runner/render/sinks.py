"""File sinks for one session: the transcript (``.log``) and JSONL events.

JSONL schemas (SPEC 4): ``compact`` = ``{"e": {...}, "t": EPOCH_MS}``;
``full`` = ``{"data": {...}, "ts": ISO8601}``; ``off`` writes no event file.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ..providers.events import Event
from .text import format_event


def encode_event(event: Event, schema: str) -> str:
    """One JSONL line (without newline) for ``event`` in ``schema`` (compact|full)."""
    if schema == "full":
        ts = datetime.fromtimestamp(event.at_ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
        payload: dict[str, Any] = {"data": event.to_dict(), "ts": ts.replace("+00:00", "Z")}
    else:
        payload = {"e": event.to_dict(), "t": event.at_ms}
    return json.dumps(payload, default=str, ensure_ascii=False)


class SessionFiles:
    """Transcript + JSONL event files of one session (append-only, line-buffered)."""

    def __init__(self, log_path: Path, events_path: Path | None, schema: str) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        self.events_path = events_path
        self._schema = schema
        self._lock = threading.Lock()
        self._log: TextIO = log_path.open("a", encoding="utf-8")
        self._events: TextIO | None = (
            events_path.open("a", encoding="utf-8") if events_path is not None else None
        )

    def note(self, text: str) -> None:
        with self._lock:
            self._log.write(text + "\n")
            self._log.flush()

    def event(self, event: Event) -> None:
        line = format_event(event, {"log_mode": "verbose"})
        with self._lock:
            if line is not None:
                self._log.write(line + "\n")
                self._log.flush()
            if self._events is not None:
                self._events.write(encode_event(event, self._schema) + "\n")
                self._events.flush()

    def close(self) -> None:
        with self._lock:
            self._log.close()
            if self._events is not None:
                self._events.close()
