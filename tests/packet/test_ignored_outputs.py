"""``packet lint`` and ``packet preflight`` warn when a prompt's contract names
an output its repo's git ignores: the runner's commit never includes it, so the
prompt completed "(verifier; no_changes)" with nothing committed and no word
anywhere (a new user's finding). Real repos, real ``git check-ignore``, the
real CLI in subprocesses.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _packet(tmp_path: Path, verify: dict[str, object], ignore: str) -> Path:
    packet = make_packet(tmp_path, {"01": {"verify": verify}})
    repo = tmp_path / "repo"
    (repo / ".gitignore").write_text(ignore, encoding="utf-8")
    _git(repo, "add", ".gitignore")
    _git(repo, "commit", "-qm", "ignore")
    return packet


def test_lint_and_preflight_warn_about_an_ignored_output(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        {
            "files_exist": ["README.md", "out.txt"],
            "contains": [{"path": "build/x.txt", "text": "x"}],
        },
        "out.txt\nbuild/\n",
    )
    lint = cli("packet", "lint", packet, "--json")
    assert lint.returncode == 0, lint  # a warning: the packet still runs
    found = [f for f in json.loads(lint.stdout)["findings"] if f["kind"] == "output_ignored"]
    assert [(f["severity"], f["prompt_id"]) for f in found] == [("warning", "01")] * 2
    assert (
        "names out.txt as an output, but repo 'app' ignores it (.gitignore:1: out.txt)"
        in (found[0]["message"])
    )
    assert (
        "names build/x.txt" in found[1]["message"] and ".gitignore:2: build/" in found[1]["message"]
    )

    pre = cli("packet", "preflight", packet)
    assert pre.returncode == 0, pre
    warned = [w for w in json.loads(pre.stdout)["warnings"] if w["kind"] == "output_ignored"]
    assert [(w["key"], w["path"], w["repo"]) for w in warned] == [
        ("verify.files_exist[1]", "out.txt", "app"),
        ("verify.contains[0]", "build/x.txt", "app"),
    ]


def test_a_tracked_file_a_negated_pattern_and_a_files_absent_path_are_not_warned(
    tmp_path: Path,
) -> None:
    packet = _packet(
        tmp_path,
        {"files_exist": ["old.log", "logs/keep.log"], "files_absent": ["tmp.log"]},
        "*.log\n!logs/keep.log\n",
    )
    repo = tmp_path / "repo"
    (repo / "old.log").write_text("old\n", encoding="utf-8")
    _git(repo, "add", "-f", "old.log")  # tracked though ignored: git commits its changes
    _git(repo, "commit", "-qm", "old log")
    lint = cli("packet", "lint", packet, "--json")
    assert [f for f in json.loads(lint.stdout)["findings"] if f["kind"] == "output_ignored"] == []
    pre = json.loads(cli("packet", "preflight", packet).stdout)
    assert [w for w in pre["warnings"] if w["kind"] == "output_ignored"] == []


def test_no_warning_when_nothing_is_committed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"files_exist": ["out.txt"]}}}, manifest={"committer": "noop"}
    )
    (tmp_path / "repo" / ".gitignore").write_text("out.txt\n", encoding="utf-8")
    lint = cli("packet", "lint", packet, "--json")
    assert lint.returncode == 0, lint
    assert json.loads(lint.stdout)["no_commit"] is True
    assert [f for f in json.loads(lint.stdout)["findings"] if f["kind"] == "output_ignored"] == []


def test_a_run_whose_ignored_output_leaves_nothing_to_commit_says_so(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "out.txt", "text": "x"}]}]},
                "verify": {"files_exist": ["out.txt"]},
            },
            "02": {
                "simulate": {"attempts": [{"writes": [{"path": "kept.txt", "text": "k"}]}]},
                "verify": {"files_exist": ["kept.txt"]},
            },
        },
    )
    repo = tmp_path / "repo"
    (repo / ".gitignore").write_text("out.txt\n", encoding="utf-8")
    _git(repo, "add", ".gitignore")
    _git(repo, "commit", "-qm", "ignore")
    res = cli("run", packet)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    warned = [line for line in lines if "which repo 'app' ignores" in line]
    assert len(warned) == 1, res.stdout  # prompt 01 only: 02 committed
    assert warned[0].startswith("warning: prompt 01: verify.files_exist[0] names out.txt")
    assert "✓ 01 completed (verifier; no_changes)" in res.stdout
