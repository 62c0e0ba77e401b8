"""Prepare the next session of a prompt: its mode, its prompt text, the budget it spends.

=========  ==========================  ===============================================
decision   next mode                   prompt text
=========  ==========================  ===============================================
resume     ``resume``                  unchanged (the resume message says what happened)
retry      ``retry``                   the base text, after the backoff delay
repair     ``repair``                  the base text plus the unmet items (``repair.py``)
repeat     ``agent_owned_repeat``      the base text plus the failed structural checks
wait       ``resume`` (``retry`` when  after the usage window's reset: the same session
           the session has no id)      told the limit has reset, else the base text;
                                       no budget is spent
failover   ``failover``                the base text plus a handoff block
                                       (``handoff.py``) on the next provider, in a
                                       fresh session with fresh retry budgets
=========  ==========================  ===============================================
"""

from __future__ import annotations

from collections import Counter

from ..state._clock import iso_now
from .context import RunContext
from .handoff import handoff_prompt
from .loop_state import NEXT_MODES, LoopState, Verdict
from .recovery import Decision
from .repair import agent_owned_prompt, repair_prompt
from .stopping import check_stop
from .usage_wait import WAKE_POLL_S, Wait, wait_for

USAGE_RESUME_MESSAGE = (
    "The provider's usage limit stopped this session; the limit has reset now. Continue "
    "the task exactly where you left off; the task is unchanged."
)


def prepare_next(ctx: RunContext, loop: LoopState, decision: Decision, verdict: Verdict) -> None:
    """Set ``loop`` up for the session ``decision`` starts and count its budget.

    A retry waits ``decision.delay_ms`` first (``ctx.sleep``; the store's
    pending summary is written before, since nothing else writes during the
    wait); a usage ``wait`` waits for the window's reset (``usage_wait.wait_for``).

    Raises:
        KeyError: ``decision`` starts no session (``complete``, ``fail``, ``halt``).
        RunStopped: a ``stop`` request arrived during a usage wait.
    """
    budgets, action = loop.budgets, decision.action
    loop.mode = NEXT_MODES[action]
    loop.resume_text = None
    if action == "resume":
        budgets.resumes_in_chain += 1
    elif action == "retry":
        assert verdict.failure is not None
        budgets.retries[verdict.failure.failure_class] += 1
        wait_before_retry(ctx, loop.pp.id, decision.delay_ms)
        loop.text = loop.base
    elif action == "repair":
        budgets.repairs += 1
        failures = [item.to_dict() for item in verdict.report.failures()]
        loop.text = repair_prompt(
            loop.base, last_error=loop.last_failure_message, failures=failures
        )
    elif action == "repeat":
        budgets.repeats += 1
        failures = [item.to_dict() for item in verdict.report.failures()]
        loop.text = agent_owned_prompt(loop.base, loop.session_number + 1, failures)
    elif action == "wait":
        wait_for_reset(ctx, loop, decision)
    elif action == "failover":
        fail_over(ctx, loop, decision, verdict)


def wait_for_reset(ctx: RunContext, loop: LoopState, decision: Decision) -> None:
    """Wait for the exhausted window, then resume the session (a fresh one when
    the provider gave it no id); no retry, resume or repair budget is spent."""
    assert decision.window is not None and decision.wait_until is not None
    loop.budgets.usage_waits += 1
    window = decision.window
    reason = f"{window.label()} is exhausted; it {window.reset_text()}"
    wait = Wait("usage_limit", loop.pp.id, window, decision.wait_until, reason)
    wait_for(ctx, wait)
    if loop.session_id and loop.pp.provider != "simulated":
        loop.mode = "resume"
        loop.resume_text = USAGE_RESUME_MESSAGE
    else:
        loop.mode = "retry"
        loop.text = loop.base


def fail_over(ctx: RunContext, loop: LoopState, decision: Decision, verdict: Verdict) -> None:
    """Continue the prompt on the next failover target: a fresh session whose prompt
    carries the handoff block, fresh retry and resume budgets; recorded on the
    prompt (``failovers``, ``providers``)."""
    target = loop.next_failover
    assert target is not None
    source = loop.pp
    loop.origin = loop.origin or source
    loop.failovers += 1
    failures = [item.to_dict() for item in verdict.report.failures()]
    loop.text = handoff_prompt(
        loop.base,
        source=source,
        target=target,
        reason=decision.reason,
        touched=loop.touched,
        failures=failures,
        last_error=loop.last_failure_message,
    )
    loop.pp = target
    loop.provider = ctx.provider(target.provider)
    loop.session_id = None
    loop.budgets.retries = Counter()
    loop.budgets.resumes_in_chain = 0
    ctx.store.update_prompt(
        source.id,
        {
            "failover": {
                "from": {"provider": source.provider, "model": source.model},
                "to": {"provider": target.provider, "model": target.model},
                "reason": decision.reason,
                "at": iso_now(millis=True),
            },
            "providers": providers_of(loop),
        },
    )
    if loop.origin.recovery.failover_sticky:
        ctx.sticky_failover[loop.origin.provider] = loop.failovers
    ctx.console.say(f"[{source.id}] failing over from {source.provider} to {target.provider}")


def providers_of(loop: LoopState) -> list[str]:
    """The providers the prompt ran on so far, in order (its own first)."""
    origin = loop.origin or loop.pp
    return [origin.provider, *(t.provider for t in origin.failover[: loop.failovers])]


def wait_before_retry(ctx: RunContext, prompt_id: str, delay_ms: int) -> None:
    """Sleep ``delay_ms`` (ms) before a retry, saying so; nothing for 0.

    With a control plane the sleep is taken in steps of at most
    :data:`~.usage_wait.WAKE_POLL_S`, each after a look at the plane, as a
    usage wait does: a request that arrives during the backoff (``stop``, a
    ``view``, a steer) is decided then, not when the retry's session starts,
    and a ``stop`` ends the run (:class:`~.stopping.RunStopped`). Without one,
    one ``ctx.sleep(delay_ms / 1000)``.

    Raises:
        RunStopped: a stop request arrived before or during the backoff.
    """
    if not delay_ms:
        return
    ctx.console.say(f"[{prompt_id}] waiting {delay_ms} ms before retrying")
    ctx.store.flush_summary()  # nothing waits for state.json through the sleep
    poll = getattr(ctx.control, "poll_wake", None)
    total = delay_ms / 1000.0
    if poll is None:
        ctx.sleep(total)
        return
    slept = 0.0
    while slept < total:
        poll(prompt_id)  # decides what arrived; a wake has no wait to end here
        check_stop(ctx)
        step = min(WAKE_POLL_S, total - slept)
        ctx.sleep(step)
        slept += step
    poll(prompt_id)
    check_stop(ctx)
