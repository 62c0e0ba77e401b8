"""preflight_verify: a prompt whose contract already holds completes without a session."""

from __future__ import annotations

import subprocess
from pathlib import Path

from prompt_runner.runner.preverify import outputs_uncommitted, preflight_verify, preverify_enabled
from tests.helpers.run_context import planned, run_context, said

DONE = {"verify": {"files_exist": ["README.md"]}}


def test_it_is_on_for_remaining_without_ids_unless_asked(tmp_path: Path) -> None:
    assert preverify_enabled(planned(tmp_path / "a", {"01": DONE}, remaining=True))
    assert not preverify_enabled(planned(tmp_path / "b", {"01": DONE}))
    assert preverify_enabled(planned(tmp_path / "c", {"01": DONE}, verify_first=True))
    assert not preverify_enabled(
        planned(tmp_path / "d", {"01": DONE}, remaining=True, verify_first=False)
    )


def test_a_satisfied_prompt_is_recorded_completed_without_a_session(tmp_path: Path) -> None:
    ctx = run_context(
        tmp_path,
        {"01": DONE, "02": {"verify": {"files_exist": ["missing.txt"]}}, "03": {}},
        verify_first=True,
    )
    assert preflight_verify(ctx) == {"01"}
    record = ctx.store.load_prompt("01")
    assert record["status"] == "completed" and record["source"] == "preflight_verify"
    assert record["session_ran"] is False and record["last_verifier"]["pass"] is True
    assert ctx.store.read_progress()["01"].status == "completed"
    assert "✓ 01 already satisfies its contract — no session was run." in said(ctx)
    assert ctx.store.load_prompt("03").get("status") is None  # empty: cannot hold yet


def test_an_uncommitted_output_is_left_for_a_session_to_commit(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    repo = tmp_path / "repo"
    (repo / "a.txt").write_text("a\n")
    assert outputs_uncommitted(p, p.prompt("01"))
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "a"], cwd=repo, check=True)
    assert not outputs_uncommitted(p, p.prompt("01"))
