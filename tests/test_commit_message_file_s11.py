"""A runner killed while its commit's hook runs leaves no directory in $TMPDIR
(new user s11 #11: one /tmp/prompt-runner-commit-*/message.txt per kill): a
scoped commit's message file is the git directory's PROMPT_RUNNER_COMMIT_MSG,
left there by the kill and removed by the next commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.committer import MESSAGE_FILE
from tests.helpers.cli import cli
from tests.test_commit_orphans_s10 import Hooked


def test_a_kill_in_the_hook_leaves_nothing_in_tmpdir(
    tmp_path: Path, started: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    setup = Hooked(tmp_path, started)
    setup.kill_runner_in_hook()
    message = setup.repo / ".git" / MESSAGE_FILE
    assert message.read_text() == "feat: 01", "the killed commit's message is in the git dir"
    assert list(tmpdir.iterdir()) == []

    stopped = cli("stop", setup.packet)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    (setup.repo / ".git" / "hooks" / "pre-commit").unlink()
    again = cli("run", setup.packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert not message.exists()  # the next commit wrote it again and removed it
    assert list(tmpdir.iterdir()) == []


def test_an_unscoped_commit_removes_a_message_file_a_kill_left(tmp_path: Path) -> None:
    # session 12: only the next *scoped* commit removed it; a run whose every
    # later commit took every change (message on stdin) left it in .git forever.
    from prompt_runner.committer import GitCommitter
    from tests.helpers.gitrepo import make_git_repo

    repo = make_git_repo(tmp_path / "repo")
    stale = repo / ".git" / MESSAGE_FILE
    stale.write_text("feat: killed\n", encoding="utf-8")
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    result = GitCommitter().commit(prompt_id="01", message="feat: a", repos={"app": repo})
    assert result.error is None and result.commits, result
    assert not stale.exists()
