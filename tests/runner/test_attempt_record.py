"""begin_attempt / finish_attempt: one attempt's record, files, snapshot and request."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.providers.base import SessionResult
from prompt_runner.runner.attempt_record import begin_attempt, finish_attempt
from prompt_runner.runner.loop_state import Decided, Verdict
from prompt_runner.runner.recovery import Decision
from prompt_runner.runner.session import SessionOutcome
from prompt_runner.state.records import AttemptStatus
from prompt_runner.state.store import FileStore
from prompt_runner.verifier import VerifierReport
from tests.runner._steps import RecordingControl, open_steps, said, steer, step_context


def test_begin_records_a_running_attempt_and_counts_a_fresh_session(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    [record] = ctx.store.load_prompt("01")["attempts"]
    assert record["status"] == "running" and record["mode"] == "run"
    assert record["run_id"] == ctx.run_id and record["provider"] == "simulated"
    assert (attempt.number, attempt.key, loop.session_number) == (1, 1, 1)
    assert attempt.request.session_number == 1 and attempt.request.prompt_text == loop.text
    assert ctx.position.attempt_key == 1 and ctx.position.mode == "run"
    assert "[01] attempt 1 (run) via simulated" in said(ctx)
    assert set(attempt.before) == {"app"} and loop.prompt_started


def test_a_resume_continues_the_session_count_and_the_resume_chain(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    loop = open_steps(ctx)
    begin_attempt(ctx, loop, 1)
    loop.mode, loop.budgets.resumes_in_chain = "resume", 1
    attempt = begin_attempt(ctx, loop, 2)
    assert attempt.resuming and loop.session_number == 1 and loop.budgets.resumes_in_chain == 1
    loop.mode = "retry"
    begin_attempt(ctx, loop, 3)
    assert loop.session_number == 2 and loop.budgets.resumes_in_chain == 0


def test_steers_queued_while_judging_go_into_the_next_prompt_text(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    control = RecordingControl(queued=[steer("use tabs", delivery="next_session")])
    ctx.control = control
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    assert "## Operator Guidance" in attempt.request.prompt_text
    assert "use tabs" in attempt.request.prompt_text
    assert [e.data for e in control.events if e.kind == "steer"] == [
        {"text": "use tabs", "delivery": "next_session"}
    ]


def test_before_session_hears_the_mode(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    heard: list[str] = []
    loop = open_steps(ctx, before_session=heard.append)
    begin_attempt(ctx, loop, 1)
    assert heard == ["run"]


def test_finish_records_the_outcome_closes_the_files_and_names_the_next_mode(
    tmp_path: Path,
) -> None:
    ctx = step_context(tmp_path, {"01": {}}, store=FileStore(tmp_path / "state"))
    control = RecordingControl()
    ctx.control = control
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    assert attempt.files is not None
    session = SessionOutcome(SessionResult(ok=True, duration_ms=12), "sim-1", 0, 3)
    loop.session_id = "sim-1"
    report = VerifierReport.of(())
    decided = Decided(Decision("repair", "unmet items"), AttemptStatus.VERIFICATION_FAILED)
    finish_attempt(ctx, loop, attempt, session, Verdict(report, None, None, True), decided)
    [record] = ctx.store.load_prompt("01")["attempts"]
    assert record["status"] == "verification_failed" and record["decision"] == "repair"
    assert record["session_id"] == "sim-1" and record["tool_count"] == 3
    assert record["workspace_changed"] is True and record["provider_outcome"] == "success"
    assert "budget_failure" not in record
    log = attempt.files.log_path.read_text()
    assert "OUTCOME status=verification_failed next=repair reason=unmet items" in log
    assert control.boundaries == [("01", "repair")]
    assert "[01] verification_failed: unmet items" in said(ctx)
