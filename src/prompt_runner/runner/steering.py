"""The session of an attempt, with the operator's steers (SPEC 5).

A steer reaches an agent one of two ways:

* accepted while the previous session was being verified, it is queued for
  the next session: :func:`queued_steers` hands it over as the attempt begins,
  and the attempt puts it into the session's prompt (or resume message);
* accepted while a session runs, it interrupts that session, and
  :func:`deliver_steers` resumes the same provider session with the steer as
  the next message -- inside the same attempt, touching no retry or repair
  budget.

:func:`run_with_steers` is the attempt loop's step: the session, then every
steer that arrived during it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..planning.prompt_plan import PromptPlan
from ..providers.base import Provider, SessionHandle, SessionRequest, SessionResult
from ..providers.events import Event
from ..render.sinks import SessionFiles
from .attempt_sink import agent_registrar
from .context import RunContext
from .loop_state import Attempt, LoopState
from .repair import steer_message
from .session import SessionOutcome, run_session
from .stopping import check_stop, interrupt_for_stop


def run_with_steers(ctx: RunContext, loop: LoopState, attempt: Attempt) -> SessionOutcome:
    """Run ``attempt``'s session (or resume ``loop.session_id`` for a ``resume``
    attempt), then deliver the steers that interrupted it.

    Returns:
        The last session's outcome, with the file and tool counts and the
        reported cost of the whole steer chain; ``loop.session_id`` is the
        provider session to resume next.
    """
    pp = loop.pp
    tick = session_tick(ctx, pp.id)
    outcome = run_session(
        loop.provider,
        attempt.request,
        attempt.sink,
        resume_session_id=loop.session_id if attempt.resuming else None,
        resume_message=attempt.message if attempt.resuming else "",
        tick=tick,
        on_start=agent_registrar(ctx, pp.id),
    )
    check_stop(ctx, files=attempt.files)  # a stop ended the session: the prompt reads interrupted
    outcome = deliver_steers(
        ctx, pp, loop.provider, attempt.request, attempt.sink, tick, outcome, attempt.files
    )
    check_stop(ctx, files=attempt.files)  # ... or a steer's session
    loop.session_id = outcome.session_id or loop.session_id
    return outcome


def session_tick(ctx: RunContext, prompt_id: str) -> Callable[[SessionHandle], None]:
    """What runs about every 100 ms while the provider is silent: the console's
    pending lines, a due ``state.json`` summary, and the control plane's requests."""

    def tick(handle: SessionHandle) -> None:
        ctx.console.flush()  # the provider is silent: show what it said so far
        ctx.store.flush_summary_due()  # a status change waiting for state.json
        if ctx.control is not None:
            ctx.control.tick(prompt_id, handle)
            interrupt_for_stop(ctx, handle)

    return tick


def deliver_steers(
    ctx: RunContext,
    pp: PromptPlan,
    provider: Provider,
    request: SessionRequest,
    sink: Callable[[Event], None],
    tick: Callable[[SessionHandle], None],
    outcome: SessionOutcome,
    files: SessionFiles | None,
) -> SessionOutcome:
    """Deliver steers the control plane accepted during this session (SPEC 5).

    For each steer: resume the same provider session with the steer as the
    next message, inside the same attempt -- the interrupted result that made
    room for it is not a failure, and no retry/repair budget is touched. The
    returned outcome is the last session's, with file and tool counts and
    the reported cost summed. A reached cost budget drops the steer.
    """
    take = getattr(ctx.control, "take_steer", None)
    if take is None:
        return outcome
    file_events, tool_count = outcome.file_events, outcome.tool_count
    session_id = outcome.session_id
    cost = outcome.result.usage.cost_usd
    while (steer := take(pp.id)) is not None:
        if session_id is None:
            ctx.console.say(f"[{pp.id}] warning: the session has no id to resume; steer dropped")
            break
        refusal = ctx.cost.refusal(pp, pending=cost or 0.0)
        if refusal is not None:
            ctx.console.say(f"[{pp.id}] warning: {refusal.message}; steer dropped")
            break
        ctx.console.say(f"[{pp.id}] Resuming the provider thread with the steer")
        message = steer_message(steer.text)
        if files is not None:
            files.note(f"STEER action=resume provider={pp.provider}")
            files.sent("steer", message)
        sink(Event("steer", {"text": steer.text, "delivery": "interrupt_and_resume"}))
        outcome = run_session(
            provider,
            request,
            sink,
            resume_session_id=session_id,
            resume_message=message,
            tick=tick,
            on_start=agent_registrar(ctx, pp.id),
        )
        session_id = outcome.session_id or session_id
        file_events += outcome.file_events
        tool_count += outcome.tool_count
        more = outcome.result.usage.cost_usd
        cost = more if cost is None else cost + (more or 0.0)
    return SessionOutcome(with_cost(outcome.result, cost), session_id, file_events, tool_count)


def with_cost(result: SessionResult, cost: float | None) -> SessionResult:
    """``result`` reporting ``cost`` (a steer chain's sessions summed)."""
    if cost == result.usage.cost_usd:
        return result
    return replace(result, usage=replace(result.usage, cost_usd=cost))


def start_steer_budget(ctx: RunContext, prompt_id: str) -> None:
    """A new invocation of ``prompt_id`` begins: the control plane gives it a fresh
    steer budget (``recovery.max_steers`` is per invocation, as the retry and
    repair budgets are)."""
    start = getattr(ctx.control, "start_prompt", None)
    if start is not None:
        start(prompt_id)


def queued_steers(ctx: RunContext, prompt_id: str, attempt: int) -> list[Any]:
    """The steers accepted for ``prompt_id``'s next session, about to start as
    ``attempt`` (``control.plane.Steer`` values; recorded as delivered)."""
    take = getattr(ctx.control, "take_queued_steers", None)
    return list(take(prompt_id, attempt=attempt)) if take is not None else []


def announce_steers(
    sink: Callable[[Event], None], files: SessionFiles | None, steers: list[Any]
) -> None:
    """Put each steer delivered in a session's prompt on the event stream and its log."""
    for steer in steers:
        if files is not None:
            files.note(f"STEER action={steer.delivery}")
        sink(Event("steer", {"text": steer.text, "delivery": steer.delivery}))
