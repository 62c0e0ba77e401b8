"""A controlled prompt's records: its ``agent_control`` state and how it ended (SPEC 7).

:class:`ControlRecord` is the prompt's ``agent_control`` record in
``state.json`` (iteration, the last directive, history, the agent's progress,
rejections, the live invocation), kept up to date while the prompt runs.
:class:`Recorder` writes it, journals each rejection, and records the prompt's
terminal outcomes: ``completed``, a failure status with its reason, or
``iteration_limit``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..agent.invocation import Invocation, progress_view
from ..committer import CommitResult
from ..planning import PromptPlan
from ..state._clock import iso_now
from ..state.records import PromptStatus
from .context import RunContext
from .loop_state import PromptOutcome
from .push import push_after_prompt
from .request import target_repos

FINISHED = PromptStatus.AGENT_CONTROL_FINISHED
"""Status :func:`prompt_runner.runner.agent_control.run_controlled` returns when
``finish`` closed the sequence (the prompt's record says ``completed``)."""
BLOCKED = PromptStatus.AGENT_CONTROL_BLOCKED
ITERATION_LIMIT = PromptStatus.ITERATION_LIMIT
FINISH_REJECTED = PromptStatus.AGENT_CONTROL_FINISH_REJECTED
ITERATION_COMPLETED = PromptStatus.ITERATION_COMPLETED
MAX_REJECTIONS = 20
"""Rejections kept in the record (the newest; the journal has every one)."""


@dataclass
class ControlRecord:
    """The prompt's ``agent_control`` state record, kept up to date as it runs."""

    max_iterations: int
    default_action: str
    iteration: int = 0
    verified: int = 0
    action: str | None = None
    source: str | None = None
    reason: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    progress: dict[str, Any] | None = None
    rejections: list[dict[str, Any]] = field(default_factory=list)
    live: dict[str, Any] | None = None

    def looping(self) -> bool:
        """True when the prompt actually uses loop semantics (status shows the iteration)."""
        return (
            self.iteration > 1
            or self.default_action == "repeat"
            or any(h["action"] != "continue" for h in self.history)
        )

    def to_dict(self, run_id: str, prompt_id: str) -> dict[str, Any]:
        """The saved ``agent_control`` record (``progress`` labelled ``stale``
        unless it is this iteration's; the newest :data:`MAX_REJECTIONS` rejections)."""
        return {
            "enabled": True,
            "action": self.action,
            "source": self.source,
            "reason": self.reason,
            "iteration": self.iteration,
            "max_iterations": self.max_iterations,
            "verified_iterations": self.verified,
            "default_action": self.default_action,
            "looping": self.looping(),
            "history": list(self.history),
            "progress": progress_view(self.progress, run_id, prompt_id, self.iteration),
            "rejections": self.rejections[-MAX_REJECTIONS:],
            "live": self.live,
        }


class Recorder:
    """Writes one controlled prompt's records (state, progress, journal, console)."""

    def __init__(self, ctx: RunContext, pp: PromptPlan, journal: Any) -> None:
        self.ctx = ctx
        self.pp = pp
        self.journal = journal
        cfg = ctx.plan.agent_control
        self.max_iterations = cfg.max_iterations
        self.record = ControlRecord(cfg.max_iterations, cfg.default_action)

    def save(self, fields: dict[str, Any] | None = None) -> None:
        """Write the ``agent_control`` record (and ``fields``) to the prompt's record."""
        doc = {"agent_control": self.record.to_dict(self.ctx.run_id, self.pp.id)}
        self.ctx.store.update_prompt(self.pp.id, {**doc, **(fields or {})})

    def reject(self, inv: Invocation, what: str, problem: str) -> None:
        """Record a rejected request or progress record (or an agent-side refusal)."""
        entry = {"at": iso_now(), "iteration": inv.iteration, "what": what, "reason": problem}
        self.record.rejections.append(entry)
        self.ctx.console.say(f"[{self.pp.id}] agent control rejected {what}: {problem}")
        self.journal.append("agent_control_rejected", {"prompt_id": self.pp.id, **entry})

    def fields(self, outcome: PromptOutcome) -> dict[str, Any]:
        """The prompt-record fields every terminal record of ``outcome`` carries."""
        return {
            "last_verifier": outcome.report.to_dict() if outcome.report else None,
            "last_error": outcome.last_error,
            "session_ran": True,
            "completed_at": iso_now(),
            **self.ctx.cost.record_fields(self.pp.id),
            "agent_control": self.record.to_dict(self.ctx.run_id, self.pp.id),
        }

    def complete(
        self, outcome: PromptOutcome, commit: CommitResult, extra: dict[str, Any] | None = None
    ) -> str:
        """Record the prompt ``completed`` with its commits; returns ``completed``."""
        ctx, prompt = self.ctx, self.pp.prompt
        fields = self.fields(outcome)
        fields.update(
            {
                "status": PromptStatus.COMPLETED,
                "source": outcome.source,
                "commit_info": {"commits": dict(commit.commits), "skipped": commit.skipped},
                **(extra or {}),
            }
        )
        ctx.store.update_prompt(prompt.id, fields)
        ctx.store.append_progress(prompt.id, PromptStatus.COMPLETED, commit.progress_suffix())
        ctx.store.flush()  # the record is durable before it is acknowledged
        ctx.console.say(
            f"✓ {prompt.id} completed ({outcome.source}; agent control "
            f"{self.record.action}/{self.record.source}; {commit.progress_suffix()})"
        )
        self.journal.append("prompt_completed", {"prompt_id": prompt.id, "source": outcome.source})
        push_after_prompt(ctx, prompt.id, target_repos(ctx, self.pp))  # the push option's
        ctx.notify_record("on_prompt_completed", prompt.id)
        return PromptStatus.COMPLETED

    def fail(
        self, outcome: PromptOutcome, status: str, reason: str, commit: CommitResult | None
    ) -> str:
        """Record the prompt failed as ``status`` (a failed commit's error too); returns it."""
        ctx, prompt = self.ctx, self.pp.prompt
        fields = self.fields(outcome)
        fields.update({"status": status, "reason": reason})
        if commit is not None and not commit.ok:
            fields["commit_error"] = commit.error
        ctx.store.update_prompt(prompt.id, fields)
        ctx.store.append_progress(prompt.id, PromptStatus.FAILED)
        ctx.store.flush()  # the record is durable before it is acknowledged
        ctx.console.say(f"✗ {prompt.id} {status}: {reason}")
        self.journal.append(
            "prompt_failed", {"prompt_id": prompt.id, "status": status, "reason": reason}
        )
        ctx.notify_record("on_prompt_failed", prompt.id)
        return status

    def iteration_limit(self) -> str:
        """Record ``iteration_limit`` (resumable: ``progress.log`` says ``failed``)."""
        ctx, prompt = self.ctx, self.pp.prompt
        reason = (
            f"agent_control_iteration_limit: prompt {prompt.id} reached max_iterations "
            f"{self.max_iterations} without continue or an accepted finish; "
            "the prompt stays resumable (--remaining)"
        )
        ctx.store.update_prompt(
            prompt.id,
            {
                "status": ITERATION_LIMIT,
                "reason": reason,
                "completed_at": iso_now(),
                "agent_control": self.record.to_dict(ctx.run_id, prompt.id),
            },
        )
        ctx.store.append_progress(prompt.id, PromptStatus.FAILED)
        ctx.store.flush()  # the record is durable before it is acknowledged
        ctx.console.say(f"✗ {prompt.id} {ITERATION_LIMIT}: {reason}")
        self.journal.append("prompt_failed", {"prompt_id": prompt.id, "status": ITERATION_LIMIT})
        ctx.notify_record("on_prompt_failed", prompt.id)
        return ITERATION_LIMIT
