"""Preflight tells the truth about a repo path (new-user findings t6 #4, #16, #12):
a git directory is refused whatever the flags, each kind of "git sees no work
tree" gets its own fix, and ``packet preflight``/``packet doctor`` report what
``run`` refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.preflight import not_ready_error, preflight_report, refuse_git_dirs
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

WRITES_CONFIG = {
    "01": {
        "simulate": {"attempts": [{"writes": [{"path": "config", "text": "Hello\n"}]}]},
        "verify": {"files_exist": ["config"]},
    }
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def packet_at(tmp_path: Path, repo_path: str, prompts: dict[str, Any] | None = None) -> Path:
    return make_packet(
        tmp_path,
        prompts if prompts is not None else WRITES_CONFIG,
        manifest={"repos": {"app": {"path": repo_path, "default": True}}},
    )


@pytest.mark.parametrize(
    "flags",
    [[], ["--no-commit"], ["--skip-preflight"]],
)
def test_a_repo_path_at_the_git_directory_is_refused_and_names_the_work_tree(
    tmp_path: Path, flags: list[str]
) -> None:
    """``../repo/.git``: under --no-commit the session's write of ``config`` used to
    replace .git/config and the prompt completed."""
    packet = packet_at(tmp_path, "../repo/.git")
    config = (tmp_path / "repo" / ".git" / "config").read_text()
    res = cli("run", str(packet), *flags)
    assert res.returncode == 2, res.stdout + res.stderr
    said = res.stderr.strip()
    assert said.count("\n") == 0 and "Traceback" not in said
    assert "prompt_runner_packet.md: repos.app.path: repo 'app'" in said
    assert "is a git directory" in said
    assert f"path: '../repo' ({tmp_path / 'repo'})" in said
    assert (tmp_path / "repo" / ".git" / "config").read_text() == config
    assert "Starting run" not in res.stdout


def test_packet_preflight_and_doctor_refuse_a_path_inside_a_git_directory(tmp_path: Path) -> None:
    packet = packet_at(tmp_path, "../repo/.git/refs")
    for command in ("preflight", "doctor"):
        res = cli("packet", command, str(packet))
        if command == "preflight":
            assert res.returncode == 2 and "is inside the git directory" in res.stderr
            assert "path: '../repo'" in res.stderr
        else:  # doctor reads it as the packet not loading for a run
            assert res.returncode == 1 and "runtime NOT ready" in res.stdout
            assert "NOT READY: " in res.stdout and "is inside the git directory" in res.stdout
    with pytest.raises(UserError, match=r"repos\.app\.path"):
        preflight_report(packet, needs_git=False)  # whatever the run's flags
    with pytest.raises(UserError, match=r"repos\.app\.path"):
        refuse_git_dirs(load_packet(packet))  # what run checks under --skip-preflight


def test_a_bare_repository_is_refused_with_clone_advice(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    packet = packet_at(tmp_path, "../bare.git")
    res = cli("run", str(packet), "--no-commit")
    assert res.returncode == 2
    assert "is a bare git repository, which has no work tree" in res.stderr
    assert f"git clone {bare} DIR" in res.stderr
    assert not (bare / "config").read_text().startswith("Hello")


def only_error(packet: Path) -> dict[str, Any]:
    report = preflight_report(packet)
    assert report["runtime_ready"] is False
    (error,) = report["readiness_errors"]
    assert error["file"].endswith("prompt_runner_packet.md") and error["key"] == "repos.app.path"
    return error


def test_not_a_repository_at_all_keeps_the_git_init_advice(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    error = only_error(packet_at(tmp_path, "../plain", {}))
    assert (error["kind"], error["cause"]) == ("not_git_repo", "no_repo")
    assert "git init" in error["fix"]


def test_a_worktree_whose_main_repository_moved_is_told_to_repair(tmp_path: Path) -> None:
    main = make_git_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", "-b", "feat", str(tmp_path / "wt"))
    main.rename(tmp_path / "main.moved")
    error = only_error(packet_at(tmp_path, "../wt", {}))
    assert (error["kind"], error["cause"]) == ("not_git_repo", "gitfile_broken")
    assert str(tmp_path / "main" / ".git" / "worktrees" / "wt") in error["reason"]
    assert f"git worktree repair {tmp_path / 'wt'}" in error["fix"]
    assert "git init" not in error["fix"]


def test_a_repository_git_refuses_for_its_owner_is_told_safe_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_git_repo(tmp_path / "other")
    packet = packet_at(tmp_path, "../other", {})
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")  # git's own switch for this
    error = only_error(packet)
    assert (error["kind"], error["cause"]) == ("not_git_repo", "dubious_ownership")
    assert f"git config --global --add safe.directory {tmp_path / 'other'}" in error["fix"]
    failure = not_ready_error(preflight_report(tmp_path / "demo"), tmp_path / "m.md")
    assert failure is not None and "dubious ownership" in str(failure)


def merging(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("o\n")
    git(repo, "commit", "-q", "-am", "o")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("m\n")
    git(repo, "commit", "-q", "-am", "m")
    subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True)
    assert (repo / ".git" / "MERGE_HEAD").exists()


def test_preflight_doctor_and_run_agree_on_a_merge_in_progress(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    merging(tmp_path / "repo")
    pre = prompt_runner.preflight(packet)
    doc = prompt_runner.doctor(packet)
    assert pre.runtime_ready is False and doc.runtime_ready is False
    kinds = [e["kind"] for e in pre.readiness_errors]
    assert kinds == ["git_operation_in_progress"] == [e["kind"] for e in doc.readiness_errors]
    assert pre.readiness_errors[0]["reason"] == "is in the middle of a merge"
    res = cli("packet", "preflight", str(packet))
    assert res.returncode == 1 and '"runtime_ready": false' in res.stdout
    run = cli("run", str(packet))
    assert run.returncode == 2 and "is in the middle of" in run.stderr
    # --no-commit commits nothing, so neither the run nor this check minds the merge
    assert preflight_report(packet, needs_git=False)["runtime_ready"] is True


def test_preflight_and_run_agree_on_a_missing_git_identity(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    git(tmp_path / "repo", "config", "user.useConfigOnly", "true")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GIT_COMMITTER_EMAIL", "GIT_AUTHOR_EMAIL", "EMAIL")
    }
    res = cli("packet", "preflight", str(packet), env=env)
    assert res.returncode == 1 and '"kind": "no_git_identity"' in res.stdout
    run = cli("run", str(packet), env=env)
    assert run.returncode == 2 and "has no git identity" in run.stderr


def test_run_gives_the_fix_git_calls_for(tmp_path: Path) -> None:
    """``run``'s own preflight says what ``packet preflight`` says (one sentence
    from the same error), not ``git init`` for a worktree whose main repo moved."""
    main = make_git_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", "-b", "feat", str(tmp_path / "wt"))
    main.rename(tmp_path / "main.moved")
    res = cli("run", str(packet_at(tmp_path, "../wt", {"01": {"verify": {"files_exist": ["a"]}}})))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"git worktree repair {tmp_path / 'wt'}" in res.stderr
    assert "git init" not in res.stderr
