"""``regenerates:`` proves an output new, one verification at a time, and puts back
what a killed one left (SPEC 2.6: "requires each declared output to be newly
created"). Real repos, real ``prompt-runner verify`` processes, real ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git
from tests.helpers.packets import make_packet
from tests.verifier.conftest import Check

PY = sys.executable
BACKUP = "figure.png.prompt-runner-verifier-backup"


def regen(code: str, timeout_ms: int = 30000) -> dict[str, object]:
    return {
        "exec": PY,
        "args": ["-c", code],
        "regenerates": ["figure.png"],
        "timeout_ms": timeout_ms,
    }


@pytest.fixture
def figure(git_repo: Path) -> Path:
    """``figure.png`` = ``old``, committed in repo ``app``."""
    fig = git_repo / "figure.png"
    fig.write_text("old", encoding="utf-8")
    git(git_repo, "add", "figure.png")
    git(git_repo, "commit", "-qm", "figure")
    return fig


def start_verify(tmp_path: Path, command: dict[str, object]) -> subprocess.Popen[str]:
    """``prompt-runner verify`` of a packet whose prompt 01 runs ``command``, in its own
    session (so ``killpg`` reaches its command too)."""
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": [command]}}})
    return subprocess.Popen(
        [PY, "-m", "prompt_runner", "verify", str(packet), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(predicate: object, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def reaped() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate(timeout=30)


def test_a_concurrent_verify_never_makes_a_stale_output_pass(
    check: Check, figure: Path, tmp_path: Path, reaped: list[subprocess.Popen[str]]
) -> None:
    """Repro 03: another verification moved the output aside before this one started
    and put the old file back while this one's command ran; this one found no file,
    staged nothing, and passed on the old file. Now the second waits for the first
    and then regenerates (or not) itself."""
    sleeper = regen("import time; time.sleep(2)")
    first = start_verify(tmp_path, sleeper)
    reaped.append(first)
    wait_for(lambda: (figure.parent / BACKUP).exists(), "the first verify to stage figure.png")
    report = check({"commands": [sleeper]})
    out, err = first.communicate(timeout=60)
    item = report.items[0]
    assert item.verdict == "failure", item.details
    assert item.details.startswith(
        "regenerates: not newly written by the command: figure.png (missing after the command"
    )
    assert item.extra["regenerates_waited_ms"] > 0  # it waited for the first one's lock
    assert first.returncode == 1, err
    assert json.loads(out)["reports"][0]["items"][0]["verdict"] == "failure"
    assert figure.read_text(encoding="utf-8") == "old"
    assert not (figure.parent / BACKUP).exists()


def test_the_previous_version_put_back_is_not_new(check: Check, figure: Path) -> None:
    """The proof holds without the lock: the very file moved aside, put back by
    another writer (here the command itself), is not a new output."""
    code = f"import os; os.replace({BACKUP!r}, 'figure.png')"
    item = check({"commands": [regen(code)]}).items[0]
    assert item.verdict == "failure"
    assert item.details == (
        "regenerates: not newly written by the command: figure.png (the previous version "
        "itself, put back by another process; the previous version is in place)"
    )
    assert figure.read_text(encoding="utf-8") == "old"
    assert not (figure.parent / BACKUP).exists()


def test_an_old_file_appearing_where_there_was_none_is_not_new(
    check: Check, git_repo: Path, tmp_path: Path
) -> None:
    """No prior version to compare with: a file older than the command (a stale copy
    put in place with its times kept) is not the command's output, and is left alone."""
    stale = tmp_path / "stale.png"
    stale.write_text("stale", encoding="utf-8")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    code = f"import shutil; shutil.copy2({str(stale)!r}, 'figure.png')"
    item = check({"commands": [regen(code)]}).items[0]
    assert item.verdict == "failure"
    assert item.details == (
        "regenerates: not newly written by the command: figure.png (last modified before the "
        "command started, so not written by it; there was no previous version; the older file "
        "there is not its and was left)"
    )
    assert (git_repo / "figure.png").read_text(encoding="utf-8") == "stale"


