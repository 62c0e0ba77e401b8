"""A changed file's current state from git, for ``--diff full`` when the tool sent no patch.

Codex, Antigravity and most CLIs report a file change as a path only. Under
``--diff full`` the console then shows what git says about that path now --
``git diff HEAD`` for a tracked file, the whole content as an added file for
an untracked one -- labelled as the file's current state, never as the tool's
patch (SPEC 4): it may hold earlier uncommitted edits or later ones. Nothing
here runs unless ``diff`` is ``full`` and the event carries no patch.

git runs read-only (:func:`prompt_runner.git.run_git`: no optional locks, no
prompts), bounded by :data:`GIT_TIMEOUT_MS` per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..git import run_git

PATCH_SOURCE = "git_current"
GIT_TIMEOUT_MS = 5_000
MAX_PARENT_HOPS = 64


def current_patch(path: str, root: Path | None) -> str | None:
    """The unified diff git shows now for ``path``, or ``None`` when it shows nothing.

    Args:
        path: the path the tool reported (absolute, or relative to ``root``).
        root: the session's working directory (``None``: relative paths give ``None``).

    Returns:
        ``--- old`` / ``+++ new`` and the hunks (or git's "Binary files ..."
        line); ``None`` outside a git work tree, for an unchanged or ignored
        file, or when git fails.
    """
    target = Path(path)
    if not target.is_absolute():
        if root is None:
            return None
        target = root / target
    start = target.parent
    for _ in range(MAX_PARENT_HOPS):
        if start.is_dir() or start == start.parent:
            break
        start = start.parent
    if not start.is_dir():
        return None
    top = run_git(start, "rev-parse", "--show-toplevel", timeout_ms=GIT_TIMEOUT_MS)
    if not top.ok:
        return None
    tracked = run_git(
        start, "ls-files", "--error-unmatch", "--", str(target), timeout_ms=GIT_TIMEOUT_MS
    )
    if tracked.ok:
        diff = run_git(
            start,
            "diff",
            "--no-color",
            "--no-ext-diff",
            "HEAD",
            "--",
            str(target),
            timeout_ms=GIT_TIMEOUT_MS,
        )
        return _patch_text(diff.stdout) if diff.ok else None
    untracked = run_git(
        start,
        "ls-files",
        "--others",
        "--exclude-standard",
        "--",
        str(target),
        timeout_ms=GIT_TIMEOUT_MS,
    )
    if not (untracked.ok and untracked.stdout.strip() and target.is_file()):
        return None  # gone, ignored, or a directory
    added = run_git(
        start,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-index",
        "--",
        "/dev/null",
        str(target),
        timeout_ms=GIT_TIMEOUT_MS,
    )
    # --no-index exits 1 when the files differ, which is the answer here.
    return _patch_text(added.stdout) if added.returncode == 1 else None


def _patch_text(stdout: str) -> str | None:
    """git's diff output from its ``---`` line on (header lines dropped)."""
    lines = stdout.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("--- "):
            return "\n".join(lines[index:])
    binary = [line for line in lines if line.startswith("Binary files ")]
    return binary[0] if binary else None


def with_current_state(data: Mapping[str, Any], root: Path | None) -> Mapping[str, Any]:
    """``data`` of a patchless ``file_change`` with git's current state added as
    ``patch`` (``patch_source`` :data:`PATCH_SOURCE`); ``data`` itself when git
    shows nothing."""
    path = data.get("path")
    patch = current_patch(path, root) if isinstance(path, str) and path else None
    if patch is None:
        return data
    return {**data, "patch": patch, "patch_source": PATCH_SOURCE}
