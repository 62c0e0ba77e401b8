"""``watch --workspace W`` and ``commits.push: after_prompt`` on a prepared workspace
whose remotes are bare repositories on disk."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import prompt_runner
from prompt_runner.workspace.runspec import run_command
from tests.helpers.cli import cli
from tests.helpers.workspaces import git, make_workspace


def test_a_pushing_workspace_run_and_its_watch(tmp_path: Path) -> None:
    manifest = make_workspace(
        tmp_path,
        manifest={"commits": {"mode": "runner", "push": "after_prompt", "branch": "pr/work"}},
    )
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    cmd = run_command(ws)
    assert "--push" in cmd.argv
    done = subprocess.run(
        cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name, remote in (("app", "app.git"), ("lib", "lib.git")):
        head = git(ws.clone(name), "rev-parse", "HEAD").strip()
        assert git(tmp_path / "remotes" / remote, "rev-parse", "pr/work").strip() == head

    res = cli("watch", "--workspace", str(manifest), "--for", "1s", "--every", "1s", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    *samples, report = [json.loads(line) for line in res.stdout.splitlines()]
    assert report["passed"] is True and report["state_root"] == str(ws.state_dir)
    evidence = Path(report["evidence"])
    assert evidence.parent == ws.layout.state.acceptance_dir  # <runtime_root>/state/acceptance
    assert evidence.read_text().count("\n") == len(samples) == 2
    first = samples[0]
    assert first["root"] == str(ws.packet_dir) and first["state"] == "completed"
    assert first["push"]["status"] == "ok" and sorted(first["push"]["repos"]) == ["app", "lib"]
    assert not list(ws.clone("app").rglob("acceptance"))  # nothing lands in a clone
    # the library takes the workspace the same way
    again = prompt_runner.watch_for(workspace="demo-ws", for_s="1s", every_s="1s")
    assert again.passed and again.evidence.parent == evidence.parent
