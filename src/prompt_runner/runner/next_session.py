"""Prepare the next session of a prompt: its mode, its prompt text, the budget it spends.

=========  ==========================  ===============================================
decision   next mode                   prompt text
=========  ==========================  ===============================================
resume     ``resume``                  unchanged (the resume message says what happened)
retry      ``retry``                   the base text, after the backoff delay
repair     ``repair``                  the base text plus the unmet items (``repair.py``)
repeat     ``agent_owned_repeat``      the base text plus the failed structural checks
=========  ==========================  ===============================================
"""

from __future__ import annotations

from .context import RunContext
from .loop_state import NEXT_MODES, LoopState, Verdict
from .recovery import Decision
from .repair import agent_owned_prompt, repair_prompt


def prepare_next(ctx: RunContext, loop: LoopState, decision: Decision, verdict: Verdict) -> None:
    """Set ``loop`` up for the session ``decision`` starts and count its budget.

    A retry waits ``decision.delay_ms`` first (``ctx.sleep``; the store's
    pending summary is written before, since nothing else writes during the wait).

    Raises:
        KeyError: ``decision`` starts no session (``complete``, ``fail``, ``halt``).
    """
    budgets, action = loop.budgets, decision.action
    loop.mode = NEXT_MODES[action]
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


def wait_before_retry(ctx: RunContext, prompt_id: str, delay_ms: int) -> None:
    """Sleep ``delay_ms`` (ms) before a retry, saying so; nothing for 0."""
    if not delay_ms:
        return
    ctx.console.say(f"[{prompt_id}] waiting {delay_ms} ms before retrying")
    ctx.store.flush_summary()  # nothing waits for state.json through the sleep
    ctx.sleep(delay_ms / 1000.0)
