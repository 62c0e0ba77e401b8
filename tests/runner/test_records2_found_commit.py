"""A resumed run that finds a one-repo prompt's commit after its commit was
refused says what happened to it, not that another repo failed (t6 #13)."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.runner.preverify import found_reason
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def hook(repo: Path, body: str) -> Path:
    path = repo / ".git" / "hooks" / "pre-commit"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def said_lines(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


# -- 2. a found commit of a one-repo prompt says what happened (t6 #13) --------------

UPPERCASE = (
    'for f in $(git diff --cached --name-only --diff-filter=AM); do tr a-z A-Z < "$f" '
    '> "$f.tmp" && mv "$f.tmp" "$f"; git add "$f"; done'
)


def test_a_one_repo_prompt_s_found_commit_names_no_other_repo(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "recovery": {"repair": {"max_attempts": 0}},
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]},
                "verify": {"contains": [{"path": "a.txt", "text": "Hello"}]},
            }
        },
    )
    repo = tmp_path / "repo"
    path = hook(repo, UPPERCASE)  # a formatter hook that breaks the contract
    first = cli("run", packet)
    assert first.returncode == 3, first.stdout + first.stderr
    path.unlink()  # the user fixes the hook
    again = cli("run", packet, "--remaining")
    # the hook's commit fails the contract: recorded unverified, it is never linked
    # (s11 #1), and the line says so -- naming no other repo
    refused = said_lines(again.stdout, "is not linked")
    assert len(refused) == 1, again.stdout
    assert "another repo" not in again.stdout
    assert "[01] its commit (app=" in refused[0]
    assert "was found in repo" not in again.stdout, again.stdout


def test_found_reason_names_the_repos_whose_commit_failed() -> None:
    assert found_reason(["a", "b"], {"a": "1" * 40}, True, "boom") == (
        "made before its commit in repo 'b' failed"
    )
    assert found_reason(["a"], {"a": "1" * 40}, True, "bad\nhook") == (
        "the commit was made, then the runner recorded the prompt commit_failed: bad\\x0ahook"
    )
    assert found_reason(["a"], {"a": "1" * 40}, False, None) == (
        "the runner that made it died before recording it"
    )
