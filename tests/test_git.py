"""Read-only git helpers against real repos."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prompt_runner import git as g
from tests.conftest import git


def test_status_lists_untracked_files_renames_and_spaces(git_repo: Path) -> None:
    (git_repo / "dir" / "sub").mkdir(parents=True)
    (git_repo / "dir" / "sub" / "a b.txt").write_text("x", encoding="utf-8")
    git(git_repo, "mv", "README.md", "READ ME.md")
    entries = g.porcelain_status(git_repo)
    assert {(e.code, e.path, e.orig_path) for e in entries} == {
        ("R ", "READ ME.md", "README.md"),
        ("??", "dir/sub/a b.txt", None),
    }


def test_head_branch_count_and_prefix(git_repo: Path) -> None:
    assert g.head_sha(git_repo) == git(git_repo, "rev-parse", "HEAD").strip()
    assert g.current_branch(git_repo) == "main"
    assert g.commit_count(git_repo) == 1
    (git_repo / "sub").mkdir()
    assert g.show_prefix(git_repo / "sub") == "sub/"
    assert g.show_prefix(git_repo) == ""
    assert g.is_git_repo(git_repo) and g.is_git_repo(git_repo / "sub")


def test_empty_and_non_repos(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    assert g.head_sha(empty) is None and g.commit_count(empty) == 0 and g.upstream(empty) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not g.is_git_repo(plain) and not g.is_git_repo(tmp_path / "missing")


def test_upstream_and_ls_remote(git_repo: Path, tmp_path: Path) -> None:
    assert g.upstream(git_repo) is None
    bare = tmp_path / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(git_repo, "remote", "add", "origin", str(bare))
    git(git_repo, "push", "-q", "-u", "origin", "main")
    up = g.upstream(git_repo)
    head = g.head_sha(git_repo)
    assert up == g.Upstream(
        "refs/remotes/origin/main", "origin/main", "origin", "refs/heads/main", head
    )
    assert g.ls_remote(git_repo, "origin", "refs/heads/main") == g.RemoteTip(head)
    missing = g.ls_remote(git_repo, "origin", "refs/heads/nope")
    assert missing.sha is None and missing.error == "refs/heads/nope not found on origin"
    gone = g.ls_remote(git_repo, str(tmp_path / "gone.git"), "refs/heads/main", timeout_ms=5000)
    assert gone.sha is None and (gone.error or "").startswith("ls-remote failed")


def test_read_only_calls_take_paths_literally(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("*.txt", "a.txt", "[ab].md", "a.md"):
        (git_repo / name).write_text("x\n", encoding="utf-8")
    git(git_repo, "add", "-A")
    monkeypatch.setenv("GIT_GLOB_PATHSPECS", "1")  # git refuses it next to the literal pin
    res = g.run_git(git_repo, "ls-files", "-z", "--", "*.txt", "[ab].md")
    assert res.ok, res.stderr
    assert sorted(res.stdout.strip("\0").split("\0")) == ["*.txt", "[ab].md"]


def test_the_committer_commits_literal_paths_whatever_the_user_s_pathspec_settings(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prompt_runner.committer import GitCommitter

    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    seen = git_repo.parent / "hook-env.txt"
    hook.write_text(f'#!/bin/sh\nenv | grep PATHSPECS > "{seen}"\nexit 0\n')
    hook.chmod(0o755)
    for name in ("Pages[ID].tsx", "pages[id].tsx", "pagesi.tsx", ":(glob)x", "x"):
        (git_repo / name).write_text("x\n", encoding="utf-8")
    monkeypatch.setenv("GIT_ICASE_PATHSPECS", "1")
    result = GitCommitter().commit(
        prompt_id="01",
        message="m",
        repos={"app": git_repo},
        paths={"app": ["pages[id].tsx", ":(glob)x"]},
    )
    assert result.ok, result.error
    shown = git(git_repo, "show", "-z", "--name-only", "--format=", "HEAD").strip("\0\n")
    assert sorted(shown.split("\0")) == [":(glob)x", "pages[id].tsx"]
    # The hook's own git calls keep ordinary pathspec matching: nothing was forced on it.
    assert "GIT_LITERAL_PATHSPECS" not in seen.read_text()


def test_a_held_index_lock_is_named_with_what_to_do(git_repo: Path) -> None:
    from prompt_runner.committer import GitCommitter

    (git_repo / "a.txt").write_text("a\n", encoding="utf-8")
    lock = git_repo / ".git" / "index.lock"
    lock.write_text("")
    result = GitCommitter(lock_wait_s=0.3).commit(
        prompt_id="01", message="m", repos={"app": git_repo}, paths={"app": ["a.txt"]}
    )
    assert not result.ok
    assert result.error is not None
    assert f"{lock} exists: another git process is working in this repository" in result.error
    assert "delete that file and run again" in result.error
    assert git(git_repo, "status", "--porcelain") == "?? a.txt\n"


def test_a_rejecting_hook_s_output_is_the_commit_error(git_repo: Path) -> None:
    from prompt_runner.commit_errors import HOOK_OUTPUT_LINES
    from prompt_runner.committer import GitCommitter

    hook = git_repo / ".git" / "hooks" / "commit-msg"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\nfor i in $(seq 1 60); do echo "line $i"; done\nexit 1\n')
    hook.chmod(0o755)
    (git_repo / "a.txt").write_text("a\n", encoding="utf-8")
    result = GitCommitter().commit(
        prompt_id="01", message="m", repos={"app": git_repo}, paths={"app": ["a.txt"]}
    )
    assert result.error is not None
    assert result.error.startswith(
        "app: the commit-msg hook rejected the commit (git commit exit 1"
    )
    assert "line 60" in result.error and "line 20\n" not in result.error
    assert f"[{60 - HOOK_OUTPUT_LINES} earlier lines cut]" in result.error


def test_a_workspace_snapshot_names_its_parts(git_repo: Path) -> None:
    from prompt_runner.runner import workspace

    (git_repo / "new.txt").write_text("four", encoding="utf-8")
    snap = workspace.snapshot({"app": git_repo})["app"]
    assert isinstance(snap, g.RepoSnapshot)
    assert snap.head == git(git_repo, "rev-parse", "HEAD").strip()
    (row,) = snap.rows
    assert isinstance(row, g.StatusRow)
    assert (row.code, row.path, row.size) == ("?", "new.txt", 4)
    assert row.mtime_ns == (git_repo / "new.txt").stat().st_mtime_ns
    # Still a plain tuple underneath: equal snapshots compare equal either way.
    assert snap == (snap.head, (("?", "new.txt", 4, row.mtime_ns),))
