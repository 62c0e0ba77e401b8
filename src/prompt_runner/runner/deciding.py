"""Decide what follows an attempt: the recovery policy, then the cost budgets.

:func:`decide_next` is the attempt loop's step: the usage windows the session
reported are recorded (``usage_wait.observe``: pacing reads them), then
:func:`recovery.decide` on the judged workspace -- told which failover target
is left -- the session's reported cost counted, and a reached cost budget
turning any decision that would start another session (retry, resume, repair,
repeat, wait, failover) into a terminal ``fail``. A session that passes its
contract still completes whatever it cost.
"""

from __future__ import annotations

from typing import Any

from ..planning.budget import RUN_KEY
from ..planning.prompt_plan import PromptPlan
from ..providers.failure import FailureEnvelope
from ..state.records import AttemptStatus, PromptStatus
from ..verifier import VerifierReport
from .context import RunContext
from .loop_state import CONTINUING, Decided, LoopState, PromptOutcome, Verdict
from .recovery import Decision, decide
from .session import SessionOutcome
from .usage_wait import observe


def decide_next(
    ctx: RunContext, loop: LoopState, session: SessionOutcome, verdict: Verdict
) -> Decided:
    """What follows the attempt whose session and verdict are given.

    An agent-controlled iteration whose provider failed is never completed by
    a passing contract. Keeps the failure's message for the next repair or
    resume (``loop.last_failure_message``).
    """
    pp, failure, report = loop.pp, verdict.failure, verdict.report
    seen = session.result.windows
    if failure is not None and failure.usage_window is not None:
        seen = (*seen, failure.usage_window)
    observe(ctx, seen)
    target = loop.next_failover
    decision = decide(
        config=pp.recovery,
        failure=failure,
        verifier_passed=report.passed and not (loop.controlled and failure is not None),
        verifier_fault=report.fault is not None,
        workspace_changed=bool(verdict.changed),
        budgets=loop.budgets,
        agent_owned=loop.agent_owned,
        max_repeats=ctx.plan.agent_control.max_iterations,
        rand=ctx.rand,
        failover=failover_name(target) if target is not None else None,
    )
    warning = ctx.cost.add(pp, session.result.usage.cost_usd)
    if warning is not None:
        ctx.console.say(f"[{pp.id}] {warning}")
    refusal = ctx.cost.refusal(pp) if decision.action in CONTINUING else None
    if refusal is not None:
        decision = Decision("fail", terminal_reason(refusal), status=PromptStatus.FAILED)
    if failure is not None:
        loop.last_failure_message = failure.message
    return Decided(decision, attempt_status(decision, failure is not None, report), refusal)


def failover_name(target: PromptPlan) -> str:
    """``codex (model gpt-5.5)``: how decisions name a failover target."""
    return f"{target.provider} (model {target.model})" if target.model else target.provider


def attempt_status(
    decision: Decision, failed_provider: bool, report: VerifierReport
) -> AttemptStatus:
    """The attempt's recorded status, from the decision and what failed."""
    if decision.action == "complete":
        return AttemptStatus.COMPLETED
    if report.fault is not None:
        return AttemptStatus.VERIFIER_FAULT
    if failed_provider:
        return AttemptStatus.FAILED
    if decision.action == "repeat" or decision.status == PromptStatus.AGENT_OWNED_INCOMPLETE:
        return AttemptStatus.INCOMPLETE
    return AttemptStatus.VERIFICATION_FAILED


def terminal_reason(refusal: FailureEnvelope) -> str:
    """A budget refusal's reason, worded like every terminal failure's."""
    return f"{refusal.failure_class} is terminal: {refusal.message}; no further session starts"


def budget_fields(ctx: RunContext, pp: PromptPlan, refusal: FailureEnvelope) -> dict[str, Any]:
    """The prompt-record fields of a cost-budget failure; a run budget also stops the run."""
    if refusal.provider_code == RUN_KEY:
        ctx.cost.run_stop = refusal
    return ctx.cost.record_fields(pp.id, refusal)


def budget_refused(
    ctx: RunContext, pp: PromptPlan, refusal: FailureEnvelope, *, ran: bool
) -> PromptOutcome:
    """The prompt fails before its next fresh session: a cost budget is reached.

    Args:
        ran: earlier sessions of this execution ran (agent-control iterations).
    """
    extra = budget_fields(ctx, pp, refusal)
    if not ran:
        extra["session_ran"] = False
    return PromptOutcome("fail", PromptStatus.FAILED, terminal_reason(refusal), extra=extra)
