"""What a run (or a repair) ends with: :class:`RunResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunResult:
    """The outcome of a run (:func:`prompt_runner.run`, :func:`prompt_runner.repair`).

    Attributes:
        run_id: the run generation id (``None``: nothing ran, e.g. a dry run).
        status: a :class:`~prompt_runner.state.records.RunStatus` word --
            ``completed``, ``failed``, ``halted``, ``interrupted``, ``nothing``
            or ``dry_run``.
        exit_code: ``exit_code_for(status)``: 0 success, 1 a prompt failed,
            3 halted (a verifier fault, a failed commit), 128+signal interrupted.
        prompts: prompt id -> final status for each selected prompt handled.
        failures: ids that failed (including blocked ones).
        message: one closing line.
    """

    run_id: str | None
    status: str
    exit_code: int
    prompts: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"run_id", "status", "exit_code", "prompts", "failures", "message"}``
        (what ``run --json`` prints)."""
        return {
            "run_id": self.run_id,
            "status": self.status,
            "exit_code": self.exit_code,
            "prompts": dict(self.prompts),
            "failures": list(self.failures),
            "message": self.message,
        }
