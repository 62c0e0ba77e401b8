"""run_pipeline and run_context: the steps in order, the context they build."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.committer import NoopCommitter
from prompt_runner.errors import CallbackError
from prompt_runner.runner import workspace
from prompt_runner.runner.context import Callbacks, RunContext
from prompt_runner.runner.engine import run_plan
from prompt_runner.runner.opening import OpenedRun
from prompt_runner.runner.pipeline import run_context as pipeline_context
from prompt_runner.runner.pipeline import run_pipeline
from prompt_runner.runner.result import RunResult
from prompt_runner.state.memstore import MemoryStore
from tests.helpers.run_context import console, planned, run_context, said

WRITES_A = {
    "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a\n"}]}]},
    "verify": {"files_exist": ["a.txt"]},
}


def test_a_context_is_built_from_a_dict_built_packet(tmp_path: Path) -> None:
    ctx = run_context(tmp_path, {"01": WRITES_A, "02": {"depends_on": ["01"]}})
    assert list(ctx.plan.selected) == ["01", "02"]
    assert isinstance(ctx.store, MemoryStore) and isinstance(ctx.committer, NoopCommitter)
    assert ctx.position.prompt_id is None and ctx.pins is None and ctx.agents_dir is None

    result = run_plan(ctx)

    assert result.prompts == {"01": "completed", "02": "completed"}
    assert (tmp_path / "repo" / "a.txt").read_text() == "a\n"
    assert ctx.position.prompt_id == "02"
    assert "▶ 01 Step 01" in said(ctx)


def test_the_foreign_snapshot_leaves_out_adopted_work(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    p = planned(tmp_path, {"01": {}})
    (repo / "notes.txt").write_text("the user's\n")
    (repo / "a.txt").write_text("the prompt's\n")
    snap = workspace.snapshot({"app": repo})
    opened = OpenedRun(
        "R1",
        resumed=True,
        foreign_changes={"app": {"notes.txt"}},
        adopted={"01": {"app": {"a.txt"}}},
        carry=workspace.Carry.now(snap, {"app": repo}),
    )
    ctx = pipeline_context(p, MemoryStore(), NoopCommitter(), console(), opened)
    foreign = ctx.foreign_snapshot["app"]
    assert foreign is not None and [row.path for row in foreign.rows] == ["notes.txt"]
    assert ctx.adopted == {"01": {"app": {"a.txt"}}}
    assert ctx.workspace_carry is opened.carry and ctx.run_id == "R1"


def test_an_observer_that_raised_is_raised_after_the_locks_are_released(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, committer="git")
    pid_file = p.packet.root / ".prompt_runner" / "run.pid"

    def observer(summary: object) -> None:
        assert pid_file.exists()  # the run still holds its lock here
        raise ValueError("observer broke")

    def executor(ctx: RunContext) -> RunResult:
        return RunResult(ctx.run_id, "completed", 0, message="done")

    with pytest.raises(CallbackError) as caught:
        run_pipeline(
            p,
            MemoryStore(),
            NoopCommitter(),
            console(),
            Callbacks(on_run_completed=observer),
            executor=executor,
        )
    assert not pid_file.exists()
    assert isinstance(caught.value.result, RunResult)
    assert caught.value.result.status == "completed"
    assert isinstance(caught.value.__cause__, ValueError)


def test_sleep_and_rand_reach_the_context(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}})
    seen: list[RunContext] = []

    def executor(ctx: RunContext) -> RunResult:
        seen.append(ctx)
        return RunResult(ctx.run_id, "completed", 0)

    def no_sleep(seconds: float) -> None:
        return None

    def half() -> float:
        return 0.5

    result = run_pipeline(
        p,
        MemoryStore(),
        NoopCommitter(),
        console(),
        Callbacks(),
        executor=executor,
        sleep=no_sleep,
        rand=half,
    )
    assert result.run_id == seen[0].run_id
    assert seen[0].sleep is no_sleep and seen[0].rand is half
