"""A child that finishes while something it started holds its output pipes: a
verify command that starts a daemon (``sleep 20 & echo started``), a commit
hook that leaves a background job. The command finished when its leader did;
the leftover is ended, not waited for, and never turns the verdict into a
timeout (new user t5, #10). Real runs, real git, real processes."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psutil

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def sleepers(tag: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if proc.info["cmdline"] and tag in " ".join(proc.info["cmdline"]):
            found.append(proc)
    return found


def test_a_verify_command_that_leaves_a_daemon_holding_stdout_passes_in_time(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a\n"}]}]},
                "verify": {
                    "commands": [
                        {
                            "exec": "sh",
                            "args": ["-c", "sleep 21.5 & echo started; exit 0"],
                            "timeout_ms": 8000,
                        }
                    ]
                },
            }
        },
    )
    began = time.monotonic()
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - began < 8  # the command's own timeout was never reached
    state = json.loads((packet / ".prompt_runner" / "state.json").read_text())
    assert state["prompts"]["01"]["status"] == "completed"
    assert sleepers("sleep 21.5") == []  # what it left behind was ended


def test_a_commit_hook_that_leaves_a_background_job_does_not_hold_the_commit(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: 01",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a\n"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            }
        },
    )
    repo = tmp_path / "repo"
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nsleep 22.5 &\necho notified\n")
    hook.chmod(0o755)
    began = time.monotonic()
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - began < 15
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert log.stdout == "feat: 01\n"
    assert sleepers("sleep 22.5") == []
