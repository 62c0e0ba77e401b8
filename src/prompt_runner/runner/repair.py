"""Repair prompts: the original body plus the unmet checks (SPEC 3.4; catalog D10).

The block is plain text a model reads easily: labelled fields, output indented
six spaces, long output cut to :data:`MAX_OUTPUT_LINES` lines with an explicit
``[truncated: N more lines]`` marker. Absent fields are omitted, never rendered
as ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_OUTPUT_LINES = 40
MAX_LINE_CHARS = 2000


def cap_lines(text: str, limit: int = MAX_OUTPUT_LINES) -> list[str]:
    """Split ``text`` into lines, keeping ``limit`` and marking the rest."""
    lines = [line[:MAX_LINE_CHARS] for line in text.splitlines()]
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"[truncated: {len(lines) - limit} more lines]"]


def _command_text(command: Any) -> str:
    if isinstance(command, list | tuple):
        import shlex

        return shlex.join(str(c) for c in command)
    return str(command)


def render_failures(failures: Sequence[Mapping[str, Any]]) -> str:
    """Render verifier failure items as labelled blocks."""
    if not failures:
        return "(none recorded)"
    out: list[str] = []
    for item in failures:
        out.append("- failure")
        for label in ("kind", "repo", "path"):
            value = item.get(label)
            if value not in (None, ""):
                out.append(f"  {label}: {value}")
        if item.get("command") not in (None, "", []):
            out.append(f"  command: {_command_text(item['command'])}")
        if item.get("cwd"):
            out.append(f"  cwd: {item['cwd']}")
        details = str(item.get("details") or "")
        output = str(item.get("output") or "")
        if details and "\n" not in details and output:
            out.append(f"  details: {details}")
            body = output
        elif details and "\n" not in details:
            out.append(f"  details: {details}")
            body = ""
        else:
            body = "\n".join(x for x in (details, output) if x)
        if body:
            out.append("  output:")
            out.extend(f"      {line}" for line in cap_lines(body))
    return "\n".join(out)


def repair_prompt(
    body: str, *, last_error: str | None, failures: Sequence[Mapping[str, Any]]
) -> str:
    """Return the repair prompt: ``body`` + a ``## Repair Instructions`` block.

    Args:
        body: the prompt's original markdown body.
        last_error: the last provider/runtime error message, if any.
        failures: verifier failure items (dicts with kind, repo, path,
            command, cwd, details, output).
    """
    parts = [
        body.rstrip(),
        "",
        "## Repair Instructions",
        "",
        "A previous session on this prompt did not satisfy its completion contract. "
        "Keep the work that is already correct and fix only what is listed below; "
        "the runner re-checks the contract when you finish.",
        "",
    ]
    if last_error:
        parts += ["Last runtime error:", *cap_lines(last_error), ""]
    parts += ["Remaining verifier failures:", render_failures(failures), ""]
    return "\n".join(parts)


def resume_message(failure_message: str | None) -> str:
    """The message sent when resuming a session after a transport failure."""
    why = f" ({failure_message})" if failure_message else ""
    return (
        f"The connection to the runner dropped{why}. Continue the task exactly where you "
        "left off; the task is unchanged."
    )


def steer_message(text: str) -> str:
    """The message that delivers a steer into a resumed session."""
    return (
        f"{text}\n\nThis is guidance from the operator. Take it into account and carry on "
        "with the work you were doing; the task is unchanged."
    )


def with_steers(text: str, steers: Sequence[Any]) -> str:
    """``text`` (a session's prompt or resume message) with the operator's steers
    accepted while the previous session was being verified (each has ``text``)."""
    if not steers:
        return text
    said = "\n\n".join(str(getattr(s, "text", s)).strip() for s in steers)
    return (
        f"{text.rstrip()}\n\n## Operator Guidance\n\n{said}\n\n"
        "This is guidance from the operator, sent while your previous session's work was "
        "being verified. Take it into account; the task and its completion contract are "
        "unchanged.\n"
    )


def agent_owned_prompt(body: str, session: int, failures: Sequence[Mapping[str, Any]]) -> str:
    """The prompt of an agent-owned fresh session (``session``: its 1-based number),
    with the failed structural checks."""
    return "\n".join(
        [
            body.rstrip(),
            "",
            f"## Agent-Owned Completion — Fresh Session {session}",
            "",
            "A previous session ended but the structural evidence of completion is missing. "
            "Continue the task; these checks still fail:",
            "",
            render_failures(failures),
            "",
        ]
    )
