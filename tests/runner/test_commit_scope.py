"""The git committer commits each prompt's own work and nothing the user left uncommitted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def files_of(repo: Path, rev: str) -> list[str]:
    return git(repo, "show", "--name-only", "--format=", rev).split()


def writes(*paths: str) -> dict[str, object]:
    return {
        "simulate": {"attempts": [{"writes": [{"path": p, "text": "x"} for p in paths]}]},
        "verify": {"files_exist": list(paths)},
    }


def test_user_changes_are_never_swept_into_a_prompt_commit(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {"commit": "feat: 01", **writes("f01.txt")},
            "02": {"commit": "feat: 02", **writes("sub/f02.txt")},
        },
    )
    repo = tmp_path / "repo"
    (repo / ".env").write_text("API_KEY=secret\n")
    (repo / "README.md").write_text("# Repo\nedit in progress\n")
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "already has uncommitted changes (.env, README.md)" in proc.stdout
    assert files_of(repo, "HEAD~1") == ["f01.txt"]
    assert files_of(repo, "HEAD") == ["sub/f02.txt"]
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [" M README.md", "?? .env"]


def test_a_prompt_commit_gathers_every_attempt_s_work(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: both",
                "simulate": {
                    "attempts": [
                        {"writes": [{"path": "a.txt", "text": "a"}]},
                        {"writes": [{"path": "b.txt", "text": "b"}]},
                    ]
                },
                "verify": {"files_exist": ["a.txt", "b.txt"]},
            }
        },
    )
    assert cli("run", packet).returncode == 0
    assert files_of(tmp_path / "repo", "HEAD") == ["a.txt", "b.txt"]


def test_outputs_left_by_an_earlier_invocation_are_committed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"commit": "feat: 01", "verify": {"files_exist": ["out.txt"]}}}
    )
    repo = tmp_path / "repo"
    (repo / "out.txt").write_text("from an interrupted attempt\n")
    (repo / "notes.txt").write_text("mine\n")
    proc = cli("run", packet, "01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_of(repo, "HEAD") == ["out.txt"]
    assert (
        "warning: [01] committed out.txt in repo 'app', which had uncommitted changes "
        "before the run and which its contract names as outputs" in proc.stdout
    )
    assert git(repo, "status", "--porcelain").splitlines() == ["?? notes.txt"]


def test_deleting_a_tracked_file_is_committed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "chore: drop readme",
                "simulate": {"attempts": [{"writes": [{"path": "new.txt", "text": "n"}]}]},
                "verify": {"files_absent": ["README.md"]},
            }
        },
    )
    repo = tmp_path / "repo"
    (repo / "README.md").unlink()
    assert cli("run", packet).returncode == 0
    status = git(repo, "show", "--name-status", "--format=", "HEAD").split()
    assert status == ["D", "README.md", "A", "new.txt"]


def test_a_prompt_editing_a_file_you_changed_says_its_commit_includes_your_edit(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: agent line",
                "simulate": {
                    "attempts": [
                        {"writes": [{"path": "README.md", "text": "agent line\n", "append": True}]}
                    ]
                },
                "verify": {"contains": [{"path": "README.md", "text": "agent line"}]},
            }
        },
    )
    repo = tmp_path / "repo"
    (repo / "README.md").write_text("# Repo\nmy private edit\n")
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stderr
    assert "edited README.md in repo 'app', which already had uncommitted changes" in proc.stdout


def test_changed_paths_only_does_not_count_the_user_s_own_uncommitted_files(
    tmp_path: Path,
) -> None:
    """Files the user left uncommitted before the run are not the session's
    changes: the clause passes, and no repair is ever told to delete them."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "A\n"}]}]},
                "verify": {"files_exist": ["a.txt"], "changed_paths_only": ["a.txt"]},
            }
        },
    )
    repo = tmp_path / "repo"
    (repo / "notes.txt").write_text("mine\n")
    (repo / "README.md").write_text("# Repo\nmy edit\n")
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "repair" not in proc.stdout
    assert files_of(repo, "HEAD") == ["a.txt"]
    assert (repo / "notes.txt").read_text() == "mine\n"


def test_changed_paths_only_still_counts_a_user_file_the_session_edits(tmp_path: Path) -> None:
    edits = [
        {"path": "notes.txt", "text": "agent\n", "append": True},
        {"path": "a.txt", "text": "A\n"},
    ]
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": edits}]},
                "verify": {"files_exist": ["a.txt"], "changed_paths_only": ["a.txt"]},
                "recovery": {"repair": {"max_attempts": 0}},
            }
        },
    )
    (tmp_path / "repo" / "notes.txt").write_text("mine\n")
    proc = cli("run", packet)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "changed outside the allowed set: notes.txt" in proc.stdout


def test_a_commit_failing_in_one_repo_keeps_the_record_of_the_one_made_before(
    tmp_path: Path,
) -> None:
    from tests.helpers.gitrepo import make_git_repo

    other = make_git_repo(tmp_path / "other")
    hook = other / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'rejected by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "targets": ["app", "other"],
                "commit": "feat: both",
                "simulate": {
                    "attempts": [
                        {
                            "writes": [
                                {"path": "a.txt", "text": "a"},
                                {"path": "b.txt", "text": "b", "repo": "other"},
                            ]
                        }
                    ]
                },
                "verify": {"files_exist": ["a.txt", {"path": "b.txt", "repo": "other"}]},
            }
        },
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "other": {"path": "../other"}}
        },
    )
    proc = cli("run", packet)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    status = json.loads(cli("status", packet, "--json").stdout)
    record = status["prompts"]["01"]
    assert record["status"] == "commit_failed"
    assert "rejected by policy" in record["commit_error"]
    assert record["commit_info"]["commits"] == {
        "app": git(tmp_path / "repo", "rev-parse", "HEAD").strip()
    }
