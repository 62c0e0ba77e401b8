"""Pre-flight verification never reports uncommitted work completed.

A contract of only ``commands`` names no output, so the work that satisfies it
may be any file. A prompt that failed (or whose runner died while verifying it)
leaves its work uncommitted; ``run --remaining`` used to record it completed
``no_session`` and never commit that work (new user t5 #1, #2). Now the
interrupted run's adopted work is committed as the prompt's, and a failed
run's leftovers send the prompt to a session, which commits them -- while a
prompt whose work was committed by hand still completes without one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from prompt_runner import api
from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.packets import FAST, NOREPAIR, make_packet


def _packet(tmp: Path, check: str) -> Path:
    """Prompt 01 writes feature.py; its contract is one shell ``check`` (run in the repo)."""
    return make_packet(
        tmp,
        {
            "01": {
                "commit": "feat: 01",
                "simulate": {"attempts": [{"writes": [{"path": "feature.py", "text": "f = 1\n"}]}]},
                "verify": {"commands": [{"exec": "sh", "args": ["-c", check]}]},
            },
            "02": {
                "commit": "feat: 02",
                "simulate": {"attempts": [{"writes": [{"path": "next.txt", "text": "n\n"}]}]},
                "verify": {"files_exist": ["next.txt"]},
            },
        },
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )


def _progress(packet: Path) -> list[str]:
    return (packet / ".prompt_runner" / "progress.log").read_text().splitlines()


def _record(packet: Path, prompt_id: str) -> dict[str, Any]:
    record: dict[str, Any] = api.status(packet)["prompts"][prompt_id]
    return record


def _subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_a_failed_commands_only_prompt_s_work_is_committed_not_reported_completed(
    tmp_path: Path,
) -> None:
    """Repro 01: the outside cause fixed, --remaining commits feature.py with prompt 01."""
    ready = tmp_path / "env-ready"
    packet = _packet(tmp_path, f"test -f feature.py && test -f {ready}")
    repo = tmp_path / "repo"
    first = cli("run", packet)
    assert first.returncode == 1, first.stdout + first.stderr
    assert git(repo, "status", "--porcelain") == "?? feature.py\n"
    ready.touch()  # the operator fixes the environment

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "no session was run" not in resumed.stdout
    assert "uncommitted changes that may be its work (feature.py)" in resumed.stdout
    assert git(repo, "status", "--porcelain") == ""
    assert _subjects(repo)[:2] == ["feat: 02", "feat: 01"]
    assert git(repo, "show", "--format=", "--name-only", "HEAD~1") == "feature.py\n"
    sha = git(repo, "rev-parse", "HEAD~1").strip()
    line = [x for x in _progress(packet) if x.startswith("01:completed:")]
    assert len(line) == 1 and line[0].endswith(":" + sha)
    assert _record(packet, "01")["commit_info"]["commits"] == {"app": sha}


def test_work_committed_by_hand_still_completes_without_a_session(tmp_path: Path) -> None:
    """The user commits the failed prompt's work: nothing uncommitted can be its
    work (notes.txt was dirty before it started), so pre-flight completes it."""
    ready = tmp_path / "env-ready"
    packet = _packet(tmp_path, f"test -f feature.py && test -f {ready}")
    repo = tmp_path / "repo"
    (repo / "notes.txt").write_text("the user's own\n")
    assert cli("run", packet).returncode == 1
    git(repo, "add", "feature.py")
    git(repo, "commit", "-q", "-m", "my own commit of feature.py")
    ready.touch()

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "✓ 01 already satisfies its contract — no session was run." in resumed.stdout
    record = _record(packet, "01")
    assert record["source"] == "preflight_verify" and record["session_ran"] is False
    done = [x for x in _progress(packet) if x.startswith("01:completed:")]
    assert len(done) == 1 and done[0].endswith(":no_session")
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"  # never taken


def test_a_never_run_commands_only_prompt_with_a_dirty_repo_gets_a_session(
    tmp_path: Path,
) -> None:
    """Nothing is known about a dirty file a commands-only contract may be met
    by: the prompt is not completed without a commit; a clean repo completes it."""
    packet = _packet(tmp_path, "test -f feature.py")
    repo = tmp_path / "repo"
    (repo / "feature.py").write_text("f = 1\n")  # done by hand, not committed
    proc = cli("run", packet, "--remaining", "--through", "01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no session was run" not in proc.stdout
    assert _record(packet, "01")["session_ran"] is True
    assert git(repo, "status", "--porcelain") == ""
    assert _subjects(repo)[0] == "feat: 01"

    clean = tmp_path / "clean"
    clean.mkdir()
    packet = _packet(clean, "test -f feature.py")
    (clean / "repo" / "feature.py").write_text("f = 1\n")
    git(clean / "repo", "add", "feature.py")
    git(clean / "repo", "commit", "-q", "-m", "by hand")
    proc = cli("run", packet, "--remaining", "--through", "01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "✓ 01 already satisfies its contract — no session was run." in proc.stdout


def test_work_left_by_a_runner_killed_while_verifying_is_committed_with_the_prompt(
    tmp_path: Path,
) -> None:
    """Repro 02: the verify command SIGKILLs the runner once (its pid from the
    shell that ``exec``s it); the resumed run's pre-flight commits feature.py
    as prompt 01's commit instead of recording it completed ``no_session``."""
    pid_file = tmp_path / "runner.pid"
    once = tmp_path / "killed"
    check = (
        f'if [ ! -e {once} ]; then : > {once}; kill -9 "$(cat {pid_file})"; sleep 1; exit 1; fi; '
        "test -f feature.py"
    )
    packet = _packet(tmp_path, check)
    repo = tmp_path / "repo"
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet), "--through", "01"]
    killed = subprocess.run(
        ["sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pid_file), *argv],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert git(repo, "status", "--porcelain") == "?? feature.py\n"

    resumed = cli("run", packet, "--remaining", "--through", "01")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "its interrupted run left uncommitted work (feature.py)" in resumed.stdout
    assert "the work its interrupted run left is committed" in resumed.stdout
    assert git(repo, "status", "--porcelain") == ""
    assert _subjects(repo)[0] == "feat: 01"
    sha = git(repo, "rev-parse", "HEAD").strip()
    assert _progress(packet)[-1].startswith("01:completed:")
    assert _progress(packet)[-1].endswith(":" + sha)
    record = _record(packet, "01")
    assert record["source"] == "preflight_verify" and record["session_ran"] is False
    assert record["commit_info"] == {"commits": {"app": sha}, "skipped": False}
    assert len(record.get("attempts", [])) == 1  # no second session


def test_a_failed_commit_of_the_adopted_work_halts_the_run(tmp_path: Path) -> None:
    """A pre-commit hook refuses the adopted work's commit: exit 3, 01
    commit_failed, 02 never runs, feature.py stays for the next run."""
    pid_file = tmp_path / "runner.pid"
    once = tmp_path / "killed"
    check = (
        f'if [ ! -e {once} ]; then : > {once}; kill -9 "$(cat {pid_file})"; sleep 1; exit 1; fi; '
        "test -f feature.py"
    )
    packet = _packet(tmp_path, check)
    repo = tmp_path / "repo"
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet)]
    killed = subprocess.run(
        ["sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pid_file), *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n")
    hook.chmod(0o755)

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr
    assert "refused by policy" in resumed.stdout + resumed.stderr
    assert _record(packet, "01")["status"] == "commit_failed"
    assert not (repo / "next.txt").exists()  # the halt: 02 never ran
    assert "feat: 01" not in _subjects(repo)
    assert git(repo, "status", "--porcelain").split() in (["??", "feature.py"], ["A", "feature.py"])


def test_an_output_its_own_command_writes_is_committed_by_a_session(tmp_path: Path) -> None:
    """The contract's command rewrites gen.txt, which the contract names: after
    verification it is uncommitted, so pre-flight does not complete the prompt
    without a commit (the check is on the repo as the commands left it)."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: 01",
                "simulate": {"attempts": [{"writes": [{"path": "other.txt", "text": "o\n"}]}]},
                "verify": {
                    "commands": [{"exec": "sh", "args": ["-c", "echo g > gen.txt"]}],
                    "files_exist": ["gen.txt"],
                },
            }
        },
    )
    repo = tmp_path / "repo"
    (repo / "gen.txt").write_text("old\n")  # committed; the command rewrites it
    git(repo, "add", "gen.txt")
    git(repo, "commit", "-q", "-m", "old gen.txt")
    proc = cli("run", packet, "--remaining")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no session was run" not in proc.stdout
    assert "uncommitted changes that may be its work (gen.txt)" in proc.stdout
    assert _record(packet, "01")["session_ran"] is True
    assert "gen.txt" in git(repo, "show", "--format=", "--name-only", "HEAD").split()
