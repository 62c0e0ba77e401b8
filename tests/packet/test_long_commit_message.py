"""A prompt's ``commit:`` message of any length reaches git (it is not an argv word)."""

from __future__ import annotations

from pathlib import Path

from prompt_runner import api
from tests.conftest import git
from tests.helpers.packets import make_packet


def test_a_commit_message_longer_than_an_argument_may_be_is_committed(tmp_path: Path) -> None:
    # Linux caps one argv word at 128 KiB: `git commit -m MESSAGE` failed with E2BIG
    message = "docs: hello\n\n" + "x" * 300_000
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": message,
                "verify": {"files_exist": ["hello.txt"]},
                "simulate": {"attempts": [{"writes": [{"path": "hello.txt", "text": "hi"}]}]},
            }
        },
    )
    result = api.run(packet, committer="git")
    assert result.exit_code == 0, result.message
    assert git(tmp_path / "repo", "log", "-1", "--format=%B").rstrip("\n") == message
