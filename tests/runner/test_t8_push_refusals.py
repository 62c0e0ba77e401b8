"""A push that asking again cannot fix is tried once and says why (new-user
finding t8 #8): the repo's own ``pre-push`` hook refusing it (its output
quoted), and a push remote that names no remote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from prompt_runner.runner import push
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

HOOK = (
    "#!/bin/sh\necho run >> {count}\necho 'collecting tests'\n"
    "echo 'pre-push: 3 tests failed (see test_x)' >&2\nexit 1\n"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def with_remote(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A one-prompt packet whose repo has the bare ``remote.git`` as origin."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            }
        },
    )
    repo = tmp_path / "repo"
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return packet, repo, remote


def new_commit(repo: Path) -> str:
    (repo / "new.txt").write_text("n")
    git(repo, "add", "new.txt")
    git(repo, "commit", "-q", "-m", "new")
    return git(repo, "rev-parse", "HEAD")


def test_a_pre_push_hook_refusal_runs_the_hook_once_and_quotes_it(tmp_path: Path) -> None:
    packet, repo, remote = with_remote(tmp_path)
    before = git(remote, "rev-parse", "main")
    count = tmp_path / "count"
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK.format(count=count))
    hook.chmod(0o755)
    res = cli("run", str(packet), "--push", "after_prompt")
    assert res.returncode == 0, res.stdout + res.stderr
    assert count.read_text().splitlines() == ["run"]  # not retried
    assert "the push of app failed after 1 try" in res.stdout
    assert "pre-push: 3 tests failed (see test_x)" in res.stdout
    assert git(remote, "rev-parse", "main") == before
    app = json.loads(cli("status", str(packet), "--json").stdout)["push"]["repos"]["app"]
    assert app["status"] == "failed" and app["attempts"] == 1
    assert app["error"] == (
        "git push origin main was rejected by the repo's pre-push hook "
        "(collecting tests / pre-push: 3 tests failed (see test_x))"
    )


def test_a_hook_under_core_hooks_path_is_the_one_quoted(tmp_path: Path) -> None:
    _, repo, _ = with_remote(tmp_path)
    new_commit(repo)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "pre-push").write_text(HOOK.format(count=tmp_path / "count"))
    (hooks / "pre-push").chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 and waits == []
    assert "pre-push hook (collecting tests / pre-push: 3 tests failed" in (outcome.error or "")


def test_a_push_remote_that_names_no_remote_is_tried_once(tmp_path: Path) -> None:
    _, repo, _ = with_remote(tmp_path)
    new_commit(repo)
    git(repo, "config", "branch.main.pushRemote", "nosuch")
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 and waits == []
    assert outcome.remote == "nosuch"
    error = outcome.error or ""
    assert error.startswith("git push nosuch main failed: 'nosuch' is no remote of this repo")
    assert "branch.main.pushRemote" in error


def test_a_configured_remote_gone_away_is_still_retried(tmp_path: Path) -> None:
    """Only a name that is no remote is final: origin's repository moved away
    may come back (the unreachable case)."""
    _, repo, remote = with_remote(tmp_path)
    remote.rename(tmp_path / "gone.git")
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 + len(push.BACKOFF_S)
