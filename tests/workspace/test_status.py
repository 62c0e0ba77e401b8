"""status --workspace: the versioned document, through a real run, a kill -9 and a failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

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
        # run.pid (running) is written before progress.log, state.json and the
        # journal: wait for the first progress the document reports, not a delay
        live: dict[str, Any] = {}

        def progressing() -> bool:
            live.update(prompt_runner.workspace_status(manifest))
            return bool(
                live["state"] == "running" and live["journal_seq"] and live["last_progress_at"]
            )

        _wait_for(progressing)
        assert live["containment"]["alive"] is True and live["containment"]["pid"] == runner.pid
        assert live["run_id"] and live["journal_seq"] >= 1
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.wait()
    dead = json.loads(cli("status", "--workspace", "demo-ws", "--json").stdout)  # by id
    assert dead["state"] == "unhealthy" and dead["containment"]["alive"] is False
    assert dead["run_status"] == "unknown" and dead["run_recorded_status"] == "running"
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
            lambda: (
                state_json.exists()
                and json.loads(state_json.read_text())["prompts"].get("01", {}).get("status")
                == "running"
            )
        )
        os.kill(rerun.pid, signal.SIGKILL)
    finally:
        rerun.wait()
    dead = json.loads(cli("status", "--workspace", manifest, "--json").stdout)
    assert dead["state"] == "unhealthy" and dead["run_status"] == "unknown"
    assert dead["run_recorded_status"] == "running"  # as status's last_run says it
    assert dead["prompts"]["completed"] == 1
    assert dead["prompts"]["by_status"] == {"completed": 1, "interrupted": 1}
    cmd = run_command(ws, remaining=True)
    resumed = subprocess.run(cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ), check=False)
    assert resumed.returncode == 0
    done = prompt_runner.workspace_status(manifest)
    assert done["state"] == "completed" and done["run_status"] == "completed"
    assert done["prompts"]["by_status"] == {"completed": 2}


REJECT = '#!/bin/sh\necho "policy: frozen" >&2\nexit 1\n'


def _reject_pushes(bare: Path) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(REJECT)
    hook.chmod(0o755)


def test_a_failed_push_shows_in_the_document_and_the_clone_is_ahead(tmp_path: Path) -> None:
    """01 (app) pushes its work branch; then app's remote rejects every push, so
    03's commit stays local: the document carries the push and counts app ahead
    of origin/prompt-runner/work, lib (never pushed) ahead of its base."""
    prompts = default_prompts()
    prompts["03"] = {
        "targets": ["app"],
        "commit": "feat: three",
        "simulate": {"attempts": [{"writes": [{"path": "three.txt", "text": "3\n"}]}]},
        "verify": {"files_exist": ["three.txt"]},
    }
    commits = {"mode": "runner", "push": "after_prompt", "branch": "prompt-runner/work"}
    manifest = make_workspace(tmp_path, prompts=prompts, manifest={"commits": commits})
    prompt_runner.prepare_workspace(manifest)
    _reject_pushes(tmp_path / "remotes" / "lib.git")
    ws = prompt_runner.load_workspace(manifest)
    first = run_command(ws, extra=["--through", "02"])
    assert subprocess.run(first.argv, cwd=first.cwd, env=first.full_env(os.environ)).returncode == 0
    _reject_pushes(tmp_path / "remotes" / "app.git")
    cmd = run_command(ws)
    assert subprocess.run(cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ)).returncode == 0

    doc = json.loads(cli("status", "--workspace", manifest, "--json").stdout)
    assert doc["state"] == "completed"
    push = doc["push"]
    assert push["status"] == "failed" and push["failed"] == ["app", "lib"]
    app, lib = doc["clones"]["app"], doc["clones"]["lib"]
    assert app["ahead_of"] == "origin/prompt-runner/work"
    assert (app["ahead"], app["behind"]) == (1, 0)  # 03's commit the remote lacks
    assert app["push"]["status"] == "failed" and app["push"]["head"] == app["head"]
    assert "pre-receive hook declined" in app["push"]["error"]
    assert lib["ahead_of"] == "origin/main" and (lib["ahead"], lib["behind"]) == (1, 0)
    human = cli("status", "--workspace", manifest).stdout
    assert "Push: FAILED for app, lib (the commits are local)" in human
    assert "ahead=1 of origin/prompt-runner/work" in human
