"""A commit a hook filled with the user's own changes, kept by the user as the
message allows: the resumed run says truthfully what becomes of the prompt.

The refused commit holds the prompt's work and the user's; ``run --remaining``
does not link it (it is not the prompt's verified work alone), verifies the
work tree again, and -- the work being committed already -- records the prompt
completed without a commit of its own. The line it prints used to promise only
the work "committed on top", which never happened."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import cli
from tests.runner.test_t6_commit_hooks import git, hello_packet, hook, record


def test_a_kept_swept_commit_is_not_promised_a_commit_on_top(tmp_path: Path) -> None:
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, "git add -u")
    (repo / "README.md").write_text("user WIP, not ready\n")
    first = cli("run", packet)
    assert first.returncode == 3, first.stdout + first.stderr
    kept = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".git" / "hooks" / "pre-commit").unlink()

    again = cli("run", packet, "--remaining")
    said = again.stdout + again.stderr
    assert again.returncode == 0, said
    assert "is not linked" in said, said
    assert "if you kept that commit, nothing new is committed" in said, said
    assert git(repo, "rev-parse", "HEAD").strip() == kept  # nothing new: the work is in it
    assert git(repo, "status", "--porcelain") == ""
    state = record(packet)
    assert state["status"] == "completed"
    assert "01 already satisfies its contract" in said, said
