"""changed_paths_only against real git status."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git
from tests.helpers.gitrepo import make_git_repo
from tests.verifier.conftest import Check


def test_untracked_allowed_file_passes_with_the_default_repo(check: Check, git_repo: Path) -> None:
    (git_repo / "hello.txt").write_text("hi", encoding="utf-8")
    item = check({"changed_paths_only": ["hello.txt"]}).items[0]
    assert item.passed and item.repo == "app"
    assert item.details == "all 1 changed path(s) allowed: hello.txt"
    assert item.extra["changed"] == ["hello.txt"]


def test_no_changes_passes(check: Check) -> None:
    item = check({"changed_paths_only": ["hello.txt"]}).items[0]
    assert item.passed and item.details == "no changed paths"


def test_paths_outside_the_set_fail_and_are_named(check: Check, git_repo: Path) -> None:
    (git_repo / "hello.txt").write_text("hi", encoding="utf-8")
    (git_repo / "README.md").write_text("changed", encoding="utf-8")
    (git_repo / "deep" / "er").mkdir(parents=True)
    (git_repo / "deep" / "er" / "x.txt").write_text("x", encoding="utf-8")
    item = check({"changed_paths_only": ["hello.txt"]}, baseline={}).items[0]  # in a run
    assert not item.passed and item.verdict == "failure"
    assert item.details == (
        "changed outside the allowed set: README.md, deep/er/x.txt (allowed: hello.txt); "
        "revert those changes or delete those files"
    )
    assert item.extra["disallowed"] == ["README.md", "deep/er/x.txt"]
    outside = check({"changed_paths_only": ["hello.txt"]}).items[0]  # `verify`: no run
    assert outside.details == (
        "changed outside the allowed set: README.md, deep/er/x.txt (allowed: hello.txt); "
        "outside a run every uncommitted change counts, yours too: commit or stash your "
        "own changes, revert the prompt's"
    )


def test_directories_globs_renames_and_spaces(check: Check, git_repo: Path) -> None:
    (git_repo / "out" / "a").mkdir(parents=True)
    (git_repo / "out" / "a" / "r.json").write_text("{}", encoding="utf-8")
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "my notes.md").write_text("n", encoding="utf-8")
    git(git_repo, "mv", "README.md", "README.txt")
    report = check({"changed_paths_only": ["out/**/*.json", "docs/", "README.*"]})
    assert report.passed, report.items[0].details
    assert sorted(report.items[0].extra["changed"]) == [
        "README.md",
        "README.txt",
        "docs/my notes.md",
        "out/a/r.json",
    ]


def test_entries_are_grouped_per_repo(check: Check, git_repo: Path, tmp_path: Path) -> None:
    other = make_git_repo(tmp_path / "other")
    (other / "x.txt").write_text("x", encoding="utf-8")
    (git_repo / "a.txt").write_text("a", encoding="utf-8")
    report = check(
        {"changed_paths_only": ["a.txt", {"repo": "docs", "path": "y.txt"}]}, repos={"docs": other}
    )
    app, docs = report.items
    assert app.passed and app.repo == "app"
    assert not docs.passed and docs.repo == "docs" and "x.txt" in docs.details


def test_runner_state_is_ignored_and_subdir_repo_is_relative(check: Check, git_repo: Path) -> None:
    packet = git_repo / "packets" / "demo"
    (packet / ".prompt_runner").mkdir(parents=True)
    (packet / ".prompt_runner" / "state.json").write_text("{}", encoding="utf-8")
    (packet / "notes.md").write_text("n", encoding="utf-8")
    (git_repo / "elsewhere.txt").write_text("e", encoding="utf-8")
    report = check(
        {"changed_paths_only": [{"repo": "packet", "path": "notes.md"}]}, repos={"packet": packet}
    )
    item = report.items[0]
    assert item.passed, item.details
    assert item.extra["changed"] == ["notes.md"]


def test_not_a_git_repo_fails(check: Check, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    item = check({"changed_paths_only": ["x"]}, repos={"app": plain}).items[0]
    assert not item.passed and item.verdict == "failure"
    assert item.details == f"not a git repository: {plain}"


def test_verify_does_not_touch_the_index(check: Check, git_repo: Path) -> None:
    index = git_repo / ".git" / "index"
    before = index.stat().st_mtime_ns
    (git_repo / "README.md").write_text("# Repo\n", encoding="utf-8")  # same content, new mtime
    check({"changed_paths_only": ["x"]})
    assert index.stat().st_mtime_ns == before
