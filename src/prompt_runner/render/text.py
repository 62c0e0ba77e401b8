"""Render canonical events as text lines (SPEC 4 rendering).

``compact`` keeps one short line for what matters (text, tools, errors,
results); ``verbose`` prints one line per event with its data; ``studio`` adds
prompt headers and tool summaries. ``tool_output`` controls how much tool
output is shown (``none|summary|preview|full``) and ``thinking`` whether
thinking is shown. Output goes only through :class:`Console`, which takes an
injectable stream.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any, TextIO

from ..providers.events import Event

PREVIEW_CHARS = 400
EVENT_FLUSH_S = 0.1


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_event(event: Event, view: Mapping[str, Any]) -> str | None:
    """One rendered line for ``event`` under ``view`` (or ``None`` to hide it)."""
    mode = view.get("log_mode", "compact")
    tool_output = view.get("tool_output", "summary")
    data = event.data
    kind = event.kind
    if mode == "verbose":
        shown = {k: v for k, v in data.items() if k != "raw"}
        return f"[{kind}] {json.dumps(shown, default=str, ensure_ascii=False)}"
    if kind == "session_started":
        return f"session {data.get('session_id')} started ({data.get('provider')})"
    if kind == "assistant_text":
        return f"» {_one_line(data.get('text', ''), 400 if mode == 'studio' else 160)}"
    if kind == "thinking":
        if view.get("thinking") == "show":
            return f"(thinking) {_one_line(data.get('text', ''))}"
        return None
    if kind == "tool_use":
        summary = _one_line(json.dumps(data.get("input", {}), default=str), 100)
        return f"→ {data.get('tool')} {summary}"
    if kind == "tool_result":
        if tool_output == "none":
            return None
        output = str(data.get("output", ""))
        flag = " (error)" if data.get("is_error") else ""
        if tool_output == "summary":
            return f"← result{flag}: {len(output.splitlines())} line(s)"
        if tool_output == "preview":
            return f"← result{flag}: {_one_line(output, PREVIEW_CHARS)}"
        return f"← result{flag}:\n{output}"
    if kind == "file_change":
        return f"✎ {data.get('change', 'change')} {data.get('path')}"
    if kind == "usage":
        if mode == "studio":
            return (
                f"usage: in={data.get('input_tokens', 0)} out={data.get('output_tokens', 0)}"
                f" cost={data.get('cost_usd')}"
            )
        return None
    if kind == "result":
        return "session finished" if data.get("ok") else "session failed"
    if kind == "error":
        return f"✗ {data.get('class', 'error')}: {_one_line(data.get('message', ''), 300)}"
    if kind == "raw":
        return f"[raw {data.get('type', '?')}]" if mode == "studio" else None
    if kind == "steer":
        return f"STEER action={data.get('delivery')} text={_one_line(data.get('text', ''))}"
    return f"[{kind}]"


class Console:
    """The one door for human output. Thread-safe; ``stream=None`` discards.

    Runner messages are flushed at once; event lines are flushed at most every
    :data:`EVENT_FLUSH_S` seconds (and by the next runner message), so a
    provider streaming thousands of events is not slowed by a flush per line.
    """

    def __init__(self, stream: TextIO | None, view: Mapping[str, Any] | None = None) -> None:
        self.stream = stream
        self.view: dict[str, Any] = dict(view or {})
        self._lock = threading.Lock()
        self._flushed = time.monotonic()

    def say(self, text: str) -> None:
        """Print a runner message line (flushed)."""
        if self.stream is None:
            return
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._flushed = time.monotonic()

    def event(self, prompt_id: str, event: Event) -> None:
        """Render ``event`` under the current view."""
        if self.stream is None:
            return
        line = format_event(event, self.view)
        if line is None:
            return
        with self._lock:
            self.stream.write(f"  [{prompt_id}] {line}\n")
            now = time.monotonic()
            if now - self._flushed >= EVENT_FLUSH_S:
                self.stream.flush()
                self._flushed = now
