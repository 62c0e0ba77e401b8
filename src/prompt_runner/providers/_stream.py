"""Stream-parsing building blocks shared by the CLI adapters.

:class:`StreamParser` decodes one stdout line at a time (JSON objects go to
the subclass, anything else is kept as bounded raw noise), records the
session id, and hands canonical events to an ``emit(kind, data)`` function.
Records a parser does not know, and non-JSON lines, are emitted as ``raw``
events carrying the original line (capped at :data:`RAW_LINE_CAP`
characters); nothing unknown is kept in memory.
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

import orjson

from .base import Usage
from .events import EventKind
from .failure import FailureEnvelope
from .usage import UsageWindow

NOISE_KEEP = 20
NOISE_LINE_CAP = 2000
RAW_LINE_CAP = 4000

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
    record types never raise: :meth:`keep_unknown` emits them as ``raw``
    events (line capped at :data:`RAW_LINE_CAP`) and counts them in
    :attr:`unknown_count`. Non-JSON stdout lines are emitted the same way
    (type ``non_json``) and the last :data:`NOISE_KEEP` are kept in
    :attr:`noise` for the failure message of a CLI that printed no result.

    Args:
        emit: receives canonical event kinds and their data.
        provider: provider name, for events and classification.
    """

    def __init__(self, emit: Emit, provider: str) -> None:
        self.emit = emit
        self.provider = provider
        self.session_id: str | None = None
        self.terminal_seen = False
        self.unknown_count = 0
        self.noise: deque[str] = deque(maxlen=NOISE_KEEP)
        self.lines = 0
        self._line = ""
        self.usage_windows: dict[str, UsageWindow] = {}
        """The usage windows the stream reported, the latest per kind."""

    def feed_line(self, line: str) -> None:
        """Decode one stdout line; JSON objects go to :meth:`on_event`."""
        self.lines += 1
        self._line = line
        if not line or line[0] != "{":
            line = line.strip()
            if not line:
                return
            if line[0] != "{":
                self._noise(line)
                return
        try:
            obj = _loads(line)
        except ValueError:
            self._noise(line.strip())
            return
        if type(obj) is dict:
            self.on_event(obj)
        else:
            self._noise(line.strip())

    def _noise(self, text: str) -> None:
        self.noise.append(text[:NOISE_LINE_CAP])
        self.emit("raw", {"type": "non_json", "line": _cap(text)})

    def on_event(self, obj: dict[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def keep_unknown(self, obj: Mapping[str, Any]) -> None:
        """Emit a record this parser does not map as a ``raw`` event.

        Args:
            obj: the unknown record (a whole line, or a nested item of it);
                its ``type`` / ``event`` / ``step_type`` names the raw event.
                The event carries the current stdout line, capped at
                :data:`RAW_LINE_CAP` characters.
        """
        self.unknown_count += 1
        kind = obj.get("type") or obj.get("event") or obj.get("step_type") or "unknown"
        self.emit("raw", {"type": str(kind)[:200], "line": _cap(self._line)})

    def note_windows(self, windows: list[UsageWindow]) -> None:
        """Remember usage windows the stream reported and emit a ``usage_window``
        event for each one that changed (status, utilization or reset)."""
        for window in windows:
            if self.usage_windows.get(window.kind) != window:
                self.usage_windows[window.kind] = window
                self.emit("usage_window", window_event(window))

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


def window_event(window: UsageWindow) -> dict[str, Any]:
    """A ``usage_window`` event's data: the window's fields, its ``kind`` as ``window``
    (an event's own ``kind`` is the event kind)."""
    data = window.to_dict()
    data["window"] = data.pop("kind")
    return data


ParserFactory = Callable[[Emit], StreamParser]

# The C scanner json.loads ends up in, minus its two whitespace regex matches per call.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads(line: str) -> Any:
    """Decode one stripped line that must be exactly one JSON value (hot path).

    orjson (a compiled parser, ~3x faster than the standard library's) does the
    work; what it refuses that the standard library accepts (NaN, integers
    beyond 64 bits) falls back to the C scanner ``json.loads`` ends up in.

    Raises:
        ValueError: ``line`` is not exactly one JSON value, or nests too deeply
            to decode.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    try:
        value, end = _scan(line, 0)
    except StopIteration as exc:
        raise ValueError(f"no JSON value at {exc.value}") from None
    except RecursionError:  # past orjson's 1024 levels, then the stack (state/untrusted_json.py)
        raise ValueError("nested too deeply to decode") from None
    if end != len(line) and line[end:].strip():
        raise ValueError(f"extra data at {end}")
    return value


def _cap(line: str) -> str:
    if len(line) <= RAW_LINE_CAP:
        return line
    return line[:RAW_LINE_CAP] + f"...[{len(line) - RAW_LINE_CAP} more chars]"


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
