"""Render canonical events as text lines (SPEC 4 rendering).

``compact`` keeps one short line for what matters (text, tools, errors,
results); ``verbose`` prints one line per event with its data; ``studio`` adds
what :mod:`.studio` describes (session headers, tool summaries, usage, run
facts). ``tool_output`` controls how much tool output is shown (``none``
nothing, ``summary`` a line count, ``preview`` the first :data:`PREVIEW_CHARS`
characters on one line, ``full`` every output line, indented under the result
line and prefixed with the prompt id by the Console, capped at
:data:`MAX_TOOL_OUTPUT_LINES` lines with a marker saying how many were cut)
and ``thinking`` whether thinking is shown. ``diff`` controls ``file_change``
lines (:mod:`.diff`). Under ``diff: full`` the Console shows a change that came
without a patch as git's current state of the file (:mod:`.current_state`,
labelled so); :func:`format_event` itself never runs git. The view is read
per event: the control plane swaps ``Console.view`` mid-run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..providers.events import Event
from .diff import with_diff
from .printable import printable_line
from .shorten import compact_json, one_line
from .studio import session_header, tool_input_summary, usage_line, with_run_facts

PREVIEW_CHARS = 400

MAX_TOOL_OUTPUT_LINES = 2000

TOOL_OUTPUT_INDENT = "    "

_VERBOSE_HIDDEN = frozenset(("raw", "patch"))

_META_KEYS = frozenset(("detail", "stderr_tail"))  # an error's, shown under log_meta: full


Formatter = Callable[[Mapping[str, Any], Mapping[str, Any], bool], str | None]
"""``(event data, view, studio) -> line or None``: one kind's line outside ``verbose``."""


def format_event(event: Event, view: Mapping[str, Any]) -> str | None:
    """One rendered line for ``event`` under ``view`` (or ``None`` to hide it).

    A ``tool_result`` under ``tool_output: full`` is several lines: the result
    line, then each output line indented by :data:`TOOL_OUTPUT_INDENT`
    (the Console prefixes each with the prompt id).
    """
    mode = view.get("log_mode", "compact")
    if mode == "verbose":
        return _verbose(event, view)
    formatter = _FORMATTERS.get(event.kind)
    if formatter is None:
        return f"[{event.kind}]"
    return formatter(event.data, view, mode == "studio")


def _verbose(event: Event, view: Mapping[str, Any]) -> str:
    """``[kind] {data as JSON}`` (raw and patch left out; a file change adds its diff)."""
    data = event.data
    hidden = _VERBOSE_HIDDEN if view.get("log_meta") == "full" else _VERBOSE_HIDDEN | _META_KEYS
    shown = {k: v for k, v in data.items() if k not in hidden}
    line = f"[{event.kind}] {json.dumps(shown, default=str, ensure_ascii=False)}"
    if event.kind == "file_change":
        return with_diff(line, data, view.get("diff"))
    return line


def _shown(value: Any) -> str:
    """A value from an agent or a provider (a file or tool name) inside a line:
    every control character escaped, newline and tab too (``\\x0a``), so it
    cannot start a line of its own."""
    return printable_line(value if isinstance(value, str) else str(value))


def _session_started(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    if studio:
        return session_header(data)
    return f"session {_shown(data.get('session_id'))} started ({_shown(data.get('provider'))})"


def _assistant_text(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    return f"» {one_line(data.get('text', ''), 400 if studio else 160)}"


def _thinking(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str | None:
    if view.get("thinking") == "show":
        return f"(thinking) {one_line(data.get('text', ''))}"
    return None


def _tool_use(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    if studio:
        return f"→ {_shown(data.get('tool'))}{tool_input_summary(data.get('input'))}"
    summary = one_line(compact_json(data.get("input", {})), 100)
    return f"→ {_shown(data.get('tool'))} {summary}"


def _tool_result(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str | None:
    tool_output = view.get("tool_output", "summary")
    if tool_output == "none":
        return None
    output = str(data.get("output", ""))
    flag = " (error)" if data.get("is_error") else ""
    head = "← result"
    if studio and data.get("tool"):
        head = f"← {_shown(data.get('tool'))} result"
    if tool_output == "summary":
        return f"{head}{flag}: {len(output.splitlines())} line(s)"
    if tool_output == "preview":
        return f"{head}{flag}: {one_line(output, PREVIEW_CHARS)}"
    return full_output(f"{head}{flag}", output)


def _file_change(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    line = f"✎ {_shown(data.get('change', 'change'))} {_shown(data.get('path'))}"
    return with_diff(line, data, view.get("diff"))


def _usage(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str | None:
    return usage_line(data) if studio else None


def _result(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    line = "session finished" if data.get("ok") else "session failed"
    return with_run_facts(line, data) if studio else line


def _error(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    line = f"✗ {_shown(data.get('class', 'error'))}: {one_line(data.get('message', ''), 300)}"
    return line + error_meta(data) if view.get("log_meta") == "full" else line


def _raw(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str | None:
    return f"[raw {_shown(data.get('type', '?'))}]" if studio else None


def _steer(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    return f"STEER action={_shown(data.get('delivery'))} text={one_line(data.get('text', ''))}"


def _usage_window(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str | None:
    """A usage window worth a line: past a warning threshold or refusing (any under studio).

    ``data`` is a ``usage_window`` event's (:func:`~prompt_runner.providers._stream.window_event`):
    its reset is ``, resets <resets_at>``, or ``, reset unknown (<reset_given> is out of
    range)`` when the provider gave one no date holds (``reset_given``); nothing when it
    gave none."""
    if data.get("status") == "allowed" and not studio:
        return None
    util = data.get("utilization")
    used = f" {util:.0%} used" if isinstance(util, int | float) else ""
    if data.get("resets_at"):
        resets = f", resets {_shown(data['resets_at'])}"
    elif data.get("reset_given"):
        resets = f", reset unknown ({_shown(data['reset_given'])} is out of range)"
    else:
        resets = ""
    window = " ".join(_shown(data.get(key)) for key in ("provider", "window", "status"))
    return f"◔ usage: {window}{used}{resets}"


def _usage_wait_started(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    return f"⏸ waiting until {_shown(data.get('waiting_until'))}: {_shown(data.get('reason'))}"


def _usage_wait_ended(data: Mapping[str, Any], view: Mapping[str, Any], studio: bool) -> str:
    how = "woken by control wake" if data.get("woken") else "the window reset"
    return f"▶ wait over after {int(data.get('waited_ms') or 0) / 1000:.1f} s ({how})"


_FORMATTERS: dict[str, Formatter] = {
    "session_started": _session_started,
    "assistant_text": _assistant_text,
    "thinking": _thinking,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "file_change": _file_change,
    "usage": _usage,
    "result": _result,
    "error": _error,
    "raw": _raw,
    "steer": _steer,
    "usage_window": _usage_window,
    "usage_wait_started": _usage_wait_started,
    "usage_wait_ended": _usage_wait_ended,
}


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
