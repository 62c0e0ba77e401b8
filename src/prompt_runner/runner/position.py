"""Where a run's attempt loop is, shared live with its control plane."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Position:
    """Where the attempt loop is, kept live: the control plane holds the same
    object and reads it for its snapshot and its steering decisions.

    Attributes:
        prompt_id: the prompt being executed (``None`` before the first attempt).
        attempt: that prompt's attempt number, 1-based.
        mode: the attempt's mode (``run``, ``retry``, ``resume``, ``repair``, ...).
        attempt_key: the store's key of the attempt while its session runs
            (``None`` once it was judged: nothing is left to mark interrupted).
    """

    prompt_id: str | None = None
    attempt: int | None = None
    mode: str | None = None
    attempt_key: int | None = None

    def enter(self, prompt_id: str, attempt: int, mode: str, attempt_key: int) -> None:
        """An attempt of ``prompt_id`` has started (its record is ``attempt_key``)."""
        self.prompt_id, self.attempt, self.mode = prompt_id, attempt, mode
        self.attempt_key = attempt_key
