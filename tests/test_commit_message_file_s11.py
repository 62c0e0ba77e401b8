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
