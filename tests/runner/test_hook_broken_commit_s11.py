"""A commit hook that breaks the committed work (new user s11 #1): the commit the
hook made fails the contract, so it is never the prompt's -- the closing note
must not promise that `run --remaining` records it, and a resumed run must not
record it even once the user fixed the work tree by hand."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import cli
from tests.runner.test_t6_commit_hooks import git, hello_packet, hook, record

BREAKS_STAGED = 'for f in $(git diff --cached --name-only); do echo x > "$f"; git add "$f"; done'


def test_a_commit_the_hook_broke_is_not_promised_and_never_linked(tmp_path: Path) -> None:
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, BREAKS_STAGED)
    first = cli("run", packet)
    said = first.stdout + first.stderr
    assert first.returncode == 3, said
    broken = git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "show", "HEAD:01.txt") == "x\n"
    assert "records that commit as the prompt's" not in said, said
    assert "it is not the prompt's verified work" in said, said
    assert "`git reset HEAD~1`" in said, said
    assert record(packet)["unverified_commits"] == {"app": broken}

    (repo / ".git" / "hooks" / "pre-commit").unlink()
    (repo / "01.txt").write_text("Hello\n")  # the user fixes the work by hand
    again = cli("run", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "commit_found" not in again.stdout, again.stdout
    head = git(repo, "rev-parse", "HEAD").strip()
    assert head != broken and git(repo, "rev-parse", "HEAD~1").strip() == broken
    assert git(repo, "show", "HEAD:01.txt") == "Hello\n"
    state = record(packet)
    assert state["status"] == "completed"
    assert broken not in str(state.get("commit_info")), state.get("commit_info")
