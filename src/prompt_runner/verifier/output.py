"""Capping captured command output with an explicit truncation marker."""

from __future__ import annotations

HEAD_LINES = 40
TAIL_LINES = 120
MAX_CHARS = 16_000


def cap_output(
    text: str,
    *,
    head_lines: int = HEAD_LINES,
    tail_lines: int = TAIL_LINES,
    max_chars: int = MAX_CHARS,
) -> str:
    """Keep the first ``head_lines`` and last ``tail_lines`` lines of ``text``.

    Dropped lines are replaced by one line ``[truncated: N more lines]``; if the
    result is still longer than ``max_chars`` characters its middle is cut and
    marked ``[truncated: N more characters]``. Text within the limits is
    returned unchanged.
    """
    lines = text.splitlines()
    if len(lines) > head_lines + tail_lines:
        dropped = len(lines) - head_lines - tail_lines
        kept = [*lines[:head_lines], f"[truncated: {dropped} more lines]"]
        kept += lines[len(lines) - tail_lines :] if tail_lines else []
        text = "\n".join(kept)
    if len(text) > max_chars:
        half = max_chars // 2
        dropped_chars = len(text) - 2 * half
        text = f"{text[:half]}\n[truncated: {dropped_chars} more characters]\n{text[-half:]}"
    return text


def combined(stdout: str, stderr: str) -> str:
    """stdout, then stderr under a ``[stderr]`` line when both are present."""
    if stdout and stderr:
        return f"{stdout.rstrip()}\n[stderr]\n{stderr.rstrip()}"
    return (stdout or stderr).rstrip()
