"""An output a prompt's contract names in a repo the prompt does not target is
never committed by the runner (it commits only in the prompt's targets); the
run, ``packet preflight`` and ``packet doctor`` say so instead of staying silent
(new user s12 #1: the run said completed and left ``beta:b.txt`` untracked
with no word anywhere)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet


def _packet(tmp_path: Path, targets: list[str], *, writes_beta: bool = True) -> Path:
    make_git_repo(tmp_path / "beta")
    writes = [{"path": "a.txt", "text": "A\n"}]
    if writes_beta:
        writes.append({"path": "b.txt", "text": "B\n", "repo": "beta"})
    return make_packet(
        tmp_path,
        {
            "01": {
                "targets": targets,
                "simulate": {"attempts": [{"writes": writes}]},
                "verify": {
                    "contains": [
                        {"path": "a.txt", "text": "A"},
                        {"path": "b.txt", "text": "B", "repo": "beta"},
                    ]
                },
            }
        },
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "beta": {"path": "../beta"}}
        },
    )


def test_the_run_and_preflight_say_an_untargeted_output_stays_uncommitted(tmp_path: Path) -> None:
    packet = _packet(tmp_path, ["app"])
    report = json.loads(cli("packet", "preflight", packet).stdout)
    [warning] = [w for w in report["warnings"] if w["kind"] == "output_not_targeted"]
    assert (warning["repo"], warning["path"], warning["key"]) == (
        "beta",
        "b.txt",
        "verify.contains[1]",
    )
    assert report["runtime_ready"] is True  # a warning: a contract may check another repo

    ran = cli("run", packet)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        "warning: [01] b.txt in repo 'beta' is named by its contract but 'beta' is not one "
        "of its targets, so it is left uncommitted"
    ) in ran.stdout, ran.stdout
    assert git(tmp_path / "beta", "status", "--porcelain").strip() == "?? b.txt"  # as said


def test_a_targeted_repo_is_committed_and_nothing_is_said(tmp_path: Path) -> None:
    packet = _packet(tmp_path, ["app", "beta"])
    report = json.loads(cli("packet", "preflight", packet).stdout)
    assert not [w for w in report["warnings"] if w["kind"] == "output_not_targeted"]
    ran = cli("run", packet)
    assert ran.returncode == 0 and "not one of its targets" not in ran.stdout, ran.stdout
    assert git(tmp_path / "beta", "status", "--porcelain").strip() == ""


def test_an_untargeted_file_the_prompt_only_reads_is_not_warned_at_run(tmp_path: Path) -> None:
    # a contract may check a file of a repo the prompt only reads: it is
    # committed there already, nothing is left uncommitted, so the run is quiet
    packet = _packet(tmp_path, ["app"], writes_beta=False)
    beta = tmp_path / "beta"
    (beta / "b.txt").write_text("B\n", encoding="utf-8")
    git(beta, "add", "b.txt")
    git(beta, "commit", "-q", "-m", "b")
    ran = cli("run", packet)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "✓ 01 completed" in ran.stdout and "not one of its targets" not in ran.stdout


def test_lint_warns_about_an_untargeted_output(tmp_path: Path) -> None:
    packet = _packet(tmp_path, ["app"])
    done = cli("packet", "lint", packet)
    assert done.returncode == 0, done.stdout  # a warning: the packet passes
    assert "WARNING output_not_targeted prompts/01_step.prompt.md" in done.stdout, done.stdout
    assert "add 'beta' to the prompt's `targets`" in done.stdout
    targeted = _packet(tmp_path / "t", ["app", "beta"])
    assert "output_not_targeted" not in cli("packet", "lint", targeted).stdout


def test_an_untargeted_glob_is_named_whole(tmp_path: Path) -> None:
    # new user s13: `glob: [{pattern: out/*.txt, repo: beta}]` was warned about
    # as "out in repo 'beta'", the glob's literal prefix
    make_git_repo(tmp_path / "beta")
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"glob": [{"pattern": "out/*.txt", "repo": "beta", "min": 1}]}}},
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "beta": {"path": "../beta"}}
        },
    )
    report = json.loads(cli("packet", "preflight", packet).stdout)
    [warning] = [w for w in report["warnings"] if w["kind"] == "output_not_targeted"]
    assert warning["path"] == "out/*.txt", warning
