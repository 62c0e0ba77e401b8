"""What the page shows for one event or control log entry: plain text, never markup.

Each event is rendered by the console's own formatter in studio mode
(:func:`prompt_runner.render.lines.format_event`: session headers, tool
summaries that name the command or path, usage and run facts), so the page
reads like ``--log-mode studio``. A file change that came with the provider's
patch carries it (``patch``, labelled by ``patch_source``: the tool's own, or
reconstructed from its input); a tool result carries its output, capped.

Everything here is text the page puts in the DOM with ``textContent``: agent
output is untrusted, and nothing in this module produces HTML.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ..providers.events import EVENT_KINDS, Event, EventKind
from ..render.lines import format_event

STUDIO = {"log_mode": "studio", "tool_output": "preview", "thinking": "show", "diff": "none"}
"""The view the page renders events with (the patch is shown apart, as a diff)."""

MAX_TEXT = 20_000
"""Characters of a patch, tool output or message kept for the page (then a marker)."""

_ENVELOPE = ("kind", "at_ms", "prompt_id", "run_id")


def capped(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` as a string of at most ``limit`` characters, with a marker when cut."""
    value = text if isinstance(text, str) else json.dumps(text, default=str, ensure_ascii=False)
    if len(value) <= limit:
        return value
    return value[:limit] + f"\n… {len(value) - limit} more character(s) not shown"


def _line(kind: str, data: dict[str, Any], at_ms: int) -> str:
    if kind == "run_finished":
        return f"■ run {data.get('run_id') or '?'} finished: {data.get('status') or 'unknown'}"
    if kind == "usage_wait_started":
        until = data.get("waiting_until") or "?"
        what = " ".join(str(data[k]) for k in ("provider", "window") if data.get(k))
        reason = f" ({data['reason']})" if data.get("reason") else ""
        return f"⏸ waiting until {until} for {what or 'the usage window'}{reason}"
    if kind == "usage_wait_ended":
        waited = data.get("waited_ms")
        took = f" after {waited / 1000:.0f}s" if isinstance(waited, int | float) else ""
        return f"▶ wait ended{took}" + (" (woken)" if data.get("woken") else "")
    if kind == "unreadable":
        return f"(a line that is not a JSON event, {data.get('bytes')} bytes)"
    if kind == "too_large":
        return f"(an event of {data.get('bytes')} bytes, too large to show)"
    if kind not in EVENT_KINDS:
        return f"[{kind}]"
    line = format_event(Event(cast(EventKind, kind), data, at_ms), STUDIO)
    return line if line is not None else ""


def event_item(offset: int, record: dict[str, Any]) -> dict[str, Any]:
    """The page's form of one ``events.jsonl`` record at byte ``offset``.

    Returns:
        ``{"off", "kind", "at_ms", "prompt_id", "line", "patch", "patch_source",
        "output"}``: ``line`` is the studio line (``""`` when studio hides the
        event); ``patch`` and ``output`` are ``None`` unless the event has them.
    """
    kind = str(record.get("kind") or "?")
    at_ms = record.get("at_ms")
    at = at_ms if isinstance(at_ms, int) and not isinstance(at_ms, bool) else 0
    data = {k: v for k, v in record.items() if k not in _ENVELOPE}
    if kind == "run_finished":
        data["run_id"] = record.get("run_id")
    try:
        line = _line(kind, data, at)
    except Exception as exc:  # a malformed event must not break the page
        line = f"[{kind}] (cannot be shown: {type(exc).__name__})"
    patch = data.get("patch") if kind == "file_change" else None
    output = data.get("output") if kind == "tool_result" else None
    if kind == "unreadable":
        output = data.get("preview")
    return {
        "off": offset,
        "kind": kind,
        "at_ms": at,
        "prompt_id": record.get("prompt_id"),
        "line": line,
        "patch": capped(patch) if isinstance(patch, str) and patch else None,
        "patch_source": data.get("patch_source") if patch else None,
        "output": capped(output) if output not in (None, "") else None,
    }


def log_item(offset: int, entry: dict[str, Any]) -> dict[str, Any]:
    """The page's form of one control log entry at byte ``offset``.

    Returns:
        ``{"off", "at", "command", "outcome", "reason", "author", "via",
        "prompt_id", "attempt", "request", "params"}`` (``params`` as compact
        JSON text).
    """
    params = entry.get("params")
    return {
        "off": offset,
        "at": entry.get("at"),
        "command": entry.get("command") or entry.get("kind"),
        "outcome": entry.get("outcome"),
        "reason": entry.get("reason"),
        "author": entry.get("author"),
        "via": entry.get("via"),
        "prompt_id": entry.get("prompt_id"),
        "attempt": entry.get("attempt"),
        "request": entry.get("request"),
        "params": capped(params, 2000) if params else "",
    }
