"""``file_change`` lines under ``diff: stat|full``: the patch's counts and its lines.

``stat`` adds ``(+A -R)`` from the event's patch, or says the tool sent none;
``full`` adds the patch itself, indented and capped at :data:`MAX_PATCH_LINES`
lines with a marker saying how many were cut. A patch whose ``patch_source``
is not ``tool`` (e.g. ``reconstructed``) is labelled as such in both, never
shown as the tool's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_PATCH_LINES = 200

PATCH_INDENT = "      "


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
