"""A runner killed between a prompt's ``git commit`` and the record of it.

A ``post-commit`` hook in the target repo SIGKILLs the runner (its pid written
by the shell that ``exec``s it), so the kill lands exactly in the window: the
commit is in git, the prompt's record still says ``running``, ``progress.log``
has no line for it. The resumed run must find that commit and record the
prompt completed naming it -- with pre-flight verification on or off -- never
commit the work twice, never claim a commit that is not the prompt's, and in a
prompt over two repos commit the second repo's work the kill left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

_KILLER = """#!/bin/sh
# Kills the runner once, right after git made the commit (a run without the variable is left alone).
[ -n "$KILL_RUNNER_PID_FILE" ] || exit 0
[ -e "$KILL_RUNNER_PID_FILE.done" ] && exit 0
: > "$KILL_RUNNER_PID_FILE.done"
kill "-${KILL_SIGNAL:-9}" "$(cat "$KILL_RUNNER_PID_FILE")"
[ "${0##*/}" = post-commit ] || exit 1  # pre-commit: no commit
"""


def _install(repo: Path, hook: str) -> None:
    path = repo / ".git" / "hooks" / hook
    path.parent.mkdir(exist_ok=True)
    path.write_text(_KILLER)
    path.chmod(0o755)


def _run_killed(
    tmp: Path, packet: Path, sig: int = signal.SIGKILL
) -> subprocess.CompletedProcess[str]:
    """``run PACKET`` with the runner's pid in a file the hook reads (``exec`` keeps the pid)."""
    pid_file = tmp / "runner.pid"
    env = {**os.environ, "KILL_RUNNER_PID_FILE": str(pid_file), "KILL_SIGNAL": str(int(sig))}
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet)]
    proc = subprocess.run(
        ["sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pid_file), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    else:  # the runner records the interruption itself, then ends
        assert proc.returncode not in (0, -signal.SIGKILL), proc.stdout + proc.stderr
    deadline = time.monotonic() + 30
    while list(tmp.glob("*/.git/index.lock")) and time.monotonic() < deadline:
        time.sleep(0.05)  # the orphaned `git commit` ends on its own
    return proc


def _packet(tmp: Path, **extra: Any) -> Path:
    return make_packet(
        tmp,
        {
            pid: {
                "commit": f"feat: {pid}",
                "simulate": {"attempts": [{"writes": [{"path": f"f{pid}.txt", "text": pid}]}]},
                "verify": {"contains": [{"path": f"f{pid}.txt", "text": pid}]},
                **extra,
            }
            for pid in ("01", "02")
        },
    )


def _status(packet: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(cli("status", packet, "--json").stdout)["prompts"]
    return doc


def _progress(packet: Path) -> list[list[str]]:
    lines = (packet / ".prompt_runner" / "progress.log").read_text().splitlines()
    return [line.split(":") for line in lines]


def _shas(repo: Path, subject: str) -> list[str]:
    """The commits of ``repo`` whose subject is ``subject``, newest first."""
    rows = git(repo, "log", "--format=%H %s").splitlines()
    return [sha for sha, _, subj in (row.partition(" ") for row in rows) if subj == subject]


@pytest.mark.parametrize("flags", [(), ("--no-verify-first",)], ids=["preflight", "no-preflight"])
def test_a_kill_right_after_the_commit_links_that_commit_on_resume(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    _install(repo, "post-commit")
    _run_killed(tmp_path, packet)
    [sha] = _shas(repo, "feat: 01")  # the commit landed; its record did not
    assert _status(packet)["01"].get("commit_info") is None

    resumed = cli("run", packet, "--remaining", *flags)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"[01] its commit {sha[:12]} was found" in resumed.stdout
    record = _status(packet)["01"]
    assert record["status"] == "completed"
    assert record["source"] == "commit_found"
    assert record["commit_info"] == {"commits": {"app": sha}, "skipped": False}
    assert record["last_verifier"]["pass"] is True  # the contract still holds
    assert [a["mode"] for a in record["attempts"]] == ["run"]  # no session ran again
    done = [row for row in _progress(packet) if row[0] == "01"]
    assert len(done) == 1 and done[0][1] == "completed" and done[0][-1] == sha
    assert _shas(repo, "feat: 01") == [sha]  # committed once
    assert len(_shas(repo, "feat: 02")) == 1
    assert _status(packet)["02"]["commit_info"]["commits"]["app"] == _shas(repo, "feat: 02")[0]
    assert git(repo, "status", "--porcelain") == ""


def test_a_user_commit_on_top_of_the_prompt_s_commit_is_not_claimed(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    _install(repo, "post-commit")
    _run_killed(tmp_path, packet)
    [sha] = _shas(repo, "feat: 01")
    (repo / "mine.txt").write_text("the user's\n")
    git(repo, "add", "mine.txt")
    git(repo, "commit", "-q", "-m", "my own work")
    mine = git(repo, "rev-parse", "HEAD").strip()

    resumed = cli("run", packet, "--remaining", "--no-verify-first")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    record = _status(packet)["01"]
    assert record["commit_info"] == {"commits": {"app": sha}, "skipped": False}
    assert mine not in json.dumps(record)
    assert git(repo, "log", "--format=%s").splitlines()[1:3] == ["my own work", "feat: 01"]


def test_a_user_s_own_commit_of_the_work_is_never_claimed(tmp_path: Path) -> None:
    """Killed before its commit (in ``pre-commit``): the user commits the work
    with their own message; the resumed run names no commit for the prompt."""
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    _install(repo, "pre-commit")
    _run_killed(tmp_path, packet)
    assert _shas(repo, "feat: 01") == []
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "my own commit of it")
    mine = git(repo, "rev-parse", "HEAD").strip()

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "was found" not in resumed.stdout
    record = _status(packet)["01"]
    assert record["status"] == "completed" and record["source"] == "preflight_verify"
    assert record.get("commit_info") is None and mine not in json.dumps(record)
    assert _shas(repo, "feat: 01") == []


def test_a_commit_with_the_prompt_s_message_not_on_its_start_is_not_claimed(
    tmp_path: Path,
) -> None:
    """Same message, but on top of another commit than the one the prompt started on."""
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    _install(repo, "pre-commit")
    _run_killed(tmp_path, packet)
    (repo / "first.txt").write_text("x\n")
    git(repo, "add", "first.txt")
    git(repo, "commit", "-q", "-m", "something first", "--", "first.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feat: 01")  # the user copied the message

    resumed = cli("run", packet, "--remaining", "--no-verify-first")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "was found" not in resumed.stdout
    record = _status(packet)["01"]
    assert record["source"] == "verifier"  # a session ran, as before
    assert not record["commit_info"]["commits"]  # nothing left to commit, nothing claimed


def _two_repo_packet(tmp_path: Path, killer: str = "repo") -> tuple[Path, Path, Path]:
    lib = make_git_repo(tmp_path / "lib")
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "targets": ["app", "lib"],
                "commit": "feat: both",
                "simulate": {
                    "attempts": [
                        {
                            "writes": [
                                {"path": "a.txt", "text": "a"},
                                {"path": "b.txt", "text": "b", "repo": "lib"},
                            ]
                        }
                    ]
                },
                "verify": {"files_exist": ["a.txt", {"path": "b.txt", "repo": "lib"}]},
            }
        },
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "lib": {"path": "../lib"}}
        },
    )
    repo = tmp_path / "repo"
    _install(tmp_path / killer, "post-commit")  # app is committed first, then lib
    _run_killed(tmp_path, packet)
    return packet, repo, lib


