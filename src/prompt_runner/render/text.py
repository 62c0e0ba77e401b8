"""Render canonical events as text lines (SPEC 4 rendering).

``compact`` keeps one short line for what matters (text, tools, errors,
results); ``verbose`` prints one line per event with its data; ``studio`` adds
a header line per session (id, provider, model), tool summaries that name the
tool and its most useful input (the command of a shell tool, the path of a
file tool) instead of raw JSON, the tool's name on its result, token usage and
cost (unknown fields omitted, cost as ``$0.0123``), and the session's duration
and cost on its result line (``Console`` notes them per prompt). ``tool_output``
controls how much tool output is shown (``none`` nothing, ``summary`` a line
count, ``preview`` the first :data:`PREVIEW_CHARS` characters on one line,
``full`` every output line, indented under the result line and prefixed with
the prompt id by :class:`Console`, capped at :data:`MAX_TOOL_OUTPUT_LINES`
lines with a marker saying how many were cut) and ``thinking`` whether
thinking is shown. ``diff`` controls ``file_change`` lines: ``none`` names the
file; ``stat`` adds ``(+A -R)`` from the event's patch, or says the tool sent
none; ``full`` adds the patch itself, indented and capped at
:data:`MAX_PATCH_LINES` lines with a marker saying how many were cut. A patch
whose ``patch_source`` is not ``tool`` (e.g. ``reconstructed``) is labelled as
such in both, never shown as the tool's own. Under ``full`` the
:class:`Console` shows a change that came without a patch as git's current
state of the file (:mod:`.current_state`, labelled so); ``format_event``
itself never runs git. The view is read per event: the control plane swaps
``Console.view`` mid-run.

Output goes only through :class:`Console`, which takes an injectable stream.
Every line it prints passes :func:`.printable.printable`: control characters
from agents' text, tool output, patches and file names are shown escaped
(``\x1b``), never sent to the terminal raw.
On a terminal (or with ``styled=True``) lines are styled with ``rich``
(imported then, never at module import); anything else -- pipes, files, CI,
tests -- gets the same text, plain.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, TypeGuard

from ..providers.events import Event
from .printable import printable

PREVIEW_CHARS = 400
EVENT_FLUSH_S = 0.1
MAX_PATCH_LINES = 200
PATCH_INDENT = "      "
MAX_TOOL_OUTPUT_LINES = 2000
TOOL_OUTPUT_INDENT = "    "
_VERBOSE_HIDDEN = frozenset(("raw", "patch"))
_META_KEYS = frozenset(("detail", "stderr_tail"))  # an error's, shown under log_meta: full


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
    """One rendered line for ``event`` under ``view`` (or ``None`` to hide it).

    A ``tool_result`` under ``tool_output: full`` is several lines: the result
    line, then each output line indented by :data:`TOOL_OUTPUT_INDENT`
    (:class:`Console` prefixes each with the prompt id).
    """
    mode = view.get("log_mode", "compact")
    tool_output = view.get("tool_output", "summary")
    data = event.data
    kind = event.kind
    if mode == "verbose":
        hidden = _VERBOSE_HIDDEN if view.get("log_meta") == "full" else _VERBOSE_HIDDEN | _META_KEYS
        shown = {k: v for k, v in data.items() if k not in hidden}
        line = f"[{kind}] {json.dumps(shown, default=str, ensure_ascii=False)}"
        if kind == "file_change":
            return with_diff(line, data, view.get("diff"))
        return line
    studio = mode == "studio"
    if kind == "session_started":
        if studio:
            return _session_header(data)
        return f"session {data.get('session_id')} started ({data.get('provider')})"
    if kind == "assistant_text":
        return f"» {_one_line(data.get('text', ''), 400 if studio else 160)}"
    if kind == "thinking":
        if view.get("thinking") == "show":
            return f"(thinking) {_one_line(data.get('text', ''))}"
        return None
    if kind == "tool_use":
        if studio:
            return f"→ {data.get('tool')}{_tool_input_summary(data.get('input'))}"
        summary = _one_line(_compact_json(data.get("input", {})), 100)
        return f"→ {data.get('tool')} {summary}"
    if kind == "tool_result":
        if tool_output == "none":
            return None
        output = str(data.get("output", ""))
        flag = " (error)" if data.get("is_error") else ""
        head = "← result"
        if studio and data.get("tool"):
            head = f"← {data.get('tool')} result"
        if tool_output == "summary":
            return f"{head}{flag}: {len(output.splitlines())} line(s)"
        if tool_output == "preview":
            return f"{head}{flag}: {_one_line(output, PREVIEW_CHARS)}"
        return full_output(f"{head}{flag}", output)
    if kind == "file_change":
        return with_diff(
            f"✎ {data.get('change', 'change')} {data.get('path')}", data, view.get("diff")
        )
    if kind == "usage":
        return _usage_line(data) if studio else None
    if kind == "result":
        line = "session finished" if data.get("ok") else "session failed"
        return _with_run_facts(line, data) if studio else line
    if kind == "error":
        line = f"✗ {data.get('class', 'error')}: {_one_line(data.get('message', ''), 300)}"
        return line + error_meta(data) if view.get("log_meta") == "full" else line
    if kind == "raw":
        return f"[raw {data.get('type', '?')}]" if studio else None
    if kind == "steer":
        return f"STEER action={data.get('delivery')} text={_one_line(data.get('text', ''))}"
    return f"[{kind}]"


def error_meta(data: Mapping[str, Any]) -> str:
    """What ``log_meta: full`` adds under an error line: how the failure was judged and
    the provider's stderr, indented (``""`` when the event carries neither)."""
    lines: list[str] = []
    facts = {"class": data.get("class"), "provider_code": data.get("provider_code")}
    facts.update(data.get("detail") or {})
    facts = {k: v for k, v in facts.items() if v is not None}
    if data.get("detail") is not None:
        shown = (f"{k}={json.dumps(v) if isinstance(v, bool) else v}" for k, v in facts.items())
        lines.append(f"{TOOL_OUTPUT_INDENT}failure: {' '.join(shown)}")
    tail = data.get("stderr_tail") or []
    if tail:
        lines.append(f"{TOOL_OUTPUT_INDENT}stderr:")
        lines.extend(f"{TOOL_OUTPUT_INDENT}  {text}" for text in tail)
    return "".join(f"\n{text}" for text in lines)


