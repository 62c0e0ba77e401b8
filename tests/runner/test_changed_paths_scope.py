"""``changed_paths_only`` judges what the prompt changed since it started (issue 12.2).

Work an earlier prompt left uncommitted -- ``--no-commit``, the API's no-op
committer, ``--keep-going`` past a failed prompt -- is not the later prompt's
change, and no repair is told to revert or delete it.
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import prompt_runner
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

NO_REPAIR = {"repair": {"max_attempts": 0}}


def writes(path: str, **verify: Any) -> dict[str, Any]:
    return {
        "simulate": {"attempts": [{"writes": [{"path": path, "text": f"{path}\n"}]}]},
        "verify": {"files_exist": [path], "changed_paths_only": [path], **verify},
        "recovery": NO_REPAIR,
    }


def two_prompts(tmp_path: Path, first: dict[str, Any] | None = None) -> Path:
    return make_packet(tmp_path, {"01": first or writes("one.txt"), "02": writes("two.txt")})


def status_lines(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain", "-uall"], cwd=repo, capture_output=True, text=True
    ).stdout
    return sorted(out.splitlines())


def test_no_commit_second_prompt_is_not_blamed_for_the_first_prompt_s_files(
    tmp_path: Path,
) -> None:
    packet = two_prompts(tmp_path)
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "outside the allowed set" not in proc.stdout
    assert status_lines(tmp_path / "repo") == ["?? one.txt", "?? two.txt"]


def test_api_noop_committer_second_prompt_passes(tmp_path: Path) -> None:
    packet = two_prompts(tmp_path)
    result = prompt_runner.run(packet, stream=io.StringIO())
    assert result.exit_code == 0, result.to_dict()
    assert (tmp_path / "repo" / "one.txt").exists() and (tmp_path / "repo" / "two.txt").exists()


def test_keep_going_after_a_failed_prompt_judges_the_next_one_alone(tmp_path: Path) -> None:
    failing = writes("one.txt", contains=[{"path": "one.txt", "text": "never written"}])
    packet = two_prompts(tmp_path, failing)
    proc = cli("run", packet, "--keep-going")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "[02] completed" in proc.stdout, proc.stdout
    assert "outside the allowed set" not in proc.stdout
    # The failed prompt's file stays, uncommitted, for the user to judge.
    assert status_lines(tmp_path / "repo") == ["?? one.txt"]


def test_a_later_prompt_editing_an_earlier_prompt_s_file_is_told_to_restore_it(
    tmp_path: Path,
) -> None:
    """The clause still counts what the prompt itself did -- but a file that
    existed before it started is to be restored, never deleted."""
    second = {
        "simulate": {
            "attempts": [
                {
                    "writes": [
                        {"path": "one.txt", "text": "more\n", "append": True},
                        {"path": "two.txt", "text": "two\n"},
                    ]
                }
            ]
        },
        "verify": {"files_exist": ["two.txt"], "changed_paths_only": ["two.txt"]},
        "recovery": NO_REPAIR,
    }
    packet = make_packet(tmp_path, {"01": writes("one.txt"), "02": second})
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "changed outside the allowed set: one.txt" in proc.stdout
    assert "restore" in proc.stdout and "delete those files" not in proc.stdout