def test_a_kill_between_two_repos_commits_links_one_and_commits_the_other(
    tmp_path: Path,
) -> None:
    packet, repo, lib = _two_repo_packet(tmp_path)
    [app_sha] = _shas(repo, "feat: both")
    assert _shas(lib, "feat: both") == []
    assert git(lib, "status", "--porcelain").strip() == "?? b.txt"

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"[01] its commit {app_sha[:12]} was found" in resumed.stdout
    [lib_sha] = _shas(lib, "feat: both")
    assert _shas(repo, "feat: both") == [app_sha]  # never a second commit in app
    record = _status(packet)["01"]
    assert record["status"] == "completed"
    assert record["commit_info"] == {"commits": {"app": app_sha, "lib": lib_sha}, "skipped": False}
    assert [a["mode"] for a in record["attempts"]] == ["run"]
    [line] = [row for row in _progress(packet) if row[0] == "01"]
    assert line[1] == "completed" and line[-1].endswith(f"lib={lib_sha}")
    assert git(lib, "show", f"{lib_sha}:b.txt") == "b"
    assert git(repo, "status", "--porcelain") == "" and git(lib, "status", "--porcelain") == ""


def test_a_failed_commit_of_the_other_repo_halts_and_keeps_the_found_one(tmp_path: Path) -> None:
    packet, repo, lib = _two_repo_packet(tmp_path)
    [app_sha] = _shas(repo, "feat: both")
    hook = lib / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'rejected by policy' >&2\nexit 1\n")
    hook.chmod(0o755)

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr
    assert "rejected by policy" in resumed.stdout + resumed.stderr
    record = _status(packet)["01"]
    assert record["status"] == "commit_failed"
    assert record["commit_info"]["commits"] == {"app": app_sha}
    assert _shas(repo, "feat: both") == [app_sha] and _shas(lib, "feat: both") == []
    assert [row[1] for row in _progress(packet) if row[0] == "01"] == ["failed"]


