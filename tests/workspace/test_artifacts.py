"""contracts.artifacts: built by prepare from a clone, named in verifier argv as @artifact:ID."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import prompt_runner
from prompt_runner.workspace.runspec import run_command
from tests.helpers.cli import cli
from tests.helpers.workspaces import default_prompts, git, make_workspace

BUILD = (
    "mkdir -p out\n"
    "printf '#!/bin/sh\\necho checked \"$@\"\\n' > out/checker\n"
    "chmod +x out/checker\n"
)


def _manifest(tmp_path: Path) -> Path:
    prompts = default_prompts()
    prompts["01"]["verify"] = {
        "files_exist": ["one.txt"],
        "commands": [
            {
                "exec": "@artifact:checker",
                "args": ["--with", "@artifact:checker"],
                "stdout_contains": ["checked --with"],
            }
        ],
    }
    manifest = make_workspace(
        tmp_path,
        prompts=prompts,
        app_files={"tools/build.sh": BUILD, "tools/.gitignore": "out/\n"},
        manifest={
            "contracts": {
                "artifacts": [
                    {
                        "id": "checker",
                        "repo": "app",
                        "project": "tools",
                        "build": ["sh", "build.sh"],
                        "output": "out/checker",
                    }
                ]
            }
        },
    )
    return manifest


def test_prepare_builds_the_artifact_once_and_the_contract_runs_it(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    first = prompt_runner.prepare_workspace(manifest)
    assert any("artifact checker: built" in a for a in first.actions)
    ws = prompt_runner.load_workspace(manifest)
    installed = ws.artifact("checker").installed
    assert installed == ws.workspace_root / "artifacts" / "checker"
    assert os.access(installed, os.X_OK)
    lock = json.loads(ws.layout.lock.read_text())
    assert lock["artifacts"]["checker"]["path"] == str(installed)
    stamp = installed.stat().st_mtime_ns
    again = prompt_runner.prepare_workspace(manifest)
    assert not again.changed and installed.stat().st_mtime_ns == stamp  # not rebuilt
    assert git(ws.clone("app"), "status", "--porcelain") == ""  # the build left it clean
    cmd = run_command(ws)
    done = subprocess.run(
        cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    verified = cli("verify", "--workspace", manifest, "01", "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["pass"] is True
    # outside its workspace the reference cannot resolve: a verifier fault, said so
    bare = cli("verify", ws.packet_dir, "01")
    assert bare.returncode != 0 and "PROMPT_RUNNER_ARTIFACTS_DIR is not set" in bare.stdout


def test_a_build_that_dirties_the_clone_is_refused(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    ws = prompt_runner.load_workspace(manifest)
    (tmp_path / "author" / "app" / "tools" / ".gitignore").unlink()
    git(tmp_path / "author" / "app", "commit", "-q", "-am", "no ignore")
    git(tmp_path / "author" / "app", "push", "-q", "origin", "main")
    done = cli("workspace", "prepare", manifest)
    assert done.returncode == 3 and "left the clone" in done.stderr and "out/checker" in done.stderr
    assert not ws.artifact("checker").installed.exists()
