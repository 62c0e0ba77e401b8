"""``simulate:`` -- the script the simulated provider plays instead of an agent:
per session, the messages it prints, the files it writes, the failure it ends
with, and what it says through agent control (our extension)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from ..providers.failure import override_problem
from .model_types import Model, SimulatedErrorKind


def _no_escape(value: str) -> str:
    if value.startswith("/") or re.search(r"(^|/)\.\.(/|$)", value):
        raise ValueError(
            f"path {value!r} escapes its repo; use a path relative to the repo without '..'"
        )
    if not value.strip():
        raise ValueError("path must not be empty")
    return value


class SimulateWrite(Model):
    """One file the simulated agent writes (relative to the repo, default: cwd)."""

    path: str
    text: str = ""
    append: bool = False
    repo: str | None = None

    @field_validator("path")
    @classmethod
    def _contained(cls, value: str) -> str:
        return _no_escape(value)


class SimulateError(Model):
    """The failure a simulated step ends with."""

    kind: SimulatedErrorKind
    message: str = "simulated failure"
    recovery: dict[str, Any] | None = None

    @field_validator("recovery")
    @classmethod
    def _known_overrides(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """Each entry one the envelope applies (``providers.failure.override_problem``):
        an unknown key or a wrong value would otherwise be dropped without a word."""
        for key, entry in (value or {}).items():
            problem = override_problem(key, entry)
            if problem is not None:
                raise ValueError(problem)
        return value


class SimulateProgress(Model):
    cursor: str
    unit: str | None = None
    summary: str


class SimulateAgentControl(Model):
    """A directive and/or progress the simulated agent issues (our extension)."""

    directive: Literal["continue", "repeat", "finish", "blocked"] | None = None
    reason: str | None = None
    progress: SimulateProgress | None = None


MAX_SIMULATED_DELAY_MS = 86_400_000
"""The longest silence a simulated step may script (24 h, in milliseconds)."""


class SimulateStep(Model):
    """One simulated session (or resume) script.

    ``cost_usd`` is the cost the session reports (default 0), so cost budgets
    can be exercised without a paid provider. ``delay_ms`` is at most
    :data:`MAX_SIMULATED_DELAY_MS` (a day): a longer wait overflows the
    platform's timer and would end the session as a crash.
    """

    messages: list[str] = Field(default_factory=list)
    writes: list[SimulateWrite] = Field(default_factory=list)
    error: SimulateError | None = None
    delay_ms: int = Field(0, ge=0, le=MAX_SIMULATED_DELAY_MS, strict=True)
    agent_control: SimulateAgentControl | None = None
    cost_usd: float | None = Field(None, ge=0, allow_inf_nan=False, strict=True)

    @field_validator("messages", mode="before")
    @classmethod
    def _messages(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class SimulateScript(Model):
    """``simulate:``: ``attempts`` drive fresh sessions in order, ``resume`` drives resumes."""

    attempts: list[SimulateStep] = Field(default_factory=list)
    resume: SimulateStep | None = None
