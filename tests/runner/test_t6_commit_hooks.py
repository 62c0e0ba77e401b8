"""t6: a commit hook that changes the commit -- the verdict holds for the commit,
not the work tree; the index agrees with the commit afterwards; a hook that
sweeps the user's uncommitted work into the prompt's commit is said plainly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def record(packet: Path, prompt_id: str = "01") -> dict[str, Any]:
    return dict(json.loads(cli("status", packet, "--json").stdout)["prompts"][prompt_id])


def hook(repo: Path, body: str) -> None:
    path = repo / ".git" / "hooks" / "pre-commit"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def hello_packet(tmp_path: Path, *ids: str) -> Path:
    return make_packet(
        tmp_path,
        {
            pid: {
                "commit": f"feat: p{pid}",
                "recovery": {"repair": {"max_attempts": 0}},
                "simulate": {"attempts": [{"writes": [{"path": f"{pid}.txt", "text": "Hello\n"}]}]},
                "verify": {
                    "files_exist": [f"{pid}.txt"],
                    "contains": [{"path": f"{pid}.txt", "text": "Hello"}],
                },
            }
            for pid in ids or ("01",)
        },
    )


UPPERCASE_STAGED = """for f in $(git diff --cached --name-only --diff-filter=AM); do
  blob=$(git show ":$f" | tr a-z A-Z | git hash-object -w --stdin)
  git update-index --cacheinfo 100644,$blob,"$f"
done"""


def test_a_hook_that_rewrites_only_the_staged_blob_fails_the_prompt(tmp_path: Path) -> None:
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, UPPERCASE_STAGED)
    done = cli("run", packet)
    assert git(repo, "show", "HEAD:01.txt") == "HELLO\n"  # the commit fails the contract
    assert done.returncode == 3, done.stdout + done.stderr
    assert "✓ 01 completed" not in done.stdout
    assert "the pre-commit hook changed what the commit holds" in done.stdout
    assert "01.txt in repo 'app'" in done.stdout
    state = record(packet)
    assert state["status"] == "commit_failed"
    assert state["hook_mismatch"] == {"app": ["01.txt"]}


def test_a_hook_that_unstages_the_prompt_s_file_fails_the_prompt(tmp_path: Path) -> None:
    packet = hello_packet(tmp_path, "01", "02")
    repo = tmp_path / "repo"
    hook(repo, "git rm -q --cached --ignore-unmatch 01.txt")
    done = cli("run", packet)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "✓ 01 completed" not in done.stdout
    assert "01.txt in repo 'app'" in done.stdout
    assert record(packet)["status"] == "commit_failed"
    assert "▶ 02" not in done.stdout  # the run halted at 01


# -- t6 #5: the index after a hook re-staged; a hook that sweeps the user's work -------


def test_after_a_formatter_hook_re_stages_the_index_matches_the_commit(tmp_path: Path) -> None:
    packet = hello_packet(tmp_path, "01", "02")
    repo = tmp_path / "repo"
    hook(
        repo,
        'for f in $(git diff --cached --name-only --diff-filter=AM -- "*.txt"); do\n'
        '  echo "-- formatted" >> "$f"; git add "$f"\ndone',
    )
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "show", "HEAD~1:01.txt") == "Hello\n-- formatted\n"
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the index is the commit's
    assert git(repo, "status", "--porcelain") == ""
    (repo / "new").write_text("n\n")
    git(repo, "add", "new")
    git(repo, "commit", "-qm", "user: new", "--no-verify")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["new"]


def test_a_hook_that_sweeps_the_user_s_uncommitted_work_into_the_commit_fails_it(
    tmp_path: Path,
) -> None:
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, "git add -u")
    (repo / "README.md").write_text("user WIP, not ready\n")
    done = cli("run", packet)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "✓ 01 completed" not in done.stdout
    assert "the pre-commit hook staged README.md in repo 'app' into the prompt's commit" in (
        done.stdout
    )
    state = record(packet)
    assert state["status"] == "commit_failed"
    assert state["swept_user_changes"] == {"app": ["README.md"]}
    assert git(repo, "status", "--porcelain") == ""  # index and work tree agree with it


def test_a_sweeping_hook_with_no_user_work_to_sweep_completes(tmp_path: Path) -> None:
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, "git add -u")
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert record(packet)["status"] == "completed"


def test_a_hook_that_changes_only_the_work_tree_leaves_the_verified_commit_completed(
    tmp_path: Path,
) -> None:
    """The commit holds what was staged -- what the verifier saw -- though the hook
    rewrote the file on disk afterwards: the prompt completes on its verified work,
    and the hook's change stays in the work tree, uncommitted."""
    packet = hello_packet(tmp_path)
    repo = tmp_path / "repo"
    hook(repo, "echo 'broken by the hook' > 01.txt")
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "in the work tree, not in its commit; the commit holds the work as verified" in (
        done.stdout
    )
    assert git(repo, "show", "HEAD:01.txt") == "Hello\n"
    assert git(repo, "status", "--porcelain") == " M 01.txt\n"
    assert record(packet)["status"] == "completed"
