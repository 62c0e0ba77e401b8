"""``push: after_prompt``: each committed prompt's branch goes to its remote, a bare
repository on disk; a rejected push keeps the local commit and is visible in
``status --json`` and in the next watch sample."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.runner import push
from tests.helpers.packets import make_packet

REJECT = '#!/bin/sh\necho "policy: the remote is frozen for the release" >&2\nexit 1\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def writes(*names: str) -> dict[str, dict[str, Any]]:
    return {
        f"{n:02d}": {
            "simulate": {"attempts": [{"writes": [{"path": f"{name}.txt", "text": name}]}]},
            "verify": {"files_exist": [f"{name}.txt"]},
        }
        for n, name in enumerate(names, start=1)
    }


def with_remote(tmp_path: Path, prompts: dict[str, dict[str, Any]]) -> tuple[Path, Path, Path]:
    """A packet whose repo ``app`` has the bare repository ``remote.git`` as origin."""
    packet = make_packet(tmp_path, prompts)
    repo = tmp_path / "repo"
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return packet, repo, remote


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args], capture_output=True, text=True, timeout=120
    )


def test_each_committed_prompt_lands_on_the_remote(tmp_path: Path) -> None:
    packet, repo, remote = with_remote(tmp_path, writes("a", "b", "c"))
    on_remote: dict[str, tuple[str, str]] = {}

    def completed(prompt_id: str, record: dict[str, Any]) -> None:
        # the push ran before the prompt is reported completed
        on_remote[prompt_id] = (git(remote, "rev-parse", "main"), git(repo, "rev-parse", "HEAD"))

    result = prompt_runner.run(
        packet,
        committer="git",
        runtime_store="file",
        push="after_prompt",
        on_prompt_completed=completed,
    )
    assert result.status == "completed"
    assert list(on_remote) == ["01", "02", "03"]
    assert all(theirs == ours for theirs, ours in on_remote.values())
    assert len({ours for _, ours in on_remote.values()}) == 3  # one new commit each time
    assert git(remote, "log", "--format=%s", "main").splitlines()[:3] == [
        "prompt-runner: 03 Step 03",
        "prompt-runner: 02 Step 02",
        "prompt-runner: 01 Step 01",
    ]
    state = prompt_runner.status(packet)
    assert state["push"]["status"] == "ok" and state["push"]["failed"] == []
    app = state["push"]["repos"]["app"]
    assert app["status"] == "pushed" and app["remote"] == "origin" and app["branch"] == "main"
    assert app["head"] == git(repo, "rev-parse", "HEAD") and app["prompt_id"] == "03"
    assert state["prompts"]["01"]["push"]["repos"]["app"]["attempts"] == 1


def test_without_the_option_nothing_is_pushed(tmp_path: Path) -> None:
    packet, repo, remote = with_remote(tmp_path, writes("a"))
    before = git(remote, "rev-parse", "main")
    assert prompt_runner.run(packet, committer="git", runtime_store="file").status == "completed"
    assert git(remote, "rev-parse", "main") == before != git(repo, "rev-parse", "HEAD")
    assert "push" not in prompt_runner.status(packet)


def test_a_rejecting_remote_keeps_the_commit_and_says_so_in_status_and_watch(
    tmp_path: Path,
) -> None:
    packet, repo, remote = with_remote(tmp_path, writes("a", "b"))
    before = git(remote, "rev-parse", "main")
    hook = remote / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(REJECT)
    hook.chmod(0o755)
    res = cli("run", str(packet), "--push", "after_prompt")
    assert res.returncode == 0, res.stdout + res.stderr  # every prompt completed
    assert "the push of app failed after 1 try" in res.stdout  # rejected: not retried
    assert "policy: the remote is frozen for the release" in res.stdout
    assert git(remote, "rev-parse", "main") == before  # nothing reached it
    log = git(repo, "log", "--format=%s").splitlines()
    assert log[:2] == ["prompt-runner: 02 Step 02", "prompt-runner: 01 Step 01"]  # kept

    status = json.loads(cli("status", str(packet), "--json").stdout)
    assert [status["prompts"][p]["status"] for p in ("01", "02")] == ["completed", "completed"]
    pushed = status["push"]
    assert pushed["status"] == "failed" and pushed["failed"] == ["app"]
    app = pushed["repos"]["app"]
    assert app["status"] == "failed" and app["head"] == git(repo, "rev-parse", "HEAD")
    assert "rejected: [remote rejected] (pre-receive hook declined)" in app["error"]
    assert "policy: the remote is frozen" in app["error"]
    human = cli("status", str(packet)).stdout
    assert "Push: FAILED for app (the commits are local)" in human

    watched = cli("watch", str(packet), "--for", "1s", "--every", "1s", "--json")
    sample = json.loads(watched.stdout.splitlines()[0])
    assert sample["push"]["status"] == "failed" and sample["push"]["failed"] == ["app"]
    assert sample["push"]["repos"]["app"]["error"] == app["error"]
    line = cli("watch", str(packet), "--for", "1s", "--every", "1s").stdout.splitlines()[0]
    assert " push=failed " in line

    # the remote opens again: the next prompt's push sends both earlier commits too
    hook.unlink()
    (packet / "prompts" / "03_step.prompt.md").write_text(
        '---\nid: "03"\nphase: 1\nname: Step 03\ntargets: [app]\nsimulate:\n  attempts:\n'
        "  - writes:\n    - {path: c.txt, text: c}\nverify:\n  files_exist: [c.txt]\n---\nc\n"
    )
    res = cli("run", str(packet), "--remaining", "--push", "after_prompt")
    assert res.returncode == 0, res.stdout + res.stderr
    assert git(remote, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")
    status = json.loads(cli("status", str(packet), "--json").stdout)
    assert status["push"]["status"] == "ok" and status["push"]["failed"] == []


def test_an_unreachable_remote_is_retried_with_backoff(tmp_path: Path) -> None:
    """git could not reach the remote (here: it is moved away); the retry after the
    first backoff finds it back and pushes."""
    _, repo, remote = with_remote(tmp_path, {})
    (repo / "new.txt").write_text("n")
    git(repo, "add", "new.txt")
    git(repo, "commit", "-q", "-m", "new")
    away = tmp_path / "away.git"
    remote.rename(away)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            away.rename(remote)

    outcome = push.push_repo(repo, sleep=sleep)
    assert outcome.ok and outcome.attempts == 3
    assert waits == list(push.BACKOFF_S[:2])
    assert git(remote, "rev-parse", "main") == git(repo, "rev-parse", "HEAD")


def test_a_remote_that_stays_away_fails_after_every_try(tmp_path: Path) -> None:
    _, repo, remote = with_remote(tmp_path, {})
    remote.rename(tmp_path / "gone.git")
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 + len(push.BACKOFF_S)
    assert waits == list(push.BACKOFF_S)
    assert outcome.error is not None and outcome.error.startswith("git push origin main failed: ")
    assert "does not appear to be a git repository" in outcome.error


@pytest.mark.parametrize("case", ["detached", "no_remote"])
def test_nothing_to_push_to_is_a_failure_that_says_why(tmp_path: Path, case: str) -> None:
    packet, repo, _ = with_remote(tmp_path, writes("a"))
    if case == "detached":
        git(repo, "checkout", "-q", "--detach")
        said = "HEAD is detached"
    else:
        git(repo, "remote", "remove", "origin")
        said = "no remote to push to"
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert not outcome.ok and outcome.attempts == 0 and said in (outcome.error or "")
    del packet
