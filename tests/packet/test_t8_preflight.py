"""Preflight refuses what would stop the run's first commit (new-user t8 #7, #10):
a held ``.git/index.lock`` (the run used to spend a session, then halt), and a
cherry-pick or revert in progress gets its own ``--continue``/``--abort``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import prompt_runner
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PROMPTS = {
    "01": {
        "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]},
        "verify": {"files_exist": ["a.txt"]},
    }
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_stale_index_lock_is_not_ready_and_run_refuses_before_any_session(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    lock = tmp_path / "repo" / ".git" / "index.lock"
    lock.touch()
    pre = prompt_runner.preflight(packet)
    doc = prompt_runner.doctor(packet)
    assert pre.runtime_ready is False and doc.runtime_ready is False
    kinds = [e["kind"] for e in pre.readiness_errors]
    assert kinds == ["index_locked"] == [e["kind"] for e in doc.readiness_errors]
    first = pre.readiness_errors[0]
    assert str(lock) in first["reason"] and "another git process" in first["reason"]
    assert f"remove {lock}" in first["fix"]
    res = cli("packet", "preflight", str(packet))
    assert res.returncode == 1 and '"kind": "index_locked"' in res.stdout
    run = cli("run", str(packet))
    said = run.stderr.strip()
    assert run.returncode == 2, run.stdout + run.stderr
    assert said.count("\n") == 0 and "Traceback" not in said
    assert "repos.app.path" in said and str(lock) in said
    assert "session" not in run.stdout and "attempt" not in run.stdout
    assert not (tmp_path / "repo" / "a.txt").exists()
    # once the lock is gone, the repo is ready again
    lock.unlink()
    assert prompt_runner.preflight(packet).runtime_ready is True


def picking(repo: Path, command: str) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("o\n")
    git(repo, "commit", "-q", "-am", "o")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("m\n")
    git(repo, "commit", "-q", "-am", "m")
    target = "other" if command == "cherry-pick" else "HEAD~0"
    if command == "revert":
        (repo / "README.md").write_text("n\n")
        git(repo, "commit", "-q", "-am", "n")
        target = "HEAD~1"
    subprocess.run(["git", command, target], cwd=repo, capture_output=True)


def test_a_cherry_pick_in_progress_gets_its_own_abort(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    picking(tmp_path / "repo", "cherry-pick")
    assert (tmp_path / "repo" / ".git" / "CHERRY_PICK_HEAD").exists()
    run = cli("run", str(packet))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "in the middle of a cherry-pick" in run.stderr
    assert "git cherry-pick --continue" in run.stderr
    assert "git cherry-pick --abort" in run.stderr
    assert "git merge --abort" not in run.stderr and "git rebase" not in run.stderr


def test_a_revert_in_progress_gets_its_own_abort(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    picking(tmp_path / "repo", "revert")
    assert (tmp_path / "repo" / ".git" / "REVERT_HEAD").exists()
    fix = prompt_runner.preflight(packet).readiness_errors[0]["fix"]
    assert "git revert --abort" in fix and "git merge" not in fix
