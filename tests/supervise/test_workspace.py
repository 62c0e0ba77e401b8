"""``start`` / ``stop`` of an operator workspace: the packet read from its clone, the
state, the record and the runner's logs under its runtime root (real git, bare remotes)."""

from __future__ import annotations

import json
from pathlib import Path

import prompt_runner
from prompt_runner.supervise import RunLiveError
from tests.helpers.workspaces import default_prompts, git, make_workspace, tree_digest
from tests.supervise._helpers import alive, cli, marked_pids, wait_for


def _slow() -> dict[str, dict[str, object]]:
    prompts = default_prompts()
    for pid, name in (("01", "one"), ("02", "two")):
        prompts[pid]["simulate"] = {
            "attempts": [{"delay_ms": 1500, "writes": [{"path": f"{name}.txt", "text": "1\n"}]}]
        }
    return prompts


def _finished(ws: prompt_runner.Workspace) -> bool:
    current = ws.layout.state.current_run
    if ws.layout.state.run_pid.exists() or not current.exists():
        return False
    return json.loads(current.read_text()).get("status") == "completed"


def test_a_workspace_starts_detached_runs_in_its_clones_and_stops(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path, prompts=_slow())
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    author = tree_digest(tmp_path / "author")

    started = cli("start", "--workspace", manifest)
    assert started.returncode == 0, started.stdout + started.stderr
    assert f"prompt-runner watch --workspace {manifest}" in started.stdout
    record = json.loads(ws.layout.supervisor.record.read_text())
    assert record["containment"] == "process_group"
    assert record["cwd"] == str(ws.packet_dir)
    assert record["argv"][3:7] == ["run", str(ws.packet_dir), "--state-dir", str(ws.state_dir)]
    assert "PROMPT_RUNNER_STATE_DIR" in record["env_names"]
    assert Path(record["stdout"]).parent == ws.layout.logs_dir
    with_positional = cli("start", manifest)  # W as the positional: the same workspace
    assert with_positional.returncode == 3 and "is live: pid" in with_positional.stderr

    wait_for(lambda: _finished(ws), 60, "the workspace's run")
    wait_for(lambda: not alive(record["pid"]), 30, "the runner to exit")
    for repo, subject in (("app", "feat: one"), ("lib", "feat: two")):
        assert git(ws.clone(repo), "log", "-1", "--format=%s").strip() == subject
    assert tree_digest(tmp_path / "author") == author  # the author's checkout is untouched
    assert not (ws.packet_dir / ".prompt_runner").exists()  # no state in the clone
    assert "Run completed" in Path(record["stdout"]).read_text()
    report = prompt_runner.stop(ws)
    assert report.ok and report.stopped_by == "nothing"
    assert marked_pids(record["marker"]) == []


def test_the_library_refuses_a_second_start_and_stops_the_first(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path, prompts=_slow())
    prompt_runner.prepare_workspace(manifest)
    first = prompt_runner.start(manifest)
    assert first.live and first.containment == "process_group" and first.run_id
    try:
        prompt_runner.start(workspace=manifest)
    except RunLiveError as exc:
        assert exc.exit_code == 3 and f"pid {first.pid}" in str(exc)
    else:
        raise AssertionError("a second start was not refused")
    report = prompt_runner.stop(manifest, grace_s=10)
    assert report.ok and report.request_outcome == "applied", report.lines()
    assert [e.pid for e in report.ended] == [first.pid]
    status = prompt_runner.workspace_status(manifest)
    assert status["state"] != "running"
