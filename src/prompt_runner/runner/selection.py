"""Moved to :mod:`prompt_runner.planning.selection` (selection is part of the plan);
these names stay importable here until their last callers import them from there."""

from __future__ import annotations

from ..planning.selection import normalize_id, select_prompts

__all__ = ["normalize_id", "select_prompts"]
