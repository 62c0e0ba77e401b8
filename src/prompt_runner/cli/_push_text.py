"""The human lines of a run's push outcome, shared by ``status`` and
``status --workspace``."""

from __future__ import annotations

from typing import Any


def push_lines(push: Any) -> list[str]:
    """``Push: ok (after 03)``, or ``Push: FAILED for app`` and each failed repo's
    error (``push: after_prompt``; ``runner/push.py``); nothing before any push."""
    if not isinstance(push, dict):
        return []
    repos = push.get("repos")
    if not isinstance(repos, dict):
        repos = {}
    failed = [name for name in push.get("failed") or [] if name in repos]
    if not failed:
        return [f"Push: ok (after {push.get('prompt_id')})"]
    lines = [f"Push: FAILED for {', '.join(failed)} (the commits are local)"]
    lines += [f"      {name}: {repos[name].get('error')}" for name in failed]
    return lines
