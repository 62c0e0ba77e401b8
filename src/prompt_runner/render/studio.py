"""What studio mode adds: session headers, tool summaries, usage and run facts.

A header line per session (id, provider, model), tool summaries that name the
tool and its most useful input (the command of a shell tool, the path of a
file tool) instead of raw JSON, token usage and cost (unknown fields omitted,
cost as ``$0.0123``), and the session's duration and cost on its result line
(:class:`SessionNotes` notes them per prompt).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from ..providers.events import Event
from .printable import printable_line
from .shorten import compact_json, one_line

_COMMAND_KEYS = ("command", "cmd")

_PATH_KEYS = ("file_path", "absolute_path", "notebook_path", "filePath", "path")

_OTHER_KEYS = ("url", "query", "description", "prompt")


def session_header(data: Mapping[str, Any]) -> str:
    """Studio's header line of a session: its id, provider and model (when known)."""
    parts = [f"session {printable_line(str(data.get('session_id')))}"]
    if data.get("provider"):
        parts.append(f"provider {printable_line(str(data['provider']))}")
    if data.get("model"):
        parts.append(f"model {printable_line(str(data['model']))}")
    return "┌ " + " · ".join(parts)


def _text_of(value: Any) -> str | None:
    """A non-empty string, or an argv list joined by spaces; else ``None``."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return None


def tool_input_summary(tool_input: Any) -> str:
    """The most useful field of a tool's input, with its leading separator.

    ``" $ COMMAND"`` for a shell tool, ``" PATH"`` for a file tool, ``" 'PATTERN'
    in PATH"`` for a search, the changed paths of a patch tool; anything else
    falls back to the input as compact JSON.
    """
    if isinstance(tool_input, Mapping):
        for key in _COMMAND_KEYS:
            text = _text_of(tool_input.get(key))
            if text is not None:
                return f" $ {one_line(text, 200)}"
        pattern = _text_of(tool_input.get("pattern"))
        if pattern is not None:
            where = _text_of(tool_input.get("path"))
            suffix = f" in {one_line(where, 100)}" if where is not None else ""
            return f" {one_line(repr(pattern), 120)}{suffix}"
        for key in (*_PATH_KEYS, *_OTHER_KEYS):
            text = _text_of(tool_input.get(key))
            if text is not None:
                return f" {one_line(text, 200)}"
        changes = tool_input.get("changes")
        if isinstance(changes, list):
            paths = [str(c["path"]) for c in changes if isinstance(c, Mapping) and c.get("path")]
            if paths:
                return f" {one_line(', '.join(paths), 200)}"
    if tool_input is None or tool_input == {}:
        return ""
    return f" {one_line(compact_json(tool_input), 100)}"


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_cost(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cost(value: float) -> str:
    return f"${value:.4f}"


def usage_line(data: Mapping[str, Any]) -> str | None:
    """``usage: in=N out=N cached=N cost=$0.0123`` with unknown fields left out.

    A provider that reports no tokens leaves both counts at 0, so ``in``/``out``
    are shown only when one of them is not 0; ``None`` when nothing is known.
    """
    parts: list[str] = []
    tokens_in, tokens_out = data.get("input_tokens"), data.get("output_tokens")
    if (_is_count(tokens_in) and tokens_in) or (_is_count(tokens_out) and tokens_out):
        if _is_count(tokens_in):
            parts.append(f"in={tokens_in}")
        if _is_count(tokens_out):
            parts.append(f"out={tokens_out}")
    cached = data.get("cached_tokens")
    if _is_count(cached) and cached:
        parts.append(f"cached={cached}")
    cost = data.get("cost_usd")
    if _is_cost(cost):
        parts.append(f"cost={_cost(cost)}")
    return f"usage: {' '.join(parts)}" if parts else None


def _duration(ms: int) -> str:
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def with_run_facts(line: str, data: Mapping[str, Any]) -> str:
    """``line`` with ``(DURATION, $COST)`` from ``duration_ms``/``cost_usd`` when known."""
    facts: list[str] = []
    duration = data.get("duration_ms")
    if _is_count(duration) and duration >= 0:
        facts.append(_duration(duration))
    cost = data.get("cost_usd")
    if _is_cost(cost):
        facts.append(_cost(cost))
    return f"{line} ({', '.join(facts)})" if facts else line


class SessionNotes:
    """What studio's result line needs from earlier events, per prompt.

    ``session_started`` notes the start time, ``usage`` the cost; a ``result``
    event comes back with ``duration_ms``/``cost_usd`` added when it carries
    none of its own. Used only in studio mode.
    """

    def __init__(self) -> None:
        self._notes: dict[str, tuple[int | None, float | None]] = {}

    def enrich(self, prompt_id: str, event: Event) -> Event:
        kind = event.kind
        if kind == "session_started":
            self._notes[prompt_id] = (event.at_ms, None)
        elif kind == "usage":
            cost = event.data.get("cost_usd")
            if _is_cost(cost):
                started, _ = self._notes.get(prompt_id, (None, None))
                self._notes[prompt_id] = (started, float(cost))
        elif kind == "result":
            started, cost = self._notes.pop(prompt_id, (None, None))
            data = event.data
            extra: dict[str, Any] = {}
            if started is not None and "duration_ms" not in data:
                extra["duration_ms"] = max(0, event.at_ms - started)
            if cost is not None and "cost_usd" not in data:
                extra["cost_usd"] = cost
            if extra:
                return Event("result", {**data, **extra}, event.at_ms)
        return event
