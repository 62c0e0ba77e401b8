"""Render canonical events as text lines (SPEC 4 rendering).

``compact`` keeps one short line for what matters (text, tools, errors,
results); ``verbose`` prints one line per event with its data; ``studio`` adds
prompt headers and tool summaries. ``tool_output`` controls how much tool
output is shown (``none|summary|preview|full``) and ``thinking`` whether
thinking is shown. ``diff`` controls ``file_change`` lines: ``none`` names the
file; ``stat`` adds ``(+A -R)`` from the event's patch, or says the tool sent
none; ``full`` adds the patch itself, indented and capped at
:data:`MAX_PATCH_LINES` lines with a marker saying how many were cut. A patch
whose ``patch_source`` is not ``tool`` (e.g. ``reconstructed``) is labelled as
such in both, never shown as the tool's own. The view is read per event: the
control plane swaps ``Console.view`` mid-run.

Output goes only through :class:`Console`, which takes an injectable stream.
On a terminal (or with ``styled=True``) lines are styled with ``rich``
(imported then, never at module import); anything else -- pipes, files, CI,
tests -- gets the same text, plain.
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
MAX_PATCH_LINES = 200
PATCH_INDENT = "      "
_VERBOSE_HIDDEN = frozenset(("raw", "patch"))


def _one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` chars with "…"."""
    text = str(text)
    head = text[: 4 * limit]  # enough to fill `limit`; a long text is not split whole
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) == len(text):
        return flat
    return flat[: limit - 1] + "…"


def _compact_json(value: Any) -> str:
    """``value`` as compact JSON for a summary line (orjson, imported on first use)."""
    global _orjson_dumps
    if _orjson_dumps is None:
        import orjson

        _orjson_dumps = orjson.dumps
    try:
        encoded: bytes = _orjson_dumps(value, default=str)
        return encoded.decode("utf-8")
    except TypeError:
        return json.dumps(value, default=str)


_orjson_dumps: Any = None


def format_event(event: Event, view: Mapping[str, Any]) -> str | None:
    """One rendered line for ``event`` under ``view`` (or ``None`` to hide it)."""
    mode = view.get("log_mode", "compact")
    tool_output = view.get("tool_output", "summary")
    data = event.data
    kind = event.kind
    if mode == "verbose":
        shown = {k: v for k, v in data.items() if k not in _VERBOSE_HIDDEN}
        line = f"[{kind}] {json.dumps(shown, default=str, ensure_ascii=False)}"
        if kind == "file_change":
            return with_diff(line, data, view.get("diff"))
        return line
    if kind == "session_started":
        return f"session {data.get('session_id')} started ({data.get('provider')})"
    if kind == "assistant_text":
        return f"» {_one_line(data.get('text', ''), 400 if mode == 'studio' else 160)}"
    if kind == "thinking":
        if view.get("thinking") == "show":
            return f"(thinking) {_one_line(data.get('text', ''))}"
        return None
    if kind == "tool_use":
        summary = _one_line(_compact_json(data.get("input", {})), 100)
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
        return with_diff(
            f"✎ {data.get('change', 'change')} {data.get('path')}", data, view.get("diff")
        )
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


def with_diff(line: str, data: Mapping[str, Any], diff: Any) -> str:
    """``line`` (a ``file_change`` line) with what ``diff`` (``none|stat|full``) adds."""
    if diff != "stat" and diff != "full":
        return line
    patch = data.get("patch")
    if not isinstance(patch, str):
        return f"{line} (no patch from the tool)"
    added, removed = data.get("added"), data.get("removed")
    body: list[str] | None = None
    if not isinstance(added, int) or not isinstance(removed, int):
        body = patch_body(patch)
        added = sum(1 for text in body if text.startswith("+"))
        removed = sum(1 for text in body if text.startswith("-"))
    stat = f"{line} (+{added} -{removed}{_source_label(data.get('patch_source'))})"
    if diff == "stat":
        return stat
    if body is None:
        body = patch_body(patch)
    if not body:
        body = ["(no lines changed)"]
    elif len(body) > MAX_PATCH_LINES:
        cut = len(body) - MAX_PATCH_LINES
        body = [
            *body[:MAX_PATCH_LINES],
            f"… {cut} more patch line(s) cut (diff full shows at most {MAX_PATCH_LINES})",
        ]
    return "\n".join([stat, *(PATCH_INDENT + text for text in body)])


def _source_label(source: Any) -> str:
    if source == "tool":
        return ""
    if source == "reconstructed":
        return ", reconstructed from the tool's input, not the tool's own patch"
    return f", patch source {source or 'unknown'}, not the tool's own patch"


