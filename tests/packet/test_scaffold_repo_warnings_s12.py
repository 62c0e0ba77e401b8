"""``packet new --repo NAME=PATH`` and ``packet add-repo`` write the packet
whatever the path holds (the repo may be made later) but warn when ``run``
would refuse it as it stands (new user s12: a path that does not exist was
accepted without a word)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo


def test_new_and_add_repo_warn_about_a_repo_run_would_refuse(tmp_path: Path) -> None:
    made = cli("packet", "new", "demo", "--repo", "app=../nowhere", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "demo" / "prompt_runner_packet.md").is_file()
    assert (
        f"warning: repo 'app' ({tmp_path.parent / 'nowhere'}) does not exist, so "
        "`prompt-runner run` would refuse it: "
    ) in made.stderr, made.stderr
    (tmp_path / "plain").mkdir()
    added = cli("packet", "add-repo", "docs", "plain", "--packet", "demo", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "warning: repo 'docs'" in added.stderr and "is not a git repository" in added.stderr
    assert "'app'" not in added.stderr  # only the repo this command named


def test_a_ready_repo_gets_no_warning(tmp_path: Path) -> None:
    make_git_repo(tmp_path / "app")
    made = cli("packet", "new", "demo", "--repo", "app=app", cwd=tmp_path)
    assert made.returncode == 0 and made.stderr == "", made.stderr
    assert cli("packet", "new", "bare", cwd=tmp_path).stderr == ""


def test_a_repo_name_refused_says_the_rule_it_breaks(tmp_path: Path) -> None:
    # new user s13 #8: "_" was refused with "use letters, digits, '_' ...", a
    # rule it seemed to meet; the first character is what it breaks
    done = cli("packet", "new", "demo", "--repo", "_app=./app", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "invalid repo name '_app'" in done.stderr
    assert "start it with a letter or digit" in done.stderr, done.stderr
