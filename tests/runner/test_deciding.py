"""decide_next: the recovery decision, then the cost budgets; the attempt's status."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.providers.base import SessionResult, Usage
from prompt_runner.providers.failure import envelope_for
from prompt_runner.runner.deciding import attempt_status, budget_refused, decide_next
from prompt_runner.runner.loop_state import Verdict
from prompt_runner.runner.recovery import Decision
from prompt_runner.runner.session import SessionOutcome
from prompt_runner.verifier import VerifierReport
from prompt_runner.verifier.model import item
from tests.runner._steps import open_steps, step_context

PASSED = VerifierReport.of(())
UNMET = VerifierReport.of((item("files_exist", passed=False, details="missing"),))


def session(cost: float | None = None) -> SessionOutcome:
    return SessionOutcome(SessionResult(ok=True, usage=Usage(cost_usd=cost)), "sim-1", 0, 0)


def test_a_retryable_failure_is_retried_and_its_message_kept(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx)
    failure = envelope_for("provider_capacity", "529 Overloaded")
    decided = decide_next(ctx, loop, session(), Verdict(UNMET, failure, {}, False))
    assert decided.decision.action == "retry" and decided.status == "failed"
    assert decided.refusal is None
    assert loop.last_failure_message == "529 Overloaded"


def test_a_reached_cost_budget_turns_a_repair_into_a_terminal_failure(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {"adapter_opts": {"max_cost_usd": 0.5}}})
    loop = open_steps(ctx)
    ctx.cost.start_prompt("01")
    decided = decide_next(ctx, loop, session(0.6), Verdict(UNMET, None, {}, True))
    assert decided.decision.action == "fail" and decided.decision.status == "failed"
    assert decided.refusal is not None and decided.refusal.provider_code == "max_cost_usd"
    assert "no further session starts" in decided.decision.reason
    assert decided.status == "verification_failed"


def test_a_passing_session_completes_whatever_it_cost(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {"adapter_opts": {"max_cost_usd": 0.5}}})
    loop = open_steps(ctx)
    ctx.cost.start_prompt("01")
    decided = decide_next(ctx, loop, session(0.9), Verdict(PASSED, None, None, None))
    assert decided.decision.action == "complete" and decided.refusal is None
    assert decided.status == "completed"


def test_a_controlled_iteration_whose_provider_failed_is_not_completed(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx, controlled=True)
    failure = envelope_for("provider_capacity", "529 Overloaded")
    decided = decide_next(ctx, loop, session(), Verdict(PASSED, failure, {}, False))
    assert decided.decision.action == "retry"


def test_attempt_status_names_what_failed() -> None:
    fault = VerifierReport.of(
        (item("commands", passed=False, verdict="verifier_fault", details="broke"),)
    )
    assert attempt_status(Decision("complete", "ok"), True, PASSED) == "completed"
    assert attempt_status(Decision("halt", "x"), False, fault) == "verifier_fault"
    assert attempt_status(Decision("retry", "x"), True, UNMET) == "failed"
    assert attempt_status(Decision("repeat", "x"), False, UNMET) == "incomplete"
    owned = Decision("fail", "x", status="agent_owned_incomplete")
    assert attempt_status(owned, False, UNMET) == "incomplete"
    assert attempt_status(Decision("repair", "x"), False, UNMET) == "verification_failed"


def test_a_budget_refused_before_any_session_says_no_session_ran(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    refusal = envelope_for("guardrail_blocked", "cost budget reached")
    outcome = budget_refused(ctx, ctx.plan.prompt("01"), refusal, ran=False)
    assert (outcome.action, outcome.status) == ("fail", "failed")
    assert outcome.extra["session_ran"] is False
    assert budget_refused(ctx, ctx.plan.prompt("01"), refusal, ran=True).extra.get(
        "session_ran", True
    )
