"""execute_run and finish_run: the executor under the control plane, the run's end recorded."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import StorageError
from prompt_runner.runner.context import Callbacks, RunContext
from prompt_runner.runner.finishing import execute_run, finish_run, interrupted_result
from prompt_runner.runner.result import RunResult
from prompt_runner.state.memstore import MemoryStore
from prompt_runner.state.records import PromptStatus
from tests.helpers.run_context import RUN_ID, run_context, said


class WritesFail(MemoryStore):
    """An in-memory store whose current.json cannot be written (a full disk)."""

    def write_current_run(self, doc: Any) -> None:
        raise StorageError(Path("runs/current.json"), OSError(errno.ENOSPC, "No space left"))


def started(ctx: RunContext) -> None:
    ctx.store.write_current_run({"run_id": ctx.run_id, "status": "running"})


def test_a_finished_run_records_its_status_and_says_its_closing_line(tmp_path: Path) -> None:
    summaries: list[dict[str, Any]] = []
    ctx = run_context(tmp_path, {"01": {}}, callbacks=Callbacks(on_run_completed=summaries.append))
    started(ctx)

    result = execute_run(ctx, lambda c: RunResult(c.run_id, "completed", 0, message="All done."))

    current = ctx.store.read_current_run()
    assert current is not None
    assert current["status"] == "completed" and current["finished_at"]
    assert said(ctx).endswith("All done.\n")
    assert summaries == [result.to_dict()]
    assert ctx.control is None  # an in-memory run has no control plane


def test_an_interrupted_run_records_the_prompt_it_was_in(tmp_path: Path) -> None:
    ctx = run_context(tmp_path, {"01": {}, "02": {}})
    started(ctx)

    def interrupted(c: RunContext) -> RunResult:
        c.store.update_prompt("01", {"status": "running", "run_id": c.run_id})
        key = c.store.start_attempt("01", {"attempt": 1, "mode": "run"})
        c.position.enter("01", 1, "run", key)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as caught:
        execute_run(ctx, interrupted)

    current = ctx.store.read_current_run()
    assert current is not None and current["status"] == "interrupted"
    record = ctx.store.load_prompt("01")
    assert record["status"] == "interrupted"
    assert record["attempts"][0]["status"] == "interrupted"
    run_result = caught.value.run_result  # type: ignore[attr-defined]
    assert run_result.to_dict() == {
        "run_id": RUN_ID,
        "status": "interrupted",
        "exit_code": 130,
        "prompts": {"01": "interrupted"},
        "failures": [],
        "message": "Run interrupted.",
    }


def test_the_run_so_far_leaves_out_prompts_not_started(tmp_path: Path) -> None:
    ctx = run_context(tmp_path, {"01": {}, "02": {}, "03": {}})
    ctx.store.update_prompt("01", {"status": "completed"})
    ctx.store.update_prompt("02", {"status": "failed"})
    result = interrupted_result(ctx)
    assert result.prompts == {"01": "completed", "02": "failed"}
    assert result.failures == ["02"]


def test_the_run_so_far_gives_prompt_statuses_as_a_finished_run_does(tmp_path: Path) -> None:
    # RunResult.prompts held PromptStatus members after a run that ended on its
    # own and plain strings after an interrupted one (both equal to the words)
    ctx = run_context(tmp_path, {"01": {}, "02": {}, "03": {}})
    ctx.store.update_prompt("01", {"status": "completed"})
    ctx.store.update_prompt("02", {"status": "interrupted"})
    ctx.store.update_prompt("03", {"status": "some_future_word"})
    result = interrupted_result(ctx)
    assert [type(v) for v in result.prompts.values()] == [PromptStatus, PromptStatus, str]
    assert result.prompts == {
        "01": PromptStatus.COMPLETED,
        "02": PromptStatus.INTERRUPTED,
        "03": "some_future_word",
    }


def test_an_end_that_cannot_be_recorded_is_raised_unless_the_run_failed(tmp_path: Path) -> None:
    ctx = run_context(tmp_path, {"01": {}}, store=WritesFail())
    with pytest.raises(StorageError, match=r"current\.json: cannot be written"):
        finish_run(ctx, "completed", failed=False)
    finish_run(ctx, "interrupted", failed=True)  # the first fault is the one reported
