"""``--no-commit`` with ``--committer git`` is a contradiction (exit 2, one
sentence naming both flags); the command line over the manifest's
``committer`` is a choice; ``--push after_prompt`` with no runner commits is a
documented combination (a workspace's ``mode: session``) that the CLI names."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


@pytest.fixture
def packet(tmp_path: Path) -> Path:
    return make_packet(tmp_path, {"01": {}})


def test_no_commit_with_committer_git_is_refused_naming_both(packet: Path, pr: PR) -> None:
    result = pr("run", packet, "--no-commit", "--committer", "git")
    assert result.code == 2, result.err
    line = result.err.strip()
    assert line.count("\n") == 0 and "Traceback" not in line
    assert "--no-commit" in line and "--committer git" in line and "contradict" in line
    assert "drop --no-commit" in line
    assert not (packet / ".prompt_runner").exists()  # refused before anything ran
    assert pr("plan", packet, "--committer", "git", "--no-commit").code == 2


def test_the_library_refuses_it_too(packet: Path) -> None:
    with pytest.raises(UserError, match=r"no_commit=True.*committer='git'.*contradict"):
        api.plan(packet, no_commit=True, committer="git")
    with pytest.raises(UserError, match="contradict"):
        api.run(packet, no_commit=True, committer="git")


def test_no_commit_over_the_manifest_committer_is_a_choice(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"committer": "git"})
    with pytest.raises(UserError, match="contradict"):
        api.plan(packet, no_commit=True, committer="git")
    assert api.plan(packet, no_commit=True).committer == "noop"
    assert api.plan(packet, no_commit=True, committer="noop").committer == "noop"
    assert api.plan(packet, committer="git").committer == "git"


def test_push_with_no_runner_commits_is_said(packet: Path, pr: PR) -> None:
    result = pr("plan", packet, "--committer", "noop", "--push", "after_prompt")
    assert result.code == 0, result.err
    assert "--push after_prompt with --committer noop: the runner commits nothing" in result.err
    result = pr("run", packet, "--no-commit", "--push", "after_prompt", "--dry-run")
    assert result.code == 0, result.err
    assert "--push after_prompt with --no-commit" in result.err
    assert "after_prompt with" not in pr("plan", packet, "--push", "after_prompt").err
