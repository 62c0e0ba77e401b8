"""run_plan: the selected prompts in order -- skipped, blocked, executed, what comes next."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_runner.runner.engine import run_plan
from prompt_runner.runner.opening import OpenedRun
from tests.helpers.packets import NOREPAIR
from tests.helpers.run_context import RUN_ID, run_context, said

WRITES = {"simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a\n"}]}]}}
PASSES = {**WRITES, "verify": {"files_exist": ["a.txt"]}}
FAILS = {"verify": {"files_exist": ["never.txt"]}}
MANIFEST: dict[str, Any] = {"recovery": {"retry": {"base_delay_ms": 0}, **NOREPAIR}}


def test_a_dependent_of_a_failed_prompt_is_blocked_and_the_run_stops(tmp_path: Path) -> None:
    ctx = run_context(
        tmp_path,
        {"01": FAILS, "02": {"depends_on": ["01"]}, "03": PASSES},
        manifest=MANIFEST,
    )
    result = run_plan(ctx)
    assert result.prompts == {"01": "verification_failed"}
    assert (result.status, result.exit_code, result.message) == ("failed", 1, "Prompt 01 failed.")
    assert ctx.store.load_prompt("02").get("status") is None  # stop: never reached
    [finished] = ctx.store.journal(RUN_ID).records()
    assert finished["type"] == "run_finished" and finished["data"]["failures"] == ["01"]


def test_keep_going_blocks_dependents_and_runs_the_independent(tmp_path: Path) -> None:
    ctx = run_context(
        tmp_path,
        {"01": FAILS, "02": {"depends_on": ["01"]}, "03": PASSES},
        manifest=MANIFEST,
        keep_going=True,
    )
    result = run_plan(ctx)
    assert result.prompts == {
        "01": "verification_failed",
        "02": "blocked_by_dependency",
        "03": "completed",
    }
    # 02 never ran: it did not fail itself (session 12: it was counted as failed)
    assert result.message == "1 selected prompt(s) failed: 01; 1 blocked by a failed dependency: 02"
    assert result.failures == ["01", "02"]  # still both in failures, as documented
    assert ctx.store.load_prompt("02")["blocked_by"] == ["01"]
    assert "[02] blocked by dependency 01; not started" in said(ctx)


def test_prompts_the_resumed_run_completed_are_skipped(tmp_path: Path) -> None:
    opened = OpenedRun(RUN_ID, resumed=True, skip=frozenset({"01"}))
    ctx = run_context(tmp_path, {"01": FAILS, "02": PASSES}, opened=opened)
    result = run_plan(ctx)
    assert result.prompts == {"01": "completed", "02": "completed"}
    assert result.message == "Run completed: 2 prompt(s) completed."
    assert "▶ 01" not in said(ctx)


def test_a_verifier_fault_halts_the_run(tmp_path: Path) -> None:
    fault = {"verify": {"commands": [{"exec": "definitely-missing-verifier-xyz", "args": []}]}}
    ctx = run_context(tmp_path, {"01": {**WRITES, **fault}, "02": PASSES})
    result = run_plan(ctx)
    assert (result.status, result.exit_code) == ("halted", 3)
    assert result.prompts == {"01": "verifier_fault"} and result.failures == ["01"]
    assert result.message.startswith("Run halted: the verifier could not judge prompt 01")
