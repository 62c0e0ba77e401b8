"""The next run after a runner killed with ``kill -9`` in a commit hook (session 11's gap).

``test_commit_orphans_s10`` covers ``prompt-runner stop``; this covers the other
way the README offers: ``prompt-runner run PACKET --remaining`` straight away.
Real ``prompt-runner run`` in a child, a real repo whose ``pre-commit`` hook
(the first time it runs) starts a grandchild (``sleep``) and waits on it, a real
``kill -9`` of the runner while the hook waits. The orphaned ``git commit``
still holds ``.git/index.lock``; the next run must end it -- git, the hook and
the hook's child -- before anything of it (preflight included) meets that lock,
no stray commit may land, and the resumed run then completes prompt 01 with
exactly one commit for it.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from prompt_runner import api
from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.helpers.procs import alive, wait_for

HOOK = """#!/bin/sh
# The first commit waits in its hook (the runner is killed there); later ones pass.
[ -f "{hung}" ] && exit 0
touch "{hung}"
sleep 300 &
echo "$$ $!" > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"
wait
"""


def _packet(tmp: Path) -> tuple[Path, Path, Path]:
    """The packet (prompt 01 writes ``f01.txt``), its repo with the hook, the hook's pid file."""
    pidfile = tmp / "hook.pids"
    packet = make_packet(
        tmp,
        {
            "01": {
                "commit": "feat: 01",
                "simulate": {"attempts": [{"writes": [{"path": "f01.txt", "text": "01"}]}]},
                "verify": {"contains": [{"path": "f01.txt", "text": "01"}]},
            }
        },
    )
    repo = tmp / "repo"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK.format(pidfile=pidfile, hung=tmp / "hook.hung"))
    hook.chmod(0o755)
    return packet, repo, pidfile


def _commit_records(packet: Path) -> list[dict[str, Any]]:
    agents = packet / ".prompt_runner" / "agents"
    out = []
    for path in agents.glob("*.json") if agents.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            out.append(json.loads(path.read_text()))
    return [r for r in out if r.get("kind") == "git commit"]


def _kill_runner_in_hook(packet: Path, pidfile: Path, started: list[int]) -> list[int]:
    """Start a run, wait for its commit's hook, ``kill -9`` the runner; the orphans' pids
    (the registered git, the hook's shell, its sleep)."""
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for(pidfile.exists, 60), "the pre-commit hook never ran"
        hook_pids = [int(p) for p in pidfile.read_text().split()]
        started.extend(hook_pids)
        assert wait_for(lambda: _commit_records(packet) != [], 10), "git commit not registered"
    finally:
        runner.kill()
        runner.wait(timeout=30)
    [record] = _commit_records(packet)
    assert record["kind"] == "git commit" and record["prompt_id"] == "01"
    current = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())
    assert record["run_id"] == current["run_id"]  # the killed run's, named when it is stopped
    git_pid = int(record["pid"])
    started.append(git_pid)
    assert psutil.Process(git_pid).name().startswith("git")
    orphans = [git_pid, *hook_pids]
    assert all(alive(p) for p in orphans)  # its own session: the kill spared them
    return orphans


def _subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_run_remaining_ends_an_orphaned_commit_then_completes_the_prompt(
    tmp_path: Path, started: list[int]
) -> None:
    packet, repo, pidfile = _packet(tmp_path)
    orphans = _kill_runner_in_hook(packet, pidfile, started)
    lock = repo / ".git" / "index.lock"
    assert lock.exists()  # the orphaned scoped commit holds it
    assert _subjects(repo) == ["initial"]

    resumed = cli("run", packet, "--remaining")
    said = resumed.stdout + resumed.stderr

    assert not any(alive(p) for p in orphans), (
        f"survivors: {[p for p in orphans if alive(p)]}\n{said}"
    )
    assert resumed.returncode == 0, said
    stopped = f"warning: stopped git commit pid {orphans[0]} (prompt 01, run 20"
    assert stopped in said, said  # the run says what it stopped, before it resumes
    assert said.index(stopped) < said.index("Resuming run"), said
    assert "index.lock" not in said, said  # neither preflight nor the commit met the lock
    time.sleep(0.5)  # an orphaned commit would land now
    assert _subjects(repo) == ["feat: 01", "initial"]
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["f01.txt"]
    assert git(repo, "status", "--porcelain") == ""
    assert not lock.exists()
    assert _commit_records(packet) == []
    head = git(repo, "rev-parse", "HEAD").strip()
    assert "✓ 01" in said and head in said, said  # the prompt's line names its commit
    record = api.status(packet)["prompts"]["01"]
    assert record["status"] == "completed", record
    progress = (packet / ".prompt_runner" / "progress.log").read_text().splitlines()
    assert (
        [line for line in progress if line.startswith("01:completed")]
        == [line for line in progress if head in line]
        != []
    ), progress
