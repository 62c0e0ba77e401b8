"""hold_locks: the packet's and the work trees' locks held for the run, released after it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import InfrastructureError, LockHeldError, StorageError
from prompt_runner.runner.locks import hold_locks, run_lock
from prompt_runner.state.lock import RunLock, process_start_time, read_pid_file
from prompt_runner.state.memstore import MemoryStore
from prompt_runner.state.store import FileStore, NullLock
from tests.helpers.packets import make_packet
from tests.helpers.run_context import console, planned


def git_dir(repo: Path) -> Path:
    out = subprocess.run(
        ["git", "rev-parse", "--absolute-git-dir"], cwd=repo, capture_output=True, text=True
    )
    return Path(out.stdout.strip())


class ClosesWith(MemoryStore):
    """An in-memory store whose close fails as a full disk does."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    def close(self) -> None:
        self.closed += 1
        raise StorageError(Path("state.json"), OSError(errno.ENOSPC, "No space left on device"))


def test_a_file_store_run_holds_run_pid_and_the_work_tree_lock(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, runtime_store="file")
    store = FileStore(p.packet.root / ".prompt_runner")
    pid_file = p.packet.root / ".prompt_runner" / "run.pid"
    repo_pid = git_dir(tmp_path / "repo") / "prompt-runner.pid"

    with hold_locks(p, store, console()) as held:
        ident = read_pid_file(pid_file)
        assert ident is not None and ident.pid == os.getpid()
        assert repo_pid.exists()
        assert [lock.path for lock in held.repo_locks] == [repo_pid]
        assert held.agents_dir == p.packet.root / ".prompt_runner" / "agents"

    assert not pid_file.exists() and not repo_pid.exists()


def test_an_in_memory_run_that_commits_takes_the_packet_lock(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, committer="git")
    lock = run_lock(p, MemoryStore())
    assert isinstance(lock, RunLock)
    assert lock.path == p.packet.root / ".prompt_runner" / "run.pid"
    no_commits = planned(tmp_path / "b", {"01": {}})
    assert isinstance(run_lock(no_commits, MemoryStore()), NullLock)


def test_a_run_without_a_lock_registers_no_agents(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}})
    with hold_locks(p, MemoryStore(), console()) as held:
        assert held.agents_dir is None and held.repo_locks == ()


def test_a_work_tree_another_run_holds_is_refused_and_nothing_stays_locked(
    tmp_path: Path,
) -> None:
    p = planned(tmp_path, {"01": {}}, runtime_store="file")
    store = FileStore(p.packet.root / ".prompt_runner")
    repo_pid = git_dir(tmp_path / "repo") / "prompt-runner.pid"
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        # The work tree's lock, held by a live process that is not this one.
        repo_pid.write_text(f"{sleeper.pid} {process_start_time(sleeper.pid)}\n")
        refused = pytest.raises(InfrastructureError, match="is in use by another run")
        with refused, hold_locks(p, store, console()):
            pytest.fail("the body must not run")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not (p.packet.root / ".prompt_runner" / "run.pid").exists()


def test_the_body_s_failure_is_reported_over_a_failing_close(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, committer="git")
    store = ClosesWith()
    with pytest.raises(KeyError, match="the body's"), hold_locks(p, store, console()):
        raise KeyError("the body's")
    assert store.closed == 1
    assert not (p.packet.root / ".prompt_runner" / "run.pid").exists()  # released anyway


def test_a_failing_close_is_raised_when_the_body_succeeded(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, committer="git")
    store = ClosesWith()
    raised = pytest.raises(StorageError, match=r"state\.json: cannot be written")
    with raised, hold_locks(p, store, console()):
        pass
    assert not (p.packet.root / ".prompt_runner" / "run.pid").exists()


def test_a_run_that_takes_no_lock_is_refused_while_a_live_run_holds_the_packet(
    tmp_path: Path,
) -> None:
    # a new user's finding: a default library run (memory store, no commits)
    # ran its session in a live CLI run's work tree, whose next commit took the
    # file as its own prompt's
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [{"delay_ms": 8000, "writes": [{"path": "a.txt", "text": "a"}]}]
                },
                "verify": {"files_exist": ["a.txt"]},
            },
            "02": {
                "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "b"}]}]},
                "verify": {"files_exist": ["b.txt"]},
            },
        },
    )
    live = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "01"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        pid_file = packet / ".prompt_runner" / "run.pid"
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists()
        with pytest.raises(LockHeldError, match="a run is already active"):
            prompt_runner.run(packet, ids="02")
        assert not (tmp_path / "repo" / "b.txt").exists()  # no session ran
    finally:
        live.terminate()
        live.wait(timeout=60)
