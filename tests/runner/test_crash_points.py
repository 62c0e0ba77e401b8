"""The orderings a resume relies on, each proven by a SIGKILL at that exact point.

A prompt's end is: verified -> ``git add`` -> ``git commit`` -> its record
(``completed`` with the commit) -> its ``progress.log`` line -> ``✓ ID
completed`` on the console. A ``git`` on PATH that forwards to the real one
kills the runner (its parent) just before or just after the Nth commit; the
console line kills it just after an acknowledgement. Whatever the point, the
next run finishes the packet, every ``completed`` line names a commit that
holds the prompt's work, no prompt's work is committed twice, and nothing the
console acknowledged is lost.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PROMPTS = ["01", "02", "03", "04"]

_WRAPPER = """#!/bin/sh
# Forwards to the real git; kills the runner at the Nth `git commit` (before or after it).
# The runner's commits start with `-C DIR` and `-c NAME=VALUE` pairs (auto-maintenance off).
sub() { while [ "$1" = -c ] || [ "$1" = -C ]; do shift 2; done; echo "$1"; }
if [ "$(sub "$@")" = commit ]; then
  n=$(( $(cat "$CRASH_COUNT" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$CRASH_COUNT"
  if [ "$n" = "$CRASH_AT" ] && [ "$CRASH_WHEN" = before ]; then kill -9 "$PPID"; exit 1; fi
  "$REAL_GIT" "$@"
  rc=$?
  if [ "$n" = "$CRASH_AT" ] && [ "$CRASH_WHEN" = after ]; then kill -9 "$PPID"; fi
  exit "$rc"
fi
exec "$REAL_GIT" "$@"
"""


def _packet(root: Path) -> Path:
    return make_packet(
        root,
        {
            pid: {
                "commit": f"feat: {pid}",
                "simulate": {"attempts": [{"writes": [{"path": f"f{pid}.txt", "text": pid}]}]},
                "verify": {"contains": [{"path": f"f{pid}.txt", "text": pid}]},
            }
            for pid in PROMPTS
        },
    )


def _crashing_env(tmp: Path, when: str, at: int) -> dict[str, str]:
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(_WRAPPER)
    wrapper.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "REAL_GIT": real,
        "CRASH_COUNT": str(tmp / "commits"),
        "CRASH_AT": str(at),
        "CRASH_WHEN": when,
    }


def _progress(packet: Path) -> list[tuple[str, str, str]]:
    """``(id, status, suffix)`` per progress.log line."""
    path = packet / ".prompt_runner" / "progress.log"
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        pid, status, rest = line.split(":", 2)
        out.append((pid, status, rest.rsplit(":", 1)[1] if rest.count(":") == 3 else ""))
    return out


def _check_invariants(packet: Path, repo: Path) -> None:
    for pid, status, suffix in _progress(packet):
        if status != "completed" or suffix in ("", "no_changes"):
            continue
        # a completed line names a commit that exists and holds the prompt's work
        assert git(repo, "show", f"{suffix}:f{pid}.txt").strip() == pid, (pid, suffix)
    state = packet / ".prompt_runner" / "state.json"
    if state.exists():
        json.loads(state.read_text())  # always a whole document


def _finish_and_check(packet: Path, repo: Path) -> None:
    resumed = cli("run", packet)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _check_invariants(packet, repo)
    done = {pid for pid, status, _ in _progress(packet) if status == "completed"}
    assert done == set(PROMPTS)
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert {pid: rec["status"] for pid, rec in doc["prompts"].items()} == dict.fromkeys(
        PROMPTS, "completed"
    )
    subjects = git(repo, "log", "--format=%s").splitlines()
    for pid in PROMPTS:
        assert subjects.count(f"feat: {pid}") == 1, subjects  # never committed twice
        assert (repo / f"f{pid}.txt").read_text() == pid
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize(("when", "at"), [("before", 1), ("before", 3), ("after", 1), ("after", 3)])
def test_a_kill_around_a_commit_loses_nothing_and_commits_nothing_twice(
    tmp_path: Path, when: str, at: int
) -> None:
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    env = _crashing_env(tmp_path, when, at)
    killed = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    _check_invariants(packet, repo)
    completed = [pid for pid, status, _ in _progress(packet) if status == "completed"]
    assert completed == PROMPTS[: at - 1]  # the killed prompt's line is not written
    if when == "after":
        # the commit landed; the record of it did not: the next run must not commit it again
        assert git(repo, "log", "-1", "--format=%s").strip() == f"feat: {PROMPTS[at - 1]}"
    _finish_and_check(packet, repo)


def test_a_kill_right_after_an_acknowledgement_keeps_it(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("✓ 02 completed"):
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.wait(timeout=60)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    acknowledged = [pid for pid, status, _ in _progress(packet) if status == "completed"]
    assert acknowledged[:2] == ["01", "02"]
    record = json.loads(cli("status", packet, "--json").stdout)["prompts"]["02"]
    assert record["status"] == "completed"
    assert [a["status"] for a in record["attempts"]] == ["completed"]
    _check_invariants(packet, repo)
    _finish_and_check(packet, repo)
    again = json.loads(cli("status", packet, "--json").stdout)["prompts"]
    for pid in ("01", "02"):  # acknowledged prompts are not run again
        assert [a["mode"] for a in again[pid]["attempts"]] == ["run"], pid