def patch_body(patch: str) -> list[str]:
    """The lines of ``patch`` without its ``---``/``+++`` file header."""
    lines = patch.split("\n")
    start = 0
    while start < len(lines) and lines[start].startswith(("--- ", "+++ ")):
        start += 1
    return lines[start:] if start else lines


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Console:
    """The one door for human output. Thread-safe; ``stream=None`` discards.

    Runner messages are written and flushed at once. Plain event lines are
    gathered and written together at most every :data:`EVENT_FLUSH_S` seconds
    (and before the next runner message, and by :meth:`flush`, which the
    runner calls while a session is silent), so a provider streaming thousands
    of events costs one write per batch, not one per line, whatever buffering
    the stream has (``PYTHONUNBUFFERED=1`` makes stdout write through).
    """

    def __init__(
        self,
        stream: TextIO | None,
        view: Mapping[str, Any] | None = None,
        styled: bool | None = None,
    ) -> None:
        """``styled``: ``True`` styles lines with rich, ``False`` never, ``None`` when a TTY."""
        self.stream = stream
        self.view: dict[str, Any] = dict(view or {})
        self._lock = threading.Lock()
        self._flushed = time.monotonic()
        self._pending: list[str] = []
        self._styler: _Styler | None = None
        if stream is not None and (_isatty(stream) if styled is None else styled):
            self._styler = _Styler(stream)

    @property
    def styled(self) -> bool:
        """Whether lines go through rich (a terminal, or ``styled=True``)."""
        return self._styler is not None

    def say(self, text: str) -> None:
        """Print a runner message line (flushed)."""
        if self.stream is None:
            return
        with self._lock:
            if self._styler is not None:
                self._styler.say(text, self.view.get("log_mode") == "studio")
            else:
                self._pending.append(text + "\n")
                self.stream.write("".join(self._pending))
                self._pending.clear()
            self.stream.flush()
            self._flushed = time.monotonic()

    def flush(self) -> None:
        """Write and flush event lines still gathered (cheap when there are none)."""
        if self.stream is None:
            return
        with self._lock:
            if self._pending:
                self.stream.write("".join(self._pending))
                self._pending.clear()
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
            if self._styler is None:
                self._pending.append(f"  [{prompt_id}] {line}\n")
            else:
                self._styler.event(prompt_id, event, line)
            now = time.monotonic()
            if now - self._flushed >= EVENT_FLUSH_S:
                if self._pending:
                    self.stream.write("".join(self._pending))
                    self._pending.clear()
                self.stream.flush()
                self._flushed = now


# -- styled (rich) output ----------------------------------------------------------------

_KIND_STYLES = {
    "session_started": "dim",
    "assistant_text": "",
    "thinking": "dim italic",
    "tool_use": "cyan",
    "tool_result": "dim",
    "file_change": "yellow",
    "usage": "dim",
    "result": "green",
    "error": "bold red",
    "raw": "dim",
    "steer": "bold magenta",
}
_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan", "\\": "dim", "…": "dim italic"}
_SAY_STYLES = (("▶ ", "bold cyan"), ("✓ ", "bold green"), ("✗ ", "bold red"), ("■ ", "bold yellow"))


class _Styler:
    """Writes Console lines styled by ``rich`` (created only for a styled Console).

    Event lines use rich's own style rendering (ANSI codes for the terminal's
    colour system, ``NO_COLOR`` honoured), computed once per style: printing
    each line through ``rich.console.Console.print`` costs about 0.1 ms, too
    much for a provider streaming thousands of events. In studio mode each
    prompt header (``▶ ...``) is a rich ``Rule``.
    """

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console as RichConsole

        self.stream = stream
        self.rich: RichConsole = RichConsole(
            file=stream,
            force_terminal=True,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=True,
        )
        self._codes: dict[str, tuple[str, str]] = {}

    def codes(self, style: str) -> tuple[str, str]:
        """``(start, end)`` escape sequences of ``style`` on this terminal."""
        found = self._codes.get(style)
        if found is None:
            from rich.console import COLOR_SYSTEMS
            from rich.style import Style

            parsed = Style.parse(style)
            if self.rich.no_color:
                parsed = parsed.without_color
            system = COLOR_SYSTEMS.get(self.rich.color_system or "")
            start, _, end = parsed.render("\0", color_system=system).partition("\0")
            found = self._codes[style] = (start, end)
        return found

    def paint(self, text: str, style: str) -> str:
        if not style:
            return text
        start, end = self.codes(style)
        return f"{start}{text}{end}"

    def event(self, prompt_id: str, event: Event, line: str) -> None:
        style = _KIND_STYLES.get(event.kind, "")
        data = event.data
        if event.kind == "result" and not data.get("ok"):
            style = "bold red"
        elif event.kind == "tool_result" and data.get("is_error"):
            style = "red"
        elif event.kind == "error" and data.get("fatal") is False:
            style = "yellow"
        first, _, rest = line.partition("\n")
        out = [f"{self.paint(f'  [{prompt_id}]', 'dim')} {self.paint(first, style)}\n"]
        if rest:
            for text in rest.split("\n"):
                if event.kind == "file_change":
                    code = text.lstrip(" ")[:1]
                    out.append(self.paint(text, _DIFF_STYLES.get(code, "")) + "\n")
                else:
                    out.append(self.paint(text, style) + "\n")
        self.stream.write("".join(out))

    def say(self, text: str, studio: bool) -> None:
        if studio and text.startswith("▶ ") and len(text) < self.rich.width - 8:
            from rich.rule import Rule
            from rich.text import Text

            self.rich.print(Rule(Text(text, style="bold cyan"), style="cyan", align="left"))
            return
        style = next((s for prefix, s in _SAY_STYLES if text.startswith(prefix)), "")
        if not style and "warning:" in text[:40]:
            style = "yellow"
        self.stream.write(self.paint(text, style) + "\n")
