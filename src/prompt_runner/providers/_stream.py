"""Stream-parsing building blocks shared by the CLI adapters.

:class:`StreamParser` decodes one stdout line at a time (JSON objects go to
the subclass, anything else is kept as bounded raw noise), records the
session id, and hands canonical events to an ``emit(kind, data)`` function.
:class:`Outcome` is what a parser concludes when the CLI exits;
:class:`UsageLedger` turns running usage totals into per-process deltas.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import Usage
from .events import EventKind
from .failure import FailureEnvelope

UNKNOWN_KEEP = 50

Emit = Callable[[EventKind, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a parser concluded once the CLI exited.

    Attributes:
        ok: nominal success (a terminal success record and exit 0).
        text: final assistant text.
        usage: tokens and cost of this process.
        failure: the classified failure when not ``ok``.
    """

    ok: bool
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    failure: FailureEnvelope | None = None


class StreamParser:
    """Base of the per-CLI stream parsers.

    Subclasses implement :meth:`on_event` (one decoded JSON object) and
    :meth:`outcome`. Events are emitted through ``emit(kind, data)``. Unknown
    record types are kept (bounded) in :attr:`unknown` and never raise.

    Args:
        emit: receives canonical event kinds and their data.
        provider: provider name, for events and classification.
    """

    def __init__(self, emit: Emit, provider: str) -> None:
        self.emit = emit
        self.provider = provider
        self.session_id: str | None = None
        self.terminal_seen = False
        self.unknown: deque[dict[str, Any]] = deque(maxlen=UNKNOWN_KEEP)
        self.noise: deque[str] = deque(maxlen=UNKNOWN_KEEP)
        self.lines = 0

    def feed_line(self, line: str) -> None:
        """Decode one stdout line; JSON objects go to :meth:`on_event`."""
        self.lines += 1
        stripped = line.strip()
        if not stripped:
            return
        if stripped[0] != "{":
            self.noise.append(stripped[:2000])
            return
        try:
            obj = json.loads(stripped)
        except ValueError:
            self.noise.append(stripped[:2000])
            return
        if isinstance(obj, dict):
            self.on_event(obj)
        else:
            self.noise.append(stripped[:2000])

    def on_event(self, obj: dict[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def keep_unknown(self, obj: dict[str, Any]) -> None:
        """Remember an event type this parser does not map (bounded, raw)."""
        self.unknown.append(obj)

    def start_session(self, session_id: str | None, **data: Any) -> None:
        """Record the first session id seen and emit ``session_started`` for it.

        Later records repeat the id; a different later id (sub-agents, sample
        placeholders) never replaces the id the session is resumed by.
        """
        if not session_id or self.session_id is not None:
            return
        self.session_id = session_id
        self.emit(
            "session_started",
            {"session_id": session_id, "provider": self.provider, **drop_none(data)},
        )


ParserFactory = Callable[[Emit], StreamParser]


def drop_none(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the keys whose value is ``None``."""
    return {k: v for k, v in data.items() if v is not None}


def as_int(value: Any) -> int:
    """``value`` as an int (0 for missing or non-numeric)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def as_str(value: Any) -> str:
    """``value`` as text: strings as-is, lists of text blocks joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            else:
                parts.append(as_str(item))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False, default=str)


class UsageLedger:
    """Per-session cumulative usage, to turn running totals into per-process deltas.

    Codex ``turn.completed.usage`` and agy ``result.usage`` are totals over the
    whole (resumed) conversation. The ledger lives in the provider instance,
    so it only knows sessions started or resumed by this process.
    """

    def __init__(self) -> None:
        self._totals: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def delta(self, key: str | None, total: Usage) -> Usage:
        """Record ``total`` for ``key`` and return what was added since the last total."""
        if not key:
            return total
        with self._lock:
            before = self._totals.get(key)
            self._totals[key] = total
        if before is None or before.output_tokens > total.output_tokens:
            return total
        return Usage(
            input_tokens=max(0, total.input_tokens - before.input_tokens),
            output_tokens=total.output_tokens - before.output_tokens,
            cached_tokens=max(0, total.cached_tokens - before.cached_tokens),
        )
