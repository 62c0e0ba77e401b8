"""run_with_steers / deliver_steers: a steer resumes the same session inside the attempt."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.runner.attempt_record import begin_attempt
from prompt_runner.runner.steering import queued_steers, run_with_steers
from tests.runner._steps import RecordingControl, open_steps, said, steer, step_context

SCRIPT = {
    "simulate": {
        "attempts": [{"messages": ["working"], "cost_usd": 0.5}],
        "resume": {"messages": ["taking the steer"], "cost_usd": 0.25},
    }
}


def test_a_steer_resumes_the_session_within_the_attempt_and_sums_the_cost(
    tmp_path: Path,
) -> None:
    ctx = step_context(tmp_path, {"01": SCRIPT})
    control = RecordingControl(live=[steer("stop and add tests")])
    ctx.control = control
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    outcome = run_with_steers(ctx, loop, attempt)
    assert outcome.result.usage.cost_usd == 0.75
    assert loop.session_id is not None and loop.session_id == outcome.session_id
    kinds = [e.kind for e in control.events]
    assert kinds.count("session_started") == 2  # the session, then its resume
    [delivered] = [e.data for e in control.events if e.kind == "steer"]
    assert delivered == {"text": "stop and add tests", "delivery": "interrupt_and_resume"}
    assert "[01] Resuming the provider thread with the steer" in said(ctx)
    assert loop.budgets.to_dict()["retries"] == {} and loop.session_number == 1


def test_without_a_steer_the_session_runs_once(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": SCRIPT})
    control = RecordingControl()
    ctx.control = control
    loop = open_steps(ctx)
    outcome = run_with_steers(ctx, loop, begin_attempt(ctx, loop, 1))
    assert outcome.result.usage.cost_usd == 0.5
    assert [e.kind for e in control.events].count("session_started") == 1


def test_a_reached_cost_budget_drops_the_steer(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {**SCRIPT, "adapter_opts": {"max_cost_usd": 0.5}}})
    control = RecordingControl(live=[steer("one more thing")])
    ctx.control = control
    loop = open_steps(ctx)
    outcome = run_with_steers(ctx, loop, begin_attempt(ctx, loop, 1))
    assert outcome.result.usage.cost_usd == 0.5
    assert not [e for e in control.events if e.kind == "steer"]
    assert "steer dropped" in said(ctx)


def test_queued_steers_without_a_control_plane_are_none(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    assert queued_steers(ctx, "01", 1) == []
