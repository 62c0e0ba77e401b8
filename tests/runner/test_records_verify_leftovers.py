"""A resumed run adopts a killed runner's session work, not its verification's files.

``run --remaining`` commits the uncommitted work an interrupted prompt left
(lifecycle.adopt_interrupted_work); what its contract's ``commands`` wrote
(``coverage.xml``, ``.pytest_cache/``) and a ``regenerates:`` output's backup
a killed verification left are not that work (runner/leftovers.py). Real
``prompt-runner run`` processes, real git, a real ``kill -9`` of the runner:
by a ``git`` on PATH just before its first ``git commit`` (verified, not yet
committed), or by the verify command itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from prompt_runner.verifier.regenerates import BACKUP_SUFFIX
from tests.helpers.packets import make_packet

PY = sys.executable
ARTIFACTS = (
    "echo coverage > coverage.xml; mkdir -p .pytest_cache && echo c > .pytest_cache/x; "
    "test -f a.txt"
)

_KILLING_GIT = """#!/bin/sh
# Forwards to the real git; kills the runner (its parent) just before its first `git commit`.
sub() { while [ "$1" = -c ] || [ "$1" = -C ]; do shift 2; done; echo "$1"; }
if [ "$(sub "$@")" = commit ] && [ ! -e "$KILLED" ]; then
  : > "$KILLED"; kill -9 "$PPID"; exit 1
fi
exec "$REAL_GIT" "$@"
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def status(repo: Path) -> list[str]:
    return sorted(git(repo, "status", "--porcelain", "-uall").splitlines())


def run(
    packet: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [PY, "-m", "prompt_runner", "run", str(packet), *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def killing_env(tmp: Path) -> dict[str, str]:
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(_KILLING_GIT)
    wrapper.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "REAL_GIT": real,
        "KILLED": str(tmp / "killed"),
    }


def packet_of(tmp_path: Path, verify: dict[str, Any], **extra: Any) -> Path:
    prompt = {
        "commit": "feat: a",
        "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "A\n"}]}]},
        "verify": verify,
        **extra,
    }
    return make_packet(tmp_path, {"01": prompt})


def test_a_runner_killed_before_the_commit_leaves_its_verify_files_uncommitted(
    tmp_path: Path,
) -> None:
    packet = packet_of(
        tmp_path,
        {"files_exist": ["a.txt"], "commands": [{"exec": "sh", "args": ["-c", ARTIFACTS]}]},
    )
    repo = tmp_path / "repo"
    (repo / "notes.txt").write_text("the user's own\n")
    killed = run(packet, env=killing_env(tmp_path))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert (tmp_path / "killed").exists() and (repo / "coverage.xml").exists()
    assert "feat: a" not in git(repo, "log", "--format=%s")  # verified, not committed

    again = run(packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "its interrupted run left uncommitted work (a.txt);" in again.stdout
    assert "no session was run" in again.stdout  # nor is coverage.xml "may be its work"
    assert git(repo, "log", "-1", "--format=%s").strip() == "feat: a"
    committed = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == ["a.txt"]  # the session's file, not the verify command's
    assert status(repo) == ["?? .pytest_cache/x", "?? coverage.xml", "?? notes.txt"]


def test_a_regenerates_backup_a_killed_verification_left_is_never_adopted(
    tmp_path: Path,
) -> None:
    """The verify command kills the runner while its ``regenerates:`` output's
    prior version sits at its backup: the resumed run neither names nor
    commits the backup; the regenerated output is the prompt's work."""
    code = (
        "import os, signal; open('figure.png', 'w').write('new'); "
        "os.kill(os.getppid(), signal.SIGKILL) if not os.path.exists('../killed') "
        "and not open('../killed', 'w').close() else None"
    )
    command = {"exec": PY, "args": ["-c", code], "regenerates": ["figure.png"]}
    packet = packet_of(tmp_path, {"files_exist": ["a.txt"], "commands": [command]})
    repo = tmp_path / "repo"
    (repo / "figure.png").write_text("old")
    git(repo, "add", "figure.png")
    git(repo, "commit", "-qm", "figure")
    killed = run(packet)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    backup = repo / f"figure.png{BACKUP_SUFFIX}"
    assert backup.exists(), status(repo)  # the killed verification's

    again = run(packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert BACKUP_SUFFIX not in again.stdout
    assert not backup.exists()  # the next verification put it back, then regenerated it
    committed = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == ["a.txt", "figure.png"]
    assert (repo / "figure.png").read_text() == "new"
    assert status(repo) == []


def test_a_runner_killed_by_its_verify_command_leaves_that_command_s_files(
    tmp_path: Path,
) -> None:
    """Killed mid-verification (the command writes ``coverage.xml``, then kills
    the runner): the session had ended, so its file alone is adopted."""
    code = (
        "import os, signal; open('coverage.xml', 'w').write('c'); "
        "os.kill(os.getppid(), signal.SIGKILL) if not os.path.exists('../killed') "
        "and not open('../killed', 'w').close() else None"
    )
    packet = packet_of(
        tmp_path, {"files_exist": ["a.txt"], "commands": [{"exec": PY, "args": ["-c", code]}]}
    )
    repo = tmp_path / "repo"
    killed = run(packet)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert status(repo) == ["?? a.txt", "?? coverage.xml"]

    again = run(packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "its interrupted run left uncommitted work (a.txt);" in again.stdout
    committed = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == ["a.txt"]
    assert status(repo) == ["?? coverage.xml"]


def test_the_bound_is_there_only_while_no_session_is_writing(tmp_path: Path) -> None:
    """Recorded as the session's verification begins (before its commands),
    cleared as the next session of the prompt begins: a runner killed in a
    repair's session is adopted by "dirty now minus dirty at start" alone."""
    from prompt_runner.committer import GitCommitter
    from prompt_runner.runner import leftovers
    from prompt_runner.runner.attempt_record import begin_attempt
    from prompt_runner.runner.judging import judge_workspace
    from prompt_runner.runner.steering import run_with_steers
    from prompt_runner.state.store import FileStore
    from tests.runner._steps import open_steps, step_context

    prompt = {
        "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "A\n"}]}]},
        "verify": {"commands": [{"exec": "sh", "args": ["-c", ARTIFACTS]}]},
    }
    ctx = step_context(
        tmp_path, {"01": prompt}, store=FileStore(tmp_path / "state"), committer=GitCommitter()
    )
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    judge_workspace(ctx, loop, attempt, run_with_steers(ctx, loop, attempt))
    assert attempt.files is not None
    attempt.files.close()
    assert ctx.store.load_prompt("01")[leftovers.FIELD] == {"app": ["a.txt"]}
    assert (tmp_path / "repo" / "coverage.xml").exists()  # written after it was recorded
    loop.mode = "repair"
    second = begin_attempt(ctx, loop, 2)
    assert second.files is not None
    second.files.close()
    assert ctx.store.load_prompt("01")[leftovers.FIELD] is None
