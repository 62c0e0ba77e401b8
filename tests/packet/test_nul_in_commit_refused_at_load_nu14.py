"""A NUL byte in the commit message is refused at load, as a blank one is.

``commit: "feat: x\\0y"`` passed lint and plan; the session did the work, then git
refused the message ("a NUL byte in commit log message not allowed"): the prompt
was ``commit_failed`` (exit 3) with its work left staged. The default message is
``prompt-runner: <id> <name>``, so a NUL in ``name`` is refused the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


@pytest.mark.parametrize("key", ["commit", "name"])
def test_a_nul_in_the_commit_message_is_a_load_error(tmp_path: Path, key: str) -> None:
    packet = make_packet(tmp_path, {"01": {key: "feat: x\0y"}})
    with pytest.raises(UserError) as info:
        load_packet(packet)
    assert info.value.key == key
    said = str(info.value)
    assert "01_step.prompt.md" in said and "NUL byte" in said and "remove it" in said
    assert said.count("\n") == 0 and "\0" not in said


def test_run_and_lint_refuse_a_nul_commit_before_any_session(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: x\0y",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "A\n"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            }
        },
    )
    lint = cli("packet", "lint", packet)
    assert lint.returncode == 1 and "commit: holds a NUL byte" in lint.stdout, lint.stdout
    run = cli("run", packet)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "01_step.prompt.md: commit: holds a NUL byte" in run.stderr
    assert "Traceback" not in run.stderr and "Starting run" not in run.stdout
    assert not (tmp_path / "repo" / "a.txt").exists()
