"""Cost budgets: the runner's ledger of reported cost, per prompt and per run.

Two opt-in budgets, in US dollars, enforced from the cost each session
*reports* (``SessionResult.usage.cost_usd``):

* ``max_cost_usd`` (a provider option: ``adapter_opts``, ``sdk_opts`` or
  ``<provider>_opts``) -- what one prompt may spend in one invocation, across
  all its sessions (run, retries, resumes, repairs, agent-control
  iterations, steers). Claude Code also gets it as ``--max-budget-usd``:
  each session gets what is left of it.
* ``max_run_cost_usd`` (manifest, ``--max-run-cost-usd``, API option) --
  what the whole run may spend; a resumed run counts the cost its attempts
  already recorded.

Before every session the ledger is asked whether a budget is reached
(spent >= budget). A reached budget refuses the session: the prompt fails with
the terminal class ``guardrail_blocked`` and provider code ``max_cost_usd`` or
``max_run_cost_usd``; a refusal by the run budget also stops the run. A
session already running is never cut short, so the spend can pass a budget by
at most one session; when that session's contract passes, the prompt
completes (the spend happened and the work is verified).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..planning.budget import EPSILON, PROMPT_KEY, RUN_KEY, usd
from ..planning.plan import Plan
from ..planning.prompt_plan import PromptPlan
from ..providers.failure import FailureEnvelope, envelope_for
from ..state.store import RuntimeStore

FAILURE_CLASS = "guardrail_blocked"

__all__ = [
    "FAILURE_CLASS",
    "PROMPT_KEY",
    "RUN_KEY",
    "CostLedger",
    "open_ledger",
    "usd",
]


@dataclass
class CostLedger:
    """Reported cost so far: per prompt (this invocation) and for the run.

    Attributes:
        run_budget: ``max_run_cost_usd`` (``None`` = no run budget).
        run_spent: the run's reported cost, including what a resumed run
            had already recorded.
        prompt_spent: prompt id -> reported cost of its current invocation.
        run_stop: the refusal that stopped the run (set by the attempt loop
            when the run budget failed a prompt).
    """

    run_budget: float | None = None
    run_spent: float = 0.0
    prompt_spent: dict[str, float] = field(default_factory=dict)
    run_stop: FailureEnvelope | None = None
    _unreported: set[str] = field(default_factory=set)

    def start_prompt(self, prompt_id: str) -> None:
        """A new invocation of ``prompt_id``: its own spend starts at zero."""
        self.prompt_spent[prompt_id] = 0.0

    def enforced(self, pp: PromptPlan) -> bool:
        """True when a budget applies to ``pp``'s sessions."""
        return self.run_budget is not None or pp.max_cost_usd is not None

    def add(self, pp: PromptPlan, cost: float | None) -> str | None:
        """Count one session's reported ``cost``.

        Returns:
            A warning to show (once per provider) when a budget applies but
            the provider reported no cost, else ``None``.
        """
        if cost is None or not math.isfinite(cost) or cost < 0:
            if self.enforced(pp) and pp.provider not in self._unreported:
                self._unreported.add(pp.provider)
                return (
                    f"warning: provider {pp.provider} reported no cost for a session; "
                    "cost budgets count only reported cost"
                )
            return None
        self.prompt_spent[pp.id] = self.prompt_spent.get(pp.id, 0.0) + cost
        self.run_spent += cost
        return None

    def record_fields(
        self, prompt_id: str, refusal: FailureEnvelope | None = None
    ) -> dict[str, Any]:
        """Prompt-record fields: this invocation's reported cost and any budget failure."""
        return {
            "cost_usd": round(self.prompt_spent.get(prompt_id, 0.0), 6),
            "budget_failure": refusal.to_dict() if refusal is not None else None,
        }

    def refusal(self, pp: PromptPlan, pending: float = 0.0) -> FailureEnvelope | None:
        """Why no further session of ``pp`` may start, or ``None``.

        Args:
            pending: cost reported in the current attempt but not yet added
                (sessions of a steer chain).
        """
        run = self.run_spent + pending
        if self.run_budget is not None and run >= self.run_budget - EPSILON:
            return envelope_for(
                FAILURE_CLASS,
                f"run cost budget spent: {usd(run)} of {RUN_KEY} {usd(self.run_budget)}",
                provider_code=RUN_KEY,
            )
        spent = self.prompt_spent.get(pp.id, 0.0) + pending
        if pp.max_cost_usd is not None and spent >= pp.max_cost_usd - EPSILON:
            return envelope_for(
                FAILURE_CLASS,
                f"cost budget: prompt {pp.id} spent {usd(spent)} of {PROMPT_KEY} "
                f"{usd(pp.max_cost_usd)}",
                provider_code=PROMPT_KEY,
            )
        return None

    def session_cap(self, pp: PromptPlan) -> float | None:
        """What is left for the next session, for a CLI with its own budget flag.

        Only when ``pp``'s provider options carry ``max_cost_usd`` (the CLI
        gets it as its per-session budget) and less than the whole budget is
        left; ``None`` otherwise (the options go through unchanged).
        """
        if pp.max_cost_usd is None or pp.provider_options.get(PROMPT_KEY) is None:
            return None
        left = pp.max_cost_usd - self.prompt_spent.get(pp.id, 0.0)
        if self.run_budget is not None:
            left = min(left, self.run_budget - self.run_spent)
        if left >= pp.max_cost_usd or left <= 0:
            return None
        return round(left, 6)


def open_ledger(
    plan: Plan, store: RuntimeStore, run_id: str, resumed: bool
) -> tuple[CostLedger, str | None]:
    """The ledger of a run, and a line to show when a resumed run already spent some.

    A resumed run counts the ``cost_usd`` its recorded attempts report (a
    session killed before it ended recorded none). Read only when the run has
    a budget: it folds every prompt's log.
    """
    ledger = CostLedger(run_budget=plan.max_run_cost_usd)
    if not resumed or ledger.run_budget is None:
        return ledger, None
    spent = 0.0
    for record in store.load_state().get("prompts", {}).values():
        for attempt in record.get("attempts", []) if isinstance(record, dict) else []:
            if not isinstance(attempt, dict) or attempt.get("run_id") != run_id:
                continue
            cost = attempt.get("cost_usd")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
                spent += float(cost) if math.isfinite(cost) else 0.0
    ledger.run_spent = spent
    if spent <= 0:
        return ledger, None
    return ledger, (
        f"Run cost so far: {usd(spent)} of {RUN_KEY} {usd(ledger.run_budget)} "
        f"(recorded by run {run_id} before it was resumed)."
    )
