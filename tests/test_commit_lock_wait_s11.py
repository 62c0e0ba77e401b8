"""The committer's own message for a held ``.git/index.lock`` (session 11's gap).

Preflight names a held lock before a run starts (``test_commit_orphans_s10``);
these cover a lock that appears *after* preflight, between the verifier and the
commit, so the committer meets it: it waits for it (``INDEX_LOCK_WAIT_S``, the
real ~10 s: no knob shortens it from the CLI) and then fails the commit with a
sentence saying what to do. Real ``prompt-runner run`` in a child, real git in a
tmp repo; the prompt's verify command makes the lock:

* held by a live git -- a real ``git commit`` left running in the repo (its
  ``pre-commit`` hook sleeps), started in a session of its own so the verifier
  does not end it -- the message names that git's pid and says to wait or run
  ``prompt-runner stop``, never to delete the lock;
* stale (an empty file, no git running there): the message says to delete it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from prompt_runner import api
from prompt_runner.committer import INDEX_LOCK_WAIT_S
from tests.conftest import git
from tests.helpers.packets import make_packet
from tests.helpers.procs import alive, wait_for

HOOK = """#!/bin/sh
# Only the test's own holding commit lingers; any other commit passes at once.
[ -n "$HOLD_LOCK" ] || exit 0
sleep 300 &
echo "$PPID $$ $!" > "{pidfile}.tmp" && mv "{pidfile}.tmp" "{pidfile}"
wait
"""

# The verify command: a real `git commit -a` (which, unlike a plain `git commit`,
# keeps the lock while its hooks run) in a session of its own, holding the
# index lock while its hook sleeps; the command returns once the lock is there.
HOLD = (
    "HOLD_LOCK=1 setsid git commit -q -a --allow-empty -m hold </dev/null >/dev/null 2>&1 & "
    "i=0; while [ ! -f {pidfile} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
    "test -f .git/index.lock"
)

STALE = "touch .git/index.lock"


def _packet(tmp: Path, command: str) -> Path:
    return make_packet(
        tmp,
        {
            "01": {
                "commit": "feat: 01",
                "simulate": {"attempts": [{"writes": [{"path": "f01.txt", "text": "01"}]}]},
                "verify": {
                    "contains": [{"path": "f01.txt", "text": "01"}],
                    "commands": [{"exec": "sh", "args": ["-c", command]}],
                },
            }
        },
    )


def _run(packet: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, time.monotonic() - began


def _record(packet: Path) -> dict[str, Any]:
    record: dict[str, Any] = api.status(packet)["prompts"]["01"]
    return record


def _subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_a_lock_a_live_git_took_after_preflight_names_it_after_the_wait(
    tmp_path: Path, started: list[int]
) -> None:
    pidfile = tmp_path / "hold.pids"
    packet = _packet(tmp_path, HOLD.format(pidfile=pidfile))
    repo = tmp_path / "repo"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK.format(pidfile=pidfile))
    hook.chmod(0o755)

    done, took = _run(packet)

    assert pidfile.exists(), done.stdout + done.stderr  # the holding commit's hook ran
    git_pid, *hook_pids = (int(p) for p in pidfile.read_text().split())
    started.extend([git_pid, *hook_pids])
    assert psutil.Process(git_pid).name().startswith("git")
    assert alive(git_pid), "the holding git ended before the committer gave up"
    assert done.returncode == 3, done.stdout + done.stderr
    assert took >= INDEX_LOCK_WAIT_S - 1, f"the committer gave up after {took:.1f} s"

    record = _record(packet)
    assert record["status"] == "commit_failed", record
    error = record["commit_error"]
    lock = repo / ".git" / "index.lock"
    assert f"{lock} exists" in error, error
    assert f"a git process (pid {git_pid})" in error, error
    assert "prompt-runner stop" in error and "do not delete the lock" in error, error
    assert "delete that file" not in error and "remove" not in error, error
    shown = done.stdout + done.stderr
    assert f"pid {git_pid}" in shown and "prompt-runner stop" in shown, shown
    assert "delete that file" not in shown, shown
    assert "feat: 01" not in _subjects(repo)


def test_a_stale_lock_that_appears_after_preflight_is_to_be_deleted(tmp_path: Path) -> None:
    packet = _packet(tmp_path, STALE)
    repo = tmp_path / "repo"

    done, took = _run(packet)

    assert done.returncode == 3, done.stdout + done.stderr
    assert took >= INDEX_LOCK_WAIT_S - 1, f"the committer gave up after {took:.1f} s"
    record = _record(packet)
    assert record["status"] == "commit_failed", record
    error = record["commit_error"]
    lock = repo / ".git" / "index.lock"
    assert f"{lock} exists" in error, error
    assert "when no git process is running there, delete that file" in error, error
    assert "pid" not in error and "prompt-runner stop" not in error, error
    shown = done.stdout + done.stderr
    assert f"{lock} exists" in shown and "delete that file" in shown, shown
    assert "feat: 01" not in _subjects(repo)
    assert wait_for(lambda: lock.exists(), 1)  # the runner never deletes it itself