def test_a_fresh_output_with_no_previous_version_passes(check: Check, git_repo: Path) -> None:
    code = "open('figure.png', 'w').write('new')"
    report = check({"commands": [regen(code)]})
    assert report.passed, report.to_dict()
    assert (git_repo / "figure.png").read_text(encoding="utf-8") == "new"
    assert not (git_repo / BACKUP).exists()


def kill_mid_command(
    tmp_path: Path, figure: Path, code: str, reaped: list[subprocess.Popen[str]], ready: object
) -> None:
    proc = start_verify(tmp_path, regen(code))
    reaped.append(proc)
    wait_for(ready, "the verify command to be under way")
    os.killpg(proc.pid, signal.SIGKILL)  # the verifier and its command: nothing restores
    proc.communicate(timeout=30)
    assert (figure.parent / BACKUP).read_text(encoding="utf-8") == "old"


def test_a_verify_killed_mid_command_is_undone_first_and_told_truly(
    check: Check, figure: Path, tmp_path: Path, reaped: list[subprocess.Popen[str]]
) -> None:
    """Repro 06b: a kill -9 left figure.png moved to its backup, and the next verify
    said 'the previous versions were restored' while it stayed missing."""
    kill_mid_command(
        tmp_path,
        figure,
        "import time; time.sleep(30)",
        reaped,
        lambda: (figure.parent / BACKUP).exists(),
    )
    assert not figure.exists()
    report = check({"files_exist": ["figure.png"], "commands": [regen("pass")]})
    files, command = report.items
    assert files.passed, files.details  # put back before any clause was checked
    assert command.verdict == "failure"
    assert command.details == (
        "regenerates: not newly written by the command: figure.png (missing after the command; "
        "the previous version was restored); before the command, a killed verification had "
        f"left figure.png moved to {BACKUP}: it was put back first"
    )
    assert command.extra["regenerates_recovered"] == ["figure.png"]
    assert figure.read_text(encoding="utf-8") == "old"
    assert not (figure.parent / BACKUP).exists()
    assert git(figure.parent, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    ("code", "after"), [("pass", "old"), ("open('figure.png','w').write('new')", "new")]
)
def test_a_partial_output_beside_the_backup_gives_way_to_the_backup(
    check: Check,
    figure: Path,
    tmp_path: Path,
    reaped: list[subprocess.Popen[str]],
    code: str,
    after: str,
) -> None:
    """Both exist after the kill: the backup is the last version from before the killed
    verification (which never passed); the half-written output is discarded."""
    kill_mid_command(
        tmp_path,
        figure,
        "import time; open('figure.png', 'w').write('half'); time.sleep(30)",
        reaped,
        lambda: figure.exists() and figure.read_text(encoding="utf-8") == "half",
    )
    item = check({"commands": [regen(code)]}).items[0]
    assert "a killed verification had left " + BACKUP + " beside a figure.png written since" in (
        item.details
    )
    assert item.passed is (after == "new")
    assert figure.read_text(encoding="utf-8") == after
    assert not (figure.parent / BACKUP).exists()


def test_a_lock_held_past_the_wait_is_a_fault_and_nothing_runs(
    check: Check,
    figure: Path,
    tmp_path: Path,
    reaped: list[subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process holds the repo's regeneration lock longer than this command's
    timeout (plus the grace, 0 here): a verifier fault, nothing staged, nothing run."""
    monkeypatch.setattr("prompt_runner.verifier.regenerates.LOCK_GRACE_MS", 0)
    holder_code = (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(figure.parent)!r}, os.O_RDONLY)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [PY, "-c", holder_code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    reaped.append(holder)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    ran = tmp_path / "ran"
    item = check({"commands": [regen(f"open({str(ran)!r}, 'w')", timeout_ms=300)]}).items[0]
    assert item.verdict == "verifier_fault"
    assert item.details == (
        "verifier_fault: regenerates: another verification (a run's, or a `prompt-runner "
        f"verify`) has been regenerating outputs in {figure.parent} for 300 ms and still holds "
        "its lock; nothing was run -- let it finish, then verify again"
    )
    assert not ran.exists()
    assert figure.read_text(encoding="utf-8") == "old"
    assert not (figure.parent / BACKUP).exists()
