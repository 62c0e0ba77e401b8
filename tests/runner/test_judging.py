"""judge_workspace: the verdict, what the session changed, and when it is committed whole."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.committer import GitCommitter
from prompt_runner.providers.base import SessionResult
from prompt_runner.providers.failure import envelope_for
from prompt_runner.runner.attempt_record import begin_attempt
from prompt_runner.runner.judging import judge_workspace, session_failure
from prompt_runner.runner.session import SessionOutcome
from tests.runner._steps import open_steps, step_context

OK = SessionOutcome(SessionResult(ok=True), "sim-1", 1, 0)


def test_what_the_session_wrote_is_judged_and_counted_as_touched(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {"verify": {"files_exist": ["out.txt"]}}})
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    (tmp_path / "repo" / "out.txt").write_text("done\n")
    verdict = judge_workspace(ctx, loop, attempt, OK)
    assert verdict.report.passed and verdict.failure is None
    assert verdict.changed is True and verdict.after is not None
    assert loop.touched == {"app": {"out.txt"}}
    assert ctx.position.attempt_key is None  # the session is over: nothing to interrupt


def test_unmet_items_fail_the_verdict(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {"verify": {"files_exist": ["missing.txt"]}}})
    loop = open_steps(ctx)
    verdict = judge_workspace(ctx, loop, begin_attempt(ctx, loop, 1), OK)
    assert not verdict.report.passed and verdict.changed is False
    assert [item.kind for item in verdict.report.failures()] == ["files_exist"]


def test_a_clean_passing_session_on_a_clean_tree_is_committed_whole(tmp_path: Path) -> None:
    ctx = step_context(
        tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}}, committer=GitCommitter()
    )
    loop = open_steps(ctx)
    verdict = judge_workspace(ctx, loop, begin_attempt(ctx, loop, 1), OK)
    assert verdict.report.passed
    assert (verdict.after, verdict.changed) == (None, None)  # the commit says what changed
    assert loop.touched == {}


def test_a_failed_session_is_always_looked_at(tmp_path: Path) -> None:
    ctx = step_context(
        tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}}, committer=GitCommitter()
    )
    loop = open_steps(ctx)
    failed = SessionOutcome(SessionResult(ok=False), "sim-1", 0, 0)
    verdict = judge_workspace(ctx, loop, begin_attempt(ctx, loop, 1), failed)
    assert verdict.failure is not None and verdict.failure.failure_class == "unknown"
    assert verdict.after is not None and verdict.changed is False


def test_session_failure_names_what_a_bare_failed_result_was() -> None:
    assert session_failure(SessionResult(ok=True)) is None
    cancelled = session_failure(SessionResult(ok=False, interrupted=True))
    assert cancelled is not None and cancelled.failure_class == "user_cancelled"
    given = envelope_for("provider_capacity", "529")
    assert session_failure(SessionResult(ok=False, failure=given)) is given