def full_output(head: str, output: str) -> str:
    """``head: N line(s)`` and every line of ``output``, indented, capped with a marker."""
    lines = output.splitlines()
    if not lines:
        return f"{head}: no output"
    shown = lines[:MAX_TOOL_OUTPUT_LINES]
    body = [TOOL_OUTPUT_INDENT + text for text in shown]
    if len(lines) > MAX_TOOL_OUTPUT_LINES:
        cut = len(lines) - MAX_TOOL_OUTPUT_LINES
        body.append(
            f"{TOOL_OUTPUT_INDENT}… {cut} more output line(s) cut"
            f" (tool_output full shows at most {MAX_TOOL_OUTPUT_LINES})"
        )
    return "\n".join([f"{head}: {len(lines)} line(s)", *body])


# -- studio ------------------------------------------------------------------------------

_COMMAND_KEYS = ("command", "cmd")
_PATH_KEYS = ("file_path", "absolute_path", "notebook_path", "filePath", "path")
_OTHER_KEYS = ("url", "query", "description", "prompt")


def _session_header(data: Mapping[str, Any]) -> str:
    """Studio's header line of a session: its id, provider and model (when known)."""
    parts = [f"session {data.get('session_id')}"]
    if data.get("provider"):
        parts.append(f"provider {data['provider']}")
    if data.get("model"):
        parts.append(f"model {data['model']}")
    return "┌ " + " · ".join(parts)


