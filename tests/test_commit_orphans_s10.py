"""A runner killed with ``kill -9`` while a commit hook runs (session 10's gap).

Real ``prompt-runner run`` in a child, a real repo whose ``pre-commit`` hook
starts a grandchild (``sleep``) and waits on it, a real ``kill -9`` of the
runner. The committer's ``git commit`` is registered under
``.prompt_runner/agents/`` while it runs, so ``prompt-runner stop`` finds it
and ends its whole group (git, the hook, the hook's child): no commit lands
afterwards. While the orphaned git still holds ``.git/index.lock``, preflight
names its pid and never advises deleting the lock; a lock nobody holds does.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.helpers.procs import alive, wait_for

HOOK = """#!/bin/sh
sleep 300 &
echo "$$ $!" > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"
wait
"""


class Hooked:
    """A packet whose prompt 01 writes a file, in a repo whose pre-commit hook hangs."""

    def __init__(self, tmp: Path, started: list[int]) -> None:
        self.started = started
        self.pidfile = tmp / "hook.pids"
        self.packet = make_packet(
            tmp,
            {
                "01": {
                    "commit": "feat: 01",
                    "simulate": {"attempts": [{"writes": [{"path": "f01.txt", "text": "01"}]}]},
                    "verify": {"contains": [{"path": "f01.txt", "text": "01"}]},
                }
            },
        )
        self.repo = tmp / "repo"
        hook = self.repo / ".git" / "hooks" / "pre-commit"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(HOOK.format(pidfile=self.pidfile))
        hook.chmod(0o755)
        self.agents = self.packet / ".prompt_runner" / "agents"
        self.lock = self.repo / ".git" / "index.lock"

    def kill_runner_in_hook(self) -> tuple[int, list[int]]:
        """Start a run, wait for its commit's hook, ``kill -9`` the runner.

        Returns the registered ``git commit`` pid and the hook's pids (shell, sleep)."""
        runner = subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(self.packet)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert wait_for(self.pidfile.exists, 60), "the pre-commit hook never ran"
            hook_pids = [int(p) for p in self.pidfile.read_text().split()]
            self.started.extend(hook_pids)
            assert wait_for(lambda: self._records() != [], 10), "git commit was not registered"
        finally:
            runner.kill()
            runner.wait(timeout=30)
        [record] = self._records()
        assert record["kind"] == "git commit" and record["prompt_id"] == "01"
        git_pid = int(str(record["pid"]))
        self.started.append(git_pid)
        assert psutil.Process(git_pid).name().startswith("git")
        assert all(alive(p) for p in [git_pid, *hook_pids])  # its own session: spared
        return git_pid, hook_pids

    def _records(self) -> list[dict[str, object]]:
        out = []
        for path in self.agents.glob("*.json") if self.agents.is_dir() else []:
            with contextlib.suppress(OSError, ValueError):
                out.append(json.loads(path.read_text()))
        return [r for r in out if r.get("kind") == "git commit"]


def _subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_stop_ends_a_commit_a_killed_runner_left_in_its_hook(
    tmp_path: Path, started: list[int]
) -> None:
    setup = Hooked(tmp_path, started)
    git_pid, hook_pids = setup.kill_runner_in_hook()

    stopped = cli("stop", setup.packet)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "nothing to stop" not in stopped.stdout.lower(), stopped.stdout
    gone = wait_for(lambda: not any(alive(p) for p in [git_pid, *hook_pids]), 15)
    assert gone, f"survivors: {[p for p in [git_pid, *hook_pids] if alive(p)]}"
    time.sleep(0.5)  # an orphaned commit would land now
    assert "feat: 01" not in _subjects(setup.repo)
    assert not setup.lock.exists()


def test_a_lock_held_by_a_live_git_names_it_and_advises_no_delete(
    tmp_path: Path, started: list[int]
) -> None:
    setup = Hooked(tmp_path, started)
    git_pid, _ = setup.kill_runner_in_hook()
    assert setup.lock.exists()

    checked = cli("packet", "preflight", setup.packet, "--json")
    doc = json.loads(checked.stdout)
    [locked] = [e for r in doc["repos"] for e in r["errors"] if e["kind"] == "index_locked"]
    assert str(git_pid) in locked["fix"], locked
    assert "prompt-runner stop" in locked["fix"], locked
    assert "remove" not in locked["fix"] and "delete it" not in locked["fix"], locked

    assert cli("stop", setup.packet).returncode == 0
    assert wait_for(lambda: not alive(git_pid), 15)


def test_a_lock_no_live_git_holds_is_still_to_be_removed(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"commit": "feat: 01"}})
    lock = tmp_path / "repo" / ".git" / "index.lock"
    lock.write_text("")
    checked = cli("packet", "preflight", packet, "--json")
    doc = json.loads(checked.stdout)
    [locked] = [e for r in doc["repos"] for e in r["errors"] if e["kind"] == "index_locked"]
    assert f"remove {lock}" in locked["fix"], locked
