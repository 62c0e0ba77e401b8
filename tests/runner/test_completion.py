"""Completion: what a prompt's commit may take, its records, and the mixed-commit warning."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.committer import CommitResult
from prompt_runner.runner import workspace
from prompt_runner.runner.completion import (
    commit_paths,
    contract_paths,
    record_outcome,
    warn_mixed_commit,
)
from prompt_runner.runner.loop_state import PromptOutcome
from prompt_runner.state.journal import MemoryJournal
from prompt_runner.verifier.registry import output_clauses
from tests.runner._steps import said, step_context

VERIFY = {"files_exist": ["out/a.txt"], "commands": ["test -s out/a.txt"]}


def dirty(tmp_path: Path, *names: str) -> None:
    for name in names:
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def test_a_commit_takes_touched_paths_and_dirty_outputs_its_contract_names(
    tmp_path: Path,
) -> None:
    ctx = step_context(tmp_path, {"01": {"verify": VERIFY}})
    pp = ctx.plan.prompt("01")
    dirty(tmp_path, "out/a.txt", "mine.txt", "users.txt")
    after = workspace.snapshot({"app": tmp_path / "repo"})
    outcome = PromptOutcome("complete", "completed", "ok", touched={"app": {"mine.txt"}})
    outcome.workspace_after = after
    # files_exist names an output (the registry says so); users.txt is nobody's output.
    assert commit_paths(ctx, pp, outcome) == {"app": ["mine.txt", "out/a.txt"]}


def test_a_session_committed_whole_commits_every_change(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {"verify": VERIFY}})
    outcome = PromptOutcome("complete", "completed", "ok")
    assert commit_paths(ctx, ctx.plan.prompt("01"), outcome) is None


def test_only_the_clauses_that_name_outputs_give_commit_paths(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {"verify": VERIFY}})
    pp = ctx.plan.prompt("01")
    # A legacy shell string is no path: the registry keeps commands out.
    assert contract_paths(pp) == [(None, "out/a.txt"), (None, "test -s out/a.txt")]
    assert contract_paths(pp, clauses=output_clauses()) == [(None, "out/a.txt")]


def test_a_failed_outcome_is_recorded_with_its_unmet_items(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    outcome = PromptOutcome("fail", "verification_failed", "the contract has unmet items")
    status = record_outcome(ctx, ctx.plan.prompt("01"), outcome, MemoryJournal(ctx.run_id))
    assert status == "verification_failed"
    record = ctx.store.load_prompt("01")
    assert record["status"] == "verification_failed" and record["session_ran"] is True
    assert ctx.store.read_progress()["01"].status == "failed"
    assert "✗ 01 verification_failed: the contract has unmet items" in said(ctx)


def test_a_halt_journals_and_leaves_progress_alone(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    journal = MemoryJournal(ctx.run_id)
    outcome = PromptOutcome("halt", "verifier_fault", "the verifier could not judge")
    assert record_outcome(ctx, ctx.plan.prompt("01"), outcome, journal) == "verifier_fault"
    assert "01" not in ctx.store.read_progress()
    assert [e["type"] for e in journal.records()] == ["run_halted"]


def test_a_completed_prompt_is_committed_and_recorded(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    outcome = PromptOutcome("complete", "completed", "ok", source="verifier")
    status = record_outcome(ctx, ctx.plan.prompt("01"), outcome, MemoryJournal(ctx.run_id))
    assert status == "completed"
    record = ctx.store.load_prompt("01")
    assert record["status"] == "completed" and record["source"] == "verifier"
    assert record["commit_info"] == {"commits": {}, "skipped": True}
    assert ctx.store.read_progress()["01"].status == "completed"


def test_committing_what_the_user_changed_before_the_run_is_said(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    ctx.foreign_changes = {"app": {"shared.txt", "theirs.txt"}}
    outcome = PromptOutcome("complete", "completed", "ok", touched={"app": {"shared.txt"}})
    commit = CommitResult(paths={"app": frozenset({"shared.txt", "theirs.txt"})})
    warn_mixed_commit(ctx, ctx.plan.prompt("01"), outcome, commit)
    out = said(ctx)
    assert "edited shared.txt in repo 'app', which already had uncommitted changes" in out
    assert "committed theirs.txt in repo 'app'" in out and "names as outputs" in out
