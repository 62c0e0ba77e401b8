"""The workspace value: a manifest loads into a frozen Workspace with every path resolved."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from prompt_runner.state.layout import STATE_DIR_ENV
from prompt_runner.workspace import load_workspace
from prompt_runner.workspace.runspec import ARTIFACTS_ENV, WORKSPACE_ENV, run_command

MANIFEST = """\
schema: prompt_runner.workspace/v1
id: nightly
repositories:
  app: {remote: ./remotes/app.git, ref: main, source: ../author/app}
  lib: {remote: "git@example.com:me/lib.git", ref: v1}
packet: {repo: app, path: packets/nightly}
commits: {mode: session, push: after_prompt, branch: prompt-runner/nightly}
failure_policy: continue_independent
contracts:
  artifacts:
    - {id: checker, repo: lib, project: tools, build: [make, checker], output: bin/checker}
"""


def test_auto_roots_come_from_the_xdg_homes_and_paths_resolve(tmp_path: Path) -> None:
    manifest = tmp_path / "ops" / "workspace.yml"
    manifest.parent.mkdir()
    manifest.write_text(MANIFEST)
    ws = load_workspace(manifest)
    data = Path(os.environ["XDG_DATA_HOME"]) / "prompt_runner" / "workspaces" / "nightly"
    state = Path(os.environ["XDG_STATE_HOME"]) / "prompt_runner" / "workspaces" / "nightly"
    assert ws.workspace_root == data and ws.runtime_root == state
    assert ws.state_dir == state / "state"
    assert ws.clone("app") == data / "repos" / "app"
    assert ws.packet_dir == data / "repos" / "app" / "packets" / "nightly"
    app = ws.repositories["app"]
    assert app.remote == str(tmp_path / "ops" / "remotes" / "app.git")
    assert app.source == str(tmp_path / "author" / "app")
    assert app.branch == "prompt-runner/nightly"
    assert ws.repositories["lib"].remote == "git@example.com:me/lib.git"
    assert ws.commits.committer == "noop" and ws.commits.push == "after_prompt"
    assert ws.artifact("checker").installed == data / "artifacts" / "checker"
    with pytest.raises(dataclasses.FrozenInstanceError):
        ws.id = "other"  # type: ignore[misc]


def test_the_run_command_carries_the_relocated_state(tmp_path: Path) -> None:
    manifest = tmp_path / "workspace.yml"
    manifest.write_text(MANIFEST.replace("source: ../author/app", "source: ./app"))
    ws = load_workspace(manifest)
    cmd = run_command(ws, new_run=True, remaining=True, extra=["--log-mode", "verbose"])
    assert cmd.argv[1:5] == ("-m", "prompt_runner", "run", str(ws.packet_dir))
    assert cmd.argv[cmd.argv.index("--state-dir") + 1] == str(ws.state_dir)
    assert cmd.argv[cmd.argv.index("--committer") + 1] == "noop"
    assert "--keep-going" in cmd.argv and "--new-run" in cmd.argv and "--remaining" in cmd.argv
    assert cmd.argv[cmd.argv.index("--push") + 1] == "after_prompt"
    assert cmd.argv[-2:] == ("--log-mode", "verbose")
    assert cmd.env == {
        STATE_DIR_ENV: str(ws.state_dir),
        WORKSPACE_ENV: str(manifest),
        ARTIFACTS_ENV: str(ws.workspace_root / "artifacts"),
    }
    assert cmd.cwd == ws.packet_dir
