"""Consecutive prompts share one workspace snapshot across a commit.

After a prompt's exact commit the runner derives what ``git status`` would
say and uses it as the next session's "before" instead of asking git again.
These tests hold the derivation against real git, and check the cases where
it must not be used (commit hooks, a stale carry, another directory).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.committer import GitCommitter, read_head
from prompt_runner.runner import workspace
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def files_of(repo: Path, rev: str) -> list[str]:
    return git(repo, "show", "--no-renames", "--name-only", "--format=", rev).split()


def add_hook(repo: Path, name: str, script: str) -> None:
    hook = repo / ".git" / "hooks" / name
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\n" + script + "\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def test_the_derived_snapshot_is_what_git_reports_after_a_scoped_commit(tmp_path: Path) -> None:
    repo = make_git_repo(
        tmp_path / "repo", {"README.md": "# r\n", "old.txt": "o\n", "gone.txt": "g\n"}
    )
    repos = {"app": repo}
    # The user's own uncommitted work, which the prompt's commit must leave alone.
    (repo / "README.md").write_text("# r\nmy edit\n")
    (repo / ".env").write_text("KEY=1\n")
    # The session's work: a new file, an edit, a deletion and a staged rename.
    (repo / "src").mkdir()
    (repo / "src" / "new.py").write_text("print(1)\n")
    (repo / "gone.txt").unlink()
    git(repo, "mv", "old.txt", "renamed.txt")
    after = workspace.snapshot(repos)
    prompt_paths = {"src/new.py", "gone.txt", "renamed.txt", "old.txt"}
    assert prompt_paths <= workspace.dirty_paths(after)["app"]

    result = GitCommitter().commit(
        prompt_id="01", message="feat: 01", repos=repos, paths={"app": sorted(prompt_paths)}
    )

    assert result.ok and result.exact, result
    assert result.heads == {"app": git(repo, "rev-parse", "HEAD").strip()}
    assert sorted(files_of(repo, "HEAD")) == sorted(prompt_paths)
    derived = workspace.after_commit(after, repos, heads=result.heads, committed=result.paths)
    assert derived.snapshot == workspace.snapshot(repos)  # exactly what git now says
    assert workspace.dirty_paths(derived.snapshot) == {"app": {"README.md", ".env"}}


def test_a_commit_hook_makes_the_commit_inexact_and_its_files_stay_the_user_s(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            pid: {
                "commit": f"feat: {pid}",
                "simulate": {"attempts": [{"writes": [{"path": f"f{pid}.txt", "text": pid}]}]},
                "verify": {"files_exist": [f"f{pid}.txt"]},
            }
            for pid in ("01", "02")
        },
    )
    repo = tmp_path / "repo"
    add_hook(repo, "post-commit", 'date +%s%N > "hook-$(git rev-parse --short HEAD).txt"')
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # 02's session did not write the file 01's commit hook left: it is not 02's to commit.
    assert files_of(repo, "HEAD") == ["f02.txt"]
    assert files_of(repo, "HEAD~1") == ["f01.txt"]
    assert len(list(repo.glob("hook-*.txt"))) == 2
    assert "hook-" not in git(repo, "log", "--name-only", "--format=")


def test_the_committer_reports_hooks(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("a\n")
    plain = GitCommitter().commit(
        prompt_id="01", message="a", repos={"app": repo}, paths={"app": ["a.txt"]}
    )
    assert plain.exact
    add_hook(repo, "pre-commit", "true")
    (repo / "b.txt").write_text("b\n")
    hooked = GitCommitter().commit(
        prompt_id="02", message="b", repos={"app": repo}, paths={"app": ["b.txt"]}
    )
    assert hooked.ok and not hooked.exact
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    (repo / "c.txt").write_text("c\n")
    unscoped = GitCommitter().commit(prompt_id="03", message="c", repos={"app": repo})
    assert unscoped.ok and unscoped.exact and unscoped.paths == {"app": frozenset()}
    assert git(repo, "status", "--porcelain") == ""


def test_a_stale_or_foreign_carry_is_not_used(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    repos = {"app": repo}
    carried = workspace.Carry.now(workspace.snapshot(repos), repos)
    (repo / "later.txt").write_text("written after the carry was derived\n")

    young = workspace.snapshot(repos, carry=carried)
    assert workspace.dirty_paths(young) == {"app": set()}  # young: the carry stands in

    old = workspace.Carry(
        carried.snapshot, carried.repos, time.monotonic() - workspace.CARRY_MAX_AGE_S - 1
    )
    assert workspace.dirty_paths(workspace.snapshot(repos, carry=old)) == {"app": {"later.txt"}}
    elsewhere = workspace.snapshot({"app": repo / "sub"}, carry=carried)
    assert elsewhere["app"] is None or "later.txt" in workspace.dirty_paths(elsewhere)["app"]


@pytest.mark.parametrize(("user_file", "statuses"), [(False, 1), (True, 1 + 3)])
def test_how_often_a_run_asks_git_status(tmp_path: Path, user_file: bool, statuses: int) -> None:
    """One status for the run's foreign-changes check; then, on a clean tree, none
    (each clean session is committed whole), and with the user's uncommitted file
    present, one after each session (the carry stands in for the one before)."""
    packet = make_packet(
        tmp_path,
        {
            pid: {
                "commit": f"feat: {pid}",
                "simulate": {"attempts": [{"writes": [{"path": f"f{pid}.txt", "text": pid}]}]},
                "verify": {"files_exist": [f"f{pid}.txt"]},
            }
            for pid in ("01", "02", "03")
        },
    )
    repo = tmp_path / "repo"
    if user_file:
        (repo / "notes.txt").write_text("mine\n")
    real_git = shutil.which("git")
    assert real_git is not None
    shim_dir = tmp_path / "bin"
    shim_dir.mkdir()
    log = tmp_path / "git-calls.log"
    shim = shim_dir / "git"
    shim.write_text(  # the subcommand, after any `-C DIR` and `-c NAME=VALUE` pairs
        f'#!/bin/sh\nsub() {{ while [ "$1" = -c ] || [ "$1" = -C ]; do shift 2; done; '
        'echo "$1"; }\n'
        f'sub "$@" >> "{log}"\nexec "{real_git}" "$@"\n'
    )
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = log.read_text().split()
    assert calls.count("status") == statuses, calls
    assert calls.count("commit") == 3
    assert calls.count("maintenance") == 1  # git's auto-maintenance: once, as the run ends
    assert [files_of(repo, f"HEAD~{n}") for n in (2, 1, 0)] == [
        ["f01.txt"],
        ["f02.txt"],
        ["f03.txt"],
    ]
    assert git(repo, "status", "--porcelain") == ("?? notes.txt\n" if user_file else "")
    state = json.loads(
        subprocess.run(
            [sys.executable, "-m", "prompt_runner", "status", str(packet), "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    for pid in ("01", "02", "03"):
        assert state["prompts"][pid]["attempts"][-1]["workspace_changed"] is True


def test_a_whole_commit_of_a_session_that_changed_nothing_records_no_change(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    state = json.loads(
        subprocess.run(
            [sys.executable, "-m", "prompt_runner", "status", str(packet), "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert state["prompts"]["01"]["attempts"][-1]["workspace_changed"] is False
    assert len(git(tmp_path / "repo", "log", "--format=%H").split()) == 1  # no commit made


def test_head_is_read_from_the_ref_files_or_left_to_git(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert read_head(repo / ".git", repo / ".git") == head
    git(repo, "pack-refs", "--all")  # the branch now lives only in packed-refs
    assert read_head(repo / ".git", repo / ".git") is None
    git(repo, "checkout", "-q", "--detach")
    assert read_head(repo / ".git", repo / ".git") == head


def test_a_commit_in_a_linked_worktree_reports_the_worktree_s_head(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "side", str(tree))
    (tree / "w.txt").write_text("w\n")
    result = GitCommitter().commit(
        prompt_id="01", message="w", repos={"app": tree}, paths={"app": ["w.txt"]}
    )
    assert result.ok, result.error
    assert result.commits == {"app": git(tree, "rev-parse", "HEAD").strip()}
    assert git(repo, "rev-parse", "side").strip() == result.commits["app"]


def test_repos_sharing_a_work_tree_are_committed_together(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", {"README.md": "r\n", "docs/index.md": "d\n"})
    (repo / "a.txt").write_text("a\n")
    (repo / "docs" / "b.md").write_text("b\n")
    result = GitCommitter().commit(
        prompt_id="01",
        message="both",
        repos={"app": repo, "docs": repo / "docs"},
        paths={"app": ["a.txt"], "docs": ["docs/b.md"]},
    )
    assert result.ok, result.error
    assert sorted(files_of(repo, "HEAD")) == ["a.txt", "docs/b.md"]
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert result.commits == {"app": sha}
    assert result.heads == {"app": sha, "docs": sha}
    assert git(repo, "status", "--porcelain") == ""
