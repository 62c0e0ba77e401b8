"""A commit a hook changed after the contract passed is never linked on resume (new user t8 #1, #2).

The first run ends ``commit_failed`` (the commit holds what the hook made of the
work, or nothing); the user removes the hook and runs ``run --remaining``, as
the message says. That run used to find the refused commit, verify the work
tree, and record it as the prompt's (``commit_found``), leaving the verified
work uncommitted -- and with ``--push after_prompt`` push the wrong commit.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import cli
from tests.runner.test_t6_commit_hooks import UPPERCASE_STAGED, git, hello_packet, hook, record


def _resume_without_the_hook(tmp_path: Path, body: str) -> tuple[Path, Path, str, str]:
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, body)
    first = cli("run", packet)
    assert first.returncode == 3, first.stdout + first.stderr
    assert record(packet)["status"] == "commit_failed"
    refused = git(repo, "rev-parse", "HEAD")
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    again = cli("run", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    return packet, repo, refused, again.stdout


def test_a_commit_whose_staged_content_a_hook_rewrote_is_not_the_prompt_s(tmp_path: Path) -> None:
    packet, repo, refused, said = _resume_without_the_hook(tmp_path, UPPERCASE_STAGED)
    assert "commit_found" not in said
    assert "is not linked" in said
    assert git(repo, "show", "HEAD:01.txt") == "Hello\n"  # the verified work, committed
    assert git(repo, "rev-parse", "HEAD~1") == refused  # on top of the refused commit
    assert git(repo, "status", "--porcelain") == ""
    state = record(packet)
    assert state["status"] == "completed"
    assert state["commit_info"]["commits"]["app"] == git(repo, "rev-parse", "HEAD").strip()


def test_an_empty_commit_a_hook_left_is_not_the_prompt_s(tmp_path: Path) -> None:
    packet, repo, _refused, said = _resume_without_the_hook(
        tmp_path, "git rm -q --cached --ignore-unmatch 01.txt"
    )
    assert "commit_found" not in said
    assert git(repo, "show", "HEAD:01.txt") == "Hello\n"
    assert git(repo, "status", "--porcelain") == ""
    assert record(packet)["status"] == "completed"
