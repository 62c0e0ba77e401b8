"""status --workspace: the versioned document, through a real run, a kill -9 and a failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import prompt_runner
from prompt_runner.workspace.runspec import run_command
from tests.helpers.cli import cli
from tests.helpers.workspaces import default_prompts, make_workspace


def _slow_prompts() -> dict[str, dict[str, object]]:
    prompts = default_prompts()
    prompts["01"]["simulate"] = {
        "attempts": [{"delay_ms": 4000, "writes": [{"path": "one.txt", "text": "1\n"}]}]
    }
    return prompts


def _start(manifest: Path) -> subprocess.Popen[bytes]:
    cmd = run_command(prompt_runner.load_workspace(manifest))
    return subprocess.Popen(
        cmd.argv,
        cwd=cmd.cwd,
        env=cmd.full_env(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(predicate: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_running_then_killed_is_unhealthy_then_completed(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path, prompts=_slow_prompts())
    prompt_runner.prepare_workspace(manifest)
    before = prompt_runner.workspace_status(manifest)
    assert before["schema"] == "prompt_runner.workspace.status/v1" and before["state"] == "stopped"
    assert before["run_id"] is None and before["prompts"] == {
        "total": 2,
        "completed": 0,
        "by_status": {"pending": 2},
    }
    runner = _start(manifest)
    try:
        _wait_for(lambda: prompt_runner.workspace_status(manifest)["state"] == "running")
        live = prompt_runner.workspace_status(manifest)
        assert live["containment"]["alive"] is True and live["containment"]["pid"] == runner.pid
        assert live["run_id"] and live["journal_seq"] >= 1 and live["last_progress_at"]
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.wait()
    dead = json.loads(cli("status", "--workspace", "demo-ws", "--json").stdout)  # by id
    assert dead["state"] == "unhealthy" and dead["containment"]["alive"] is False
    assert dead["run_status"] == "running"
    resumed = _start(manifest)
    assert resumed.wait(timeout=60) == 0
    done = prompt_runner.workspace_status(manifest)
    assert done["state"] == "completed" and done["prompts"]["completed"] == 2
    assert done["clones"]["app"]["branch"] == "prompt-runner/work"
    assert done["clones"]["app"]["dirty"] == 0 and done["clones"]["app"]["ahead"] == 1
    assert done["clones"]["lib"]["ahead"] == 1


def test_a_failed_run_is_failed(tmp_path: Path) -> None:
    prompts = default_prompts()
    prompts["02"]["verify"] = {"files_exist": ["never.txt"]}
    prompts["02"]["recovery"] = {"repair": {"enabled": False}}
    manifest = make_workspace(tmp_path, prompts=prompts)
    prompt_runner.prepare_workspace(manifest)
    runner = _start(manifest)
    assert runner.wait(timeout=60) == 1
    doc = prompt_runner.workspace_status(manifest)
    assert doc["state"] == "failed" and doc["run_status"] == "failed"
    human = cli("status", "--workspace", manifest)
    assert human.returncode == 0 and "Workspace demo-ws: failed" in human.stdout


def test_a_killed_new_run_reads_unhealthy_not_completed(tmp_path: Path) -> None:
    """Every prompt completed once, then a --new-run killed while it re-runs 01:
    the run says running with no runner, so the workspace is unhealthy and 01
    counts interrupted -- until a --remaining run resumes and closes it."""
    manifest = make_workspace(tmp_path, prompts=_slow_prompts())
    prompt_runner.prepare_workspace(manifest)
    assert _start(manifest).wait(timeout=60) == 0
    ws = prompt_runner.load_workspace(manifest)
    cmd = run_command(ws, new_run=True)
    rerun = subprocess.Popen(
        cmd.argv,
        cwd=cmd.cwd,
        env=cmd.full_env(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    state_json = ws.layout.state.state_json
    try:
        _wait_for(
            lambda: state_json.exists()
            and json.loads(state_json.read_text())["prompts"].get("01", {}).get("status")
            == "running"
        )
        os.kill(rerun.pid, signal.SIGKILL)
    finally:
        rerun.wait()
    dead = json.loads(cli("status", "--workspace", manifest, "--json").stdout)
    assert dead["state"] == "unhealthy" and dead["run_status"] == "running"
    assert dead["prompts"]["completed"] == 1
    assert dead["prompts"]["by_status"] == {"completed": 1, "interrupted": 1}
    cmd = run_command(ws, remaining=True)
    resumed = subprocess.run(cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ), check=False)
    assert resumed.returncode == 0
    done = prompt_runner.workspace_status(manifest)
    assert done["state"] == "completed" and done["run_status"] == "completed"
    assert done["prompts"]["by_status"] == {"completed": 2}
