"""prepare_next: the next session's mode, prompt text and the budget it spends."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.providers.failure import envelope_for
from prompt_runner.runner.loop_state import Verdict
from prompt_runner.runner.next_session import prepare_next
from prompt_runner.runner.recovery import Decision
from prompt_runner.verifier import VerifierReport
from prompt_runner.verifier.model import item
from tests.runner._steps import open_steps, said, step_context

UNMET = VerifierReport.of((item("files_exist", passed=False, details="out.txt is missing"),))
CAPACITY = envelope_for("provider_capacity", "529 Overloaded")


def test_a_retry_waits_then_starts_over_from_the_base_text(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    slept: list[float] = []
    ctx.sleep = slept.append
    loop = open_steps(ctx, text="a repair prompt")
    prepare_next(
        ctx, loop, Decision("retry", "x", delay_ms=250), Verdict(UNMET, CAPACITY, {}, False)
    )
    assert (loop.mode, loop.text) == ("retry", loop.base)
    assert loop.budgets.retries["provider_capacity"] == 1 and slept == [0.25]
    assert "[01] waiting 250 ms before retrying" in said(ctx)


def test_a_resume_keeps_the_text_and_counts_the_chain(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx, text="as it was")
    prepare_next(ctx, loop, Decision("resume", "x"), Verdict(UNMET, CAPACITY, {}, False))
    assert (loop.mode, loop.text, loop.budgets.resumes_in_chain) == ("resume", "as it was", 1)


def test_a_repair_attaches_the_unmet_items_and_the_last_error(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx)
    loop.last_failure_message = "the tool crashed"
    prepare_next(ctx, loop, Decision("repair", "x"), Verdict(UNMET, None, {}, True))
    assert loop.mode == "repair" and loop.budgets.repairs == 1
    assert loop.text.startswith(loop.base.rstrip())
    assert "## Repair Instructions" in loop.text and "out.txt is missing" in loop.text
    assert "the tool crashed" in loop.text


def test_an_agent_owned_repeat_names_the_next_fresh_session(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx)
    loop.session_number = 1
    prepare_next(ctx, loop, Decision("repeat", "x"), Verdict(UNMET, None, {}, False))
    assert loop.mode == "agent_owned_repeat" and loop.budgets.repeats == 1
    assert "Fresh Session 2" in loop.text and "out.txt is missing" in loop.text
