"""``push.default=nothing``: plain ``git push`` pushes nothing, so the runner
refuses too, before any try (new-user finding t8 #9)."""

from __future__ import annotations

import json
from pathlib import Path

from prompt_runner.runner import push
from tests.runner.test_t8_push_refusals import cli, git, new_commit, with_remote


def test_push_default_nothing_is_refused_before_any_try(tmp_path: Path) -> None:
    packet, repo, remote = with_remote(tmp_path)
    git(repo, "checkout", "-q", "-b", "my-feature", "origin/main")
    git(repo, "config", "push.default", "nothing")
    res = cli("run", str(packet), "--push", "after_prompt")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the push of app failed after 0 tries: push.default is 'nothing'" in res.stdout
    assert git(remote, "branch", "--format=%(refname:short)").splitlines() == ["main"]
    app = json.loads(cli("status", str(packet), "--json").stdout)["push"]["repos"]["app"]
    assert app["status"] == "failed" and app["attempts"] == 0
    assert "set push.default to 'simple' or 'current'" in app["error"]


def test_push_default_nothing_with_the_remotes_own_refspec_pushes(tmp_path: Path) -> None:
    """git pushes ``remote.<r>.push`` refspecs whatever push.default says."""
    _, repo, remote = with_remote(tmp_path)
    head = new_commit(repo)
    git(repo, "config", "push.default", "nothing")
    git(repo, "config", "remote.origin.push", "refs/heads/main:refs/heads/main")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert outcome.ok and git(remote, "rev-parse", "main") == head
