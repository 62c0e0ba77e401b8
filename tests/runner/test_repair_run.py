"""repair_text and repair_executor: one prompt re-run from its recorded failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.runner.repair_run import repair_executor, repair_text
from prompt_runner.state.memstore import MemoryStore
from tests.helpers.run_context import RUN_ID, planned, run_context, said

WRITES_B = {
    "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "b\n"}]}]},
    "verify": {"files_exist": ["b.txt"]},
}


def test_a_prompt_without_a_recorded_failure_is_refused(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}})
    with pytest.raises(UserError, match="prompt 01 has no recorded failure to repair"):
        repair_text(p, p.prompt("01").prompt, MemoryStore())


def test_the_repair_prompt_names_the_unmet_items_and_the_last_error(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}})
    store = MemoryStore()
    unmet = {"kind": "files_exist", "path": "b.txt", "pass": False, "details": "missing"}
    met = {"kind": "files_exist", "path": "a.txt", "pass": True, "details": "ok"}
    store.update_prompt(
        "01", {"last_verifier": {"items": [met, unmet]}, "last_error": "the model gave up"}
    )
    text = repair_text(p, p.prompt("01").prompt, store)
    assert text.startswith("# Step 01")
    assert "## Repair Instructions" in text and "the model gave up" in text
    assert "path: b.txt" in text and "path: a.txt" not in text


def test_the_repair_executor_ends_the_run_as_its_prompt_ends(tmp_path: Path) -> None:
    ctx = run_context(tmp_path, {"01": WRITES_B})
    result = repair_executor("01", "# Repair: write b.txt\n")(ctx)
    assert result.to_dict() == {
        "run_id": RUN_ID,
        "status": "completed",
        "exit_code": 0,
        "prompts": {"01": "completed"},
        "failures": [],
        "message": "Repair of 01: completed.",
    }
    assert ctx.store.load_prompt("01")["attempts"][0]["mode"] == "repair"
    assert "▶ 01 Step 01 (repair)" in said(ctx)
    [finished] = ctx.store.journal(RUN_ID).records()
    assert finished["type"] == "run_finished"
