"""Moved to :mod:`prompt_runner.planning.agent_owned` (plan-time validation);
these names stay importable here until their last callers import them from there."""

from __future__ import annotations

from ..planning.agent_owned import agent_owned_findings, validate_agent_owned

__all__ = ["agent_owned_findings", "validate_agent_owned"]
