"""repos_clean against real repos and a bare remote (catalog E5)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prompt_runner.verifier import checklist_items, parse_contract
from tests.conftest import git
from tests.verifier.conftest import Check


@pytest.fixture
def remote(git_repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    git(git_repo, "remote", "add", "origin", str(bare))
    git(git_repo, "push", "-q", "-u", "origin", "main")
    return bare


def snapshot(repo: Path) -> tuple[str, ...]:
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "branch", "-a"),
        git(repo, "status", "--porcelain"),
        git(repo, "for-each-ref", "refs/remotes"),
    )


def test_committed_without_upstream_passes(check: Check) -> None:
    for entry in ("app", {"repo": "app"}):
        item = check({"repos_clean": [entry]}).items[0]
        assert item.passed and "no upstream" in item.details


def test_dirty_tree_fails_naming_paths(check: Check, git_repo: Path) -> None:
    (git_repo / "scratch.txt").write_text("s", encoding="utf-8")
    (git_repo / "README.md").write_text("changed", encoding="utf-8")
    item = check({"repos_clean": ["app"]}).items[0]
    assert not item.passed and item.extra["dirty_count"] == 2
    assert item.details == "uncommitted changes (2): README.md, scratch.txt; commit them"


def test_pushed_without_upstream_fails(check: Check) -> None:
    item = check({"repos_clean": [{"repo": "app", "pushed": True}]}).items[0]
    assert not item.passed
    assert "no upstream" in item.details and "pushed: true" in item.details


def test_pushed_matches_upstream(check: Check, git_repo: Path, remote: Path) -> None:
    before = snapshot(git_repo)
    item = check({"repos_clean": [{"repo": "app", "pushed": True}]}).items[0]
    head = git(git_repo, "rev-parse", "HEAD").strip()
    assert item.passed and item.extra["branch"] == "main"
    assert item.details == f"committed and pushed: HEAD {head[:7]} equals cached origin/main"
    assert snapshot(git_repo) == before


def test_local_commit_after_push_is_not_pushed(check: Check, git_repo: Path, remote: Path) -> None:
    (git_repo / "new.txt").write_text("n", encoding="utf-8")
    git(git_repo, "add", "new.txt")
    git(git_repo, "commit", "-q", "-m", "local")
    head = git(git_repo, "rev-parse", "HEAD").strip()
    item = check({"repos_clean": [{"repo": "app", "pushed": True}]}).items[0]
    assert not item.passed and "not pushed" in item.details and head[:7] in item.details
    plain = check({"repos_clean": ["app"]}).items[0]
    assert plain.passed  # committed is enough without pushed


def test_network_reads_the_remote_tip_without_fetching(
    check: Check, git_repo: Path, remote: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other-clone"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    (other / "ahead.txt").write_text("a", encoding="utf-8")
    git(other, "add", "ahead.txt")
    git(other, "commit", "-q", "-m", "ahead")
    git(other, "push", "-q", "origin", "main")
    remote_tip = git(other, "rev-parse", "HEAD").strip()
    before = snapshot(git_repo)
    cached = check({"repos_clean": [{"repo": "app", "pushed": True}]}).items[0]
    assert cached.passed  # the cached ref still equals HEAD
    item = check({"repos_clean": [{"repo": "app", "pushed": True, "network": True}]}).items[0]
    assert not item.passed and "not pushed" in item.details and remote_tip[:7] in item.details
    assert "(ls-remote)" in item.details and item.extra["remote_checked"] is True
    assert snapshot(git_repo) == before


def test_network_failure_falls_back_to_the_cached_ref(
    check: Check, git_repo: Path, remote: Path
) -> None:
    git(git_repo, "remote", "set-url", "origin", str(remote.parent / "gone.git"))
    entry = {"repo": "app", "pushed": True, "network": True, "remote_timeout_ms": 5000}
    item = check({"repos_clean": [entry]}).items[0]
    assert item.passed and item.extra["remote_checked"] is False
    assert (
        "ls-remote failed" in item.details and "so the cached origin/main was used" in item.details
    )


def test_unknown_repo_and_non_git_dir(check: Check, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    missing, not_git = check({"repos_clean": ["nope", "plain"]}, repos={"plain": plain}).items
    assert not missing.passed and missing.extra["missing_repo"] is True
    assert not not_git.passed and not_git.details == f"not a git repository: {plain}"


def test_checklist_labels() -> None:
    c = parse_contract({"repos_clean": ["app", {"repo": "docs", "pushed": True}]}, file="p.md")
    assert checklist_items(c, default_repo="app") == [
        "repo committed: app",
        "repo committed and pushed: docs",
    ]