def _commit(repo: Path, name: str, message: str, *extra: str) -> str:
    (repo / name).write_text(name)
    git(repo, "add", name)
    subprocess.run(
        ["git", "commit", "-q", "--cleanup=whitespace", "-F", "-", *extra],
        cwd=repo,
        input=message,
        text=True,
        check=True,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_found_commit_rule_in_a_real_repo(tmp_path: Path) -> None:
    from prompt_runner.runner.lifecycle import found_commit

    repo = make_git_repo(tmp_path / "repo")
    start = git(repo, "rev-parse", "HEAD").strip()
    early = "2000-01-01T00:00:00Z"
    message = "feat: 01\n\nwhy  \n\n\n"  # git stores it cleaned: still the prompt's
    assert found_commit(repo, start, message, early) is None  # HEAD did not move
    sha = _commit(repo, "a.txt", message)
    assert found_commit(repo, start, message, early) == sha
    assert found_commit(repo, start, "feat: 02", early) is None  # another message
    assert found_commit(repo, start, message, "2999-01-01T00:00:00Z") is None  # made before
    assert found_commit(repo, "0" * 40, message, early) is None  # not its history
    _commit(repo, "b.txt", "the user's own")
    assert found_commit(repo, start, message, early) == sha  # the one on top is not named
    # a merge whose first parent is the start is not the prompt's commit
    git(repo, "checkout", "-q", "-b", "side", start)
    _commit(repo, "c.txt", "side work")
    git(repo, "checkout", "-q", "-b", "merged", start)
    git(repo, "merge", "-q", "--no-ff", "-m", "feat: 01", "side")
    assert found_commit(repo, start, "feat: 01", early) is None


def test_a_sigterm_right_after_the_commit_links_that_commit_too(tmp_path: Path) -> None:
    """SIGTERM in the window: the runner records the prompt interrupted itself;
    the resumed run still finds its commit rather than naming none."""
    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    _install(repo, "post-commit")
    _run_killed(tmp_path, packet, signal.SIGTERM)
    [sha] = _shas(repo, "feat: 01")
    record = _status(packet)["01"]
    assert record["status"] == "interrupted" and record.get("commit_info") is None
    resumed = cli("run", packet, "--remaining", "--no-verify-first")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    record = _status(packet)["01"]
    assert record["commit_info"] == {"commits": {"app": sha}, "skipped": False}
    assert _shas(repo, "feat: 01") == [sha]


def test_a_kill_after_the_last_repo_s_commit_links_both(tmp_path: Path) -> None:
    packet, repo, lib = _two_repo_packet(tmp_path, killer="lib")
    [app_sha], [lib_sha] = _shas(repo, "feat: both"), _shas(lib, "feat: both")

    resumed = cli("run", packet, "--remaining", "--no-verify-first")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"its commit {app_sha[:12]} was found in repo 'app'" in resumed.stdout
    assert f"its commit {lib_sha[:12]} was found in repo 'lib'" in resumed.stdout
    record = _status(packet)["01"]
    assert record["commit_info"] == {"commits": {"app": app_sha, "lib": lib_sha}, "skipped": False}
    assert _shas(repo, "feat: both") == [app_sha] and _shas(lib, "feat: both") == [lib_sha]
    [line] = [row for row in _progress(packet) if row[0] == "01"]
    assert line[-1] == f"app={app_sha},lib={lib_sha}"


def test_a_kill_right_after_a_root_commit_links_it_on_resume(tmp_path: Path) -> None:
    # session 12: a repo with no commit yet recorded no HEAD at the prompt's
    # start, so the root commit a killed runner made was never linked (the
    # resumed run verified again, found nothing to commit and left it unowned).
    import shutil

    packet = _packet(tmp_path)
    repo = tmp_path / "repo"
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@example.invalid")
    _install(repo, "post-commit")
    _run_killed(tmp_path, packet)
    [sha] = _shas(repo, "feat: 01")
    assert git(repo, "rev-list", "--parents", "-n1", sha).split() == [sha]  # a root commit
    assert _status(packet)["01"]["head_at_start"] == {"app": "(initial)"}

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"[01] its commit {sha[:12]} was found" in resumed.stdout
    record = _status(packet)["01"]
    assert record["source"] == "commit_found"
    assert record["commit_info"] == {"commits": {"app": sha}, "skipped": False}
    assert _shas(repo, "feat: 01") == [sha] and len(_shas(repo, "feat: 02")) == 1