def _text_of(value: Any) -> str | None:
    """A non-empty string, or an argv list joined by spaces; else ``None``."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return None


def _tool_input_summary(tool_input: Any) -> str:
    """The most useful field of a tool's input, with its leading separator.

    ``" $ COMMAND"`` for a shell tool, ``" PATH"`` for a file tool, ``" 'PATTERN'
    in PATH"`` for a search, the changed paths of a patch tool; anything else
    falls back to the input as compact JSON.
    """
    if isinstance(tool_input, Mapping):
        for key in _COMMAND_KEYS:
            text = _text_of(tool_input.get(key))
            if text is not None:
                return f" $ {_one_line(text, 200)}"
        pattern = _text_of(tool_input.get("pattern"))
        if pattern is not None:
            where = _text_of(tool_input.get("path"))
            suffix = f" in {_one_line(where, 100)}" if where is not None else ""
            return f" {_one_line(repr(pattern), 120)}{suffix}"
        for key in (*_PATH_KEYS, *_OTHER_KEYS):
            text = _text_of(tool_input.get(key))
            if text is not None:
                return f" {_one_line(text, 200)}"
        changes = tool_input.get("changes")
        if isinstance(changes, list):
            paths = [str(c["path"]) for c in changes if isinstance(c, Mapping) and c.get("path")]
            if paths:
                return f" {_one_line(', '.join(paths), 200)}"
    if tool_input is None or tool_input == {}:
        return ""
    return f" {_one_line(_compact_json(tool_input), 100)}"


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_cost(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cost(value: float) -> str:
    return f"${value:.4f}"


def _usage_line(data: Mapping[str, Any]) -> str | None:
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


def _with_run_facts(line: str, data: Mapping[str, Any]) -> str:
    """``line`` with ``(DURATION, $COST)`` from ``duration_ms``/``cost_usd`` when known."""
    facts: list[str] = []
    duration = data.get("duration_ms")
    if _is_count(duration) and duration >= 0:
        facts.append(_duration(duration))
    cost = data.get("cost_usd")
    if _is_cost(cost):
        facts.append(_cost(cost))
    return f"{line} ({', '.join(facts)})" if facts else line


class _SessionNotes:
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
    if source == "git_current":
        return ", current state from git, not the tool's patch"
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
        roots: Mapping[str, Path] | None = None,
    ) -> None:
        """``styled``: ``True`` styles lines with rich, ``False`` never, ``None`` when a TTY.

        ``roots``: prompt id -> the session's working directory, against which
        a relative path of a patchless change is looked up in git under
        ``diff: full`` (see :mod:`.current_state`).
        """
        self.stream = stream
        self.view: dict[str, Any] = dict(view or {})
        self.roots: dict[str, Path] = dict(roots or {})
        self._lock = threading.Lock()
        self._flushed = time.monotonic()
        self._pending: list[str] = []
        self._notes = _SessionNotes()
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
        text = printable(text)  # runner lines quote file names and provider messages
        with self._lock:
            if self._styler is not None:
                self._styler.say(text, self.view.get("log_mode") == "studio")
            else:
                self._pending.append(text + "\n")
            self._write_pending(time.monotonic())

    def flush(self) -> None:
        """Write and flush event lines still gathered (cheap when there are none)."""
        if self.stream is None:
            return
        with self._lock:
            if self._pending:
                self._write_pending(time.monotonic())

    def events(self, prompt_id: str, events: list[Event]) -> None:
        """Render several events (one lock; plain lines gathered like :meth:`event`'s)."""
        if self.stream is None:
            return
        view = self.view
        if self._styler is not None or view.get("log_mode") == "studio":
            for event in events:  # styled lines and studio's per-session notes: one by one
                self.event(prompt_id, event)
            return
        lines = []
        full = view.get("diff") == "full"
        for event in events:
            if full and event.kind == "file_change":
                event = self._current_state(prompt_id, event)
            line = format_event(event, view)
            if line is not None:
                lines.append(_plain_line(prompt_id, event, printable(line)))
        if not lines:
            return
        with self._lock:
            self._pending.extend(lines)
            self._write_pending_if_due()

    def event(self, prompt_id: str, event: Event) -> None:
        """Render ``event`` under the current view."""
        if self.stream is None:
            return
        view = self.view
        if view.get("log_mode") == "studio":
            event = self._notes.enrich(prompt_id, event)
        if event.kind == "file_change" and view.get("diff") == "full":
            event = self._current_state(prompt_id, event)
        line = format_event(event, view)
        if line is None:
            return
        line = printable(line)  # an agent's text never drives the terminal
        with self._lock:
            if self._styler is None:
                self._pending.append(_plain_line(prompt_id, event, line))
            else:
                self._styler.event(prompt_id, event, line)
            self._write_pending_if_due()

    def _current_state(self, prompt_id: str, event: Event) -> Event:
        """A patchless ``file_change`` with git's current state of its path (shown
        as such, never as the tool's patch); any other event unchanged."""
        if isinstance(event.data.get("patch"), str):
            return event
        from .current_state import with_current_state

        data = with_current_state(event.data, self.roots.get(prompt_id))
        return event if data is event.data else Event(event.kind, data, event.at_ms)

    def _write_pending_if_due(self) -> None:
        now = time.monotonic()
        if now - self._flushed >= EVENT_FLUSH_S:
            self._write_pending(now)

    def _write_pending(self, now: float) -> None:
        """Write the gathered lines in one call and flush (the lock is held)."""
        assert self.stream is not None
        if self._pending:
            self.stream.write("".join(self._pending))
            self._pending.clear()
        self.stream.flush()
        self._flushed = now


def _plain_line(prompt_id: str, event: Event, line: str) -> str:
    """``line`` as printed: prompt prefix; full tool output keeps it on every line."""
    prefix = f"  [{prompt_id}] "
    if event.kind in ("tool_result", "error") and "\n" in line:
        line = line.replace("\n", f"\n{prefix}")
    return f"{prefix}{line}\n"


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
        elif event.kind == "session_started" and line.startswith("┌ "):
            style = "bold cyan"  # studio's session header
        first, _, rest = line.partition("\n")
        prefix = self.paint(f"  [{prompt_id}]", "dim")
        out = [f"{prefix} {self.paint(first, style)}\n"]
        if rest:
            for text in rest.split("\n"):
                if event.kind in ("tool_result", "error"):  # every line attributed
                    out.append(f"{prefix} {self.paint(text, style)}\n")
                elif event.kind == "file_change":
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
