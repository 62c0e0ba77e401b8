"""The attempt loop of one prompt, as steps: session -> verifier -> recovery decision.

Modes: ``run`` (first fresh session), ``retry`` (fresh session after a
retryable failure), ``resume`` (the same provider session after a transport
failure), ``repair`` (fresh session with the unmet items attached),
``agent_owned_repeat`` (fresh session of an agent-owned prompt). Each session is
recorded as one attempt; the verifier runs after every session; the decision
comes from :func:`prompt_runner.runner.recovery.decide`. The loop returns a
:class:`PromptOutcome` value; it never raises for provider or verifier results.

One attempt is six steps, each a function of its own module:

=========================  ===========================================  =================
step                       what it does                                 function
=========================  ===========================================  =================
begin the attempt          record it, open its files, snapshot, request ``begin_attempt``
the session, with steers   run (or resume) it; deliver steers           ``run_with_steers``
judge the workspace        verdict, branches, changes, submodules       ``judge_workspace``
decide                     recovery policy, then the cost budgets       ``decide_next``
finish the attempt         record the outcome, close its files          ``finish_attempt``
the next prompt text       mode, text and budget of the next session    ``prepare_next``
=========================  ===========================================  =================

Cost budgets (:mod:`prompt_runner.runner.budget`): each session's reported
cost is counted; before the first session, and instead of any further one
(retry, resume, repair, repeat, wait, failover, steer), a reached budget fails
the prompt as ``guardrail_blocked``. A session that passes its contract still
completes.

Usage windows (:mod:`prompt_runner.runner.usage_wait`): before each session
:func:`wait_if_due` waits for a known exhausted window of the provider that
resets within ``max_wait`` (what a runner killed mid-wait left), or paces
(``pace_above``). A sticky failover earlier in the run makes the prompt start on
that failover target (:func:`~prompt_runner.runner.handoff.stick`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from ..planning.prompt_plan import PromptPlan
from ..state.records import PromptStatus
from .attempt_record import begin_attempt, finish_attempt
from .baseline import verify_context
from .context import RunContext
from .deciding import budget_fields, budget_refused, decide_next
from .handoff import stick
from .judging import judge_workspace
from .loop_state import ENDS, Attempt, Decided, LoopState, PromptOutcome, Verdict
from .next_session import prepare_next
from .request import target_repos
from .steering import run_with_steers
from .usage_wait import gate, wait_for

__all__ = ["MAX_LOOP", "PromptOutcome", "open_loop", "run_prompt"]

MAX_LOOP = 1000  # a hard backstop; budgets end the loop long before this


def run_prompt(
    ctx: RunContext,
    pp: PromptPlan,
    *,
    initial_text: str | None = None,
    initial_mode: str = "run",
    extra_env: dict[str, str] | None = None,
    session_offset: int = 0,
    body: str | None = None,
    before_session: Callable[[str], None] | None = None,
    controlled: bool = False,
) -> PromptOutcome:
    """Run ``pp``'s attempt loop until the policy completes, fails or halts it.

    Args:
        ctx: the run context.
        pp: the resolved prompt.
        initial_text: the first session's prompt text (default: the body).
        initial_mode: the first attempt's mode (``run`` or ``repair``).
        extra_env: extra provider environment (agent control variables).
        session_offset: fresh sessions already used by this prompt in this
            run (agent-control iterations), so simulate steps keep their order.
        body: the text retries and repairs build on (default: the prompt body;
            agent control passes the body with its command block).
        before_session: called with the mode before every session (agent
            control discards a directive written before a failed verify).
        controlled: an agent-controlled iteration: a failed provider turn is
            never completed by a passing contract (no ``verifier_override``).
    """
    base = body if body is not None else pp.prompt.body
    loop = open_loop(
        ctx,
        pp,
        base=base,
        text=initial_text if initial_text is not None else base,
        mode=initial_mode,
        env=dict(extra_env or {}),
        session_offset=session_offset,
        before_session=before_session,
        controlled=controlled,
    )
    if (refusal := ctx.cost.refusal(pp)) is not None:
        return budget_refused(ctx, pp, refusal, ran=session_offset > 0)
    for number in range(1, MAX_LOOP + 1):
        wait_if_due(ctx, loop)
        attempt = begin_attempt(ctx, loop, number)
        session = run_with_steers(ctx, loop, attempt)
        verdict = judge_workspace(ctx, loop, attempt, session)
        decided = decide_next(ctx, loop, session, verdict)
        finish_attempt(ctx, loop, attempt, session, verdict, decided)
        if decided.decision.action in ENDS:
            return prompt_outcome(ctx, loop, attempt, verdict, decided)
        prepare_next(ctx, loop, decided.decision, verdict)
    return PromptOutcome("fail", PromptStatus.FAILED, "the attempt loop hit its hard backstop")


def open_loop(
    ctx: RunContext,
    pp: PromptPlan,
    *,
    base: str,
    text: str,
    mode: str,
    env: dict[str, str],
    session_offset: int = 0,
    before_session: Callable[[str], None] | None = None,
    controlled: bool = False,
) -> LoopState:
    """The state ``pp``'s attempt loop starts from.

    An agent-owned packet's contracts are checked structurally only (no
    ``commands``). Work an interrupted earlier run of this prompt left
    uncommitted (adopted at run start) counts as touched already.
    """
    agent_owned = ctx.plan.execution.completion == "agent_owned"
    start, failovers = stick(ctx, pp)
    vctx = verify_context(ctx, pp)
    if agent_owned:
        vctx = replace(vctx, structural_only=True, on_process_start=None)
    adopted = ctx.adopted.get(pp.id, {})
    return LoopState(
        pp=start,
        provider=ctx.provider(start.provider),
        vctx=vctx,
        repos=target_repos(ctx, pp),
        agent_owned=agent_owned,
        controlled=controlled,
        base=base,
        text=text,
        mode=mode,
        env=env,
        session_offset=session_offset,
        session_number=session_offset,
        touched={repo: set(paths) for repo, paths in adopted.items()},
        before_session=before_session,
        origin=pp,
        failovers=failovers,
    )


def wait_if_due(ctx: RunContext, loop: LoopState) -> None:
    """Wait, before the next session, for a usage window of its provider that is
    known exhausted or (``pace_above``) nearly spent, when it resets within
    ``max_wait`` (``usage_wait.gate``); nothing otherwise.

    Raises:
        RunStopped: a ``stop`` request arrived during the wait.
    """
    pp = loop.pp
    wait = gate(ctx, pp.id, pp.provider, pp.recovery.usage_limit, datetime.now(UTC))
    if wait is not None:
        wait_for(ctx, wait)


def prompt_outcome(
    ctx: RunContext, loop: LoopState, attempt: Attempt, verdict: Verdict, decided: Decided
) -> PromptOutcome:
    """How the loop ended, after ``attempt``: what the completion step records and commits."""
    decision = decided.decision
    refusal = decided.refusal
    return PromptOutcome(
        action=decision.action,
        status=decision.status or PromptStatus.COMPLETED,
        reason=decision.reason,
        source=decision.source,
        report=verdict.report,
        last_error=loop.last_failure_message,
        attempts=attempt.number,
        sessions=loop.session_number - loop.session_offset,
        touched=loop.touched,
        workspace_after=verdict.after,
        workspace_before=attempt.before,
        attempt_key=attempt.key,
        extra=budget_fields(ctx, loop.pp, refusal) if refusal is not None else {},
    )
