"""The provider request of one session of a prompt, and the repos it targets.

:func:`prompt_runner.planning.launch.request_for` builds the request from the
plan alone (plan-time checks use it too); here it gets what is left of the cost
budget.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..planning.budget import PROMPT_KEY
from ..planning.launch import request_for
from ..planning.prompt_plan import PromptPlan
from ..providers.base import SessionRequest
from .context import RunContext


def target_repos(ctx: RunContext, pp: PromptPlan) -> dict[str, Path]:
    """The prompt's target repos that the packet declares: name -> directory."""
    repos = ctx.plan.packet.repos
    return {name: repos[name] for name in pp.prompt.targets if name in repos}


def build_request(
    ctx: RunContext, pp: PromptPlan, text: str, session_number: int, env: dict[str, str]
) -> SessionRequest:
    """The provider request of one session of ``pp``.

    A CLI that enforces ``max_cost_usd`` itself (Claude's ``--max-budget-usd``)
    gets what is left of the prompt's (and the run's) budget, not the whole.

    Args:
        text: the session's prompt text.
        session_number: the prompt's fresh-session count in this run, 1-based.
        env: extra provider environment (agent control's variables).
    """
    request = request_for(ctx.plan.packet, pp, text, session_number, env)
    cap = ctx.cost.session_cap(pp)
    if cap is not None:
        options = {**request.provider_options, PROMPT_KEY: cap}
        request = replace(request, provider_options=options)
    return request
