"""Failover: the handoff block a prompt carries to the next provider, and stickiness.

When a prompt's provider is exhausted (a usage window beyond ``max_wait``, or its
capacity / rate-limit retries spent) and ``recovery.failover`` names another,
the prompt continues there in a fresh session. That session knows nothing of
the earlier ones, so its prompt is the body plus a ``## Handoff`` block: which
provider stopped and why, what the earlier attempts changed (the files they
touched, left in the work tree), the contract items still unmet and the last
error. The contract decides completion as always.

The next prompts go back to their own provider, unless ``failover_sticky: true``:
then ``ctx.sticky_failover`` remembers, per original provider, how far down its failover
list the run went, and later prompts on that provider start there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..planning.prompt_plan import PromptPlan
from .context import RunContext
from .repair import cap_lines, render_failures

MAX_PATHS = 50
"""Touched paths listed per repo in a handoff block (the rest are counted)."""


def handoff_prompt(
    body: str,
    *,
    source: PromptPlan,
    target: PromptPlan,
    reason: str,
    touched: Mapping[str, set[str]],
    failures: Sequence[Mapping[str, Any]],
    last_error: str | None,
) -> str:
    """``body`` plus the ``## Handoff`` block for the session on ``target``.

    Args:
        source: the plan of the provider that stopped.
        target: the plan of the provider taking over.
        reason: why (the failover decision's reason).
        touched: per target repo, the paths earlier sessions changed.
        failures: the unmet verifier items (dicts, as repair prompts take them).
        last_error: the last provider error message.
    """
    parts = [
        body.rstrip(),
        "",
        "## Handoff",
        "",
        f"This prompt was started on {_name(source)}, which cannot go on: {reason}. "
        f"You are continuing it on {_name(target)}. Earlier sessions may have done part of "
        "the work; build on what is there and finish the task. The runner checks the "
        "completion contract when you finish.",
        "",
        "What earlier attempts changed (left in the work tree):",
        *_changes(touched),
        "",
        "Unmet contract items:",
        render_failures(failures),
        "",
    ]
    if last_error:
        parts += ["Last error:", *cap_lines(last_error), ""]
    return "\n".join(parts)


def _name(plan: PromptPlan) -> str:
    return f"{plan.provider} (model {plan.model})" if plan.model else plan.provider


def _changes(touched: Mapping[str, set[str]]) -> list[str]:
    lines: list[str] = []
    for repo in sorted(touched):
        paths = sorted(touched[repo])
        if not paths:
            continue
        shown = paths[:MAX_PATHS]
        lines.append(f"- {repo}: " + ", ".join(shown))
        if len(paths) > MAX_PATHS:
            lines.append(f"  [{len(paths) - MAX_PATHS} more paths]")
    return lines or ["- nothing yet"]


def stick(ctx: RunContext, pp: PromptPlan) -> tuple[PromptPlan, int]:
    """``(the plan a prompt starts on, failover targets already used)``: its own,
    unless a sticky failover of its provider happened earlier in the run."""
    used = ctx.sticky_failover.get(pp.provider, 0) if pp.recovery.failover_sticky else 0
    used = min(used, len(pp.failover))
    return (pp.failover[used - 1] if used else pp), used
