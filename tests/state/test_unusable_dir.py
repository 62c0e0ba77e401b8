"""An unusable runtime state directory is an infrastructure fault: exit 3, one sentence.

Read-only and full file systems are real: each CLI run happens in a private
mount namespace (``unshare -m``) where the packet's ``.prompt_runner`` is a
read-only bind mount or a 40 KiB tmpfs; nothing outside that process sees the
mounts. Those tests skip, with the reason, where a mount namespace cannot be
made. ``/dev/full`` (every write fails with ENOSPC) drives the unit tests.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from prompt_runner import api
from prompt_runner.errors import StorageError
from prompt_runner.providers.events import Event
from prompt_runner.render.sinks import SessionFiles
from prompt_runner.state.atomic import write_bytes_atomic
from prompt_runner.state.lines import LineAppender
from tests.helpers.packets import make_packet

WRITE = {
    "simulate": {
        "attempts": [{"messages": ["hi " * 2000], "writes": [{"path": "a.txt", "text": "a"}]}]
    },
    "verify": {"files_exist": ["a.txt"]},
}


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@cache
def mount_namespace_problem() -> str | None:
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True,
        text=True,
    )
    return None if probe.returncode == 0 else f"no private mount namespace: {probe.stderr.strip()}"


def cli_with_mount(mount: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``prompt-runner ARGS`` in a private mount namespace after ``mount``."""
    problem = mount_namespace_problem()
    if problem:
        pytest.skip(problem)
    command = shlex.join([sys.executable, "-m", "prompt_runner", *map(str, args)])
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount} && exec {command}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_sentence(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return errors[0]


def test_a_state_directory_that_is_a_file_is_exit_3_for_every_command(tmp_path: Path) -> None:
    """It was "internal error ... this is a bug" with exit 1 (NotADirectoryError)."""
    packet = make_packet(tmp_path, {"01": WRITE})
    state = packet / ".prompt_runner"
    state.write_text("not a directory")
    for command in (["run"], ["plan"], ["status"], ["list"], ["repair", "--packet"]):
        args = [*command, packet] + (["01"] if command[0] == "repair" else [])
        proc = cli(*args)
        assert proc.returncode == 3, (command, proc.stdout, proc.stderr)
        line = one_sentence(proc.stderr)
        assert f"{state}: cannot be used as the runtime state directory" in line, line
        assert "it is a file, not a directory; move that file away" in line, line
    proc = cli("run", packet, "--json")
    assert proc.returncode == 3
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 3 and doc["kind"] == "StorageError"
    assert doc["error"].startswith(f"{state}: ")
    with pytest.raises(StorageError, match="is a file, not a directory"):
        api.run(packet, runtime_store="file")


def test_a_read_only_state_directory_stops_the_run_before_any_session(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    state = packet / ".prompt_runner"
    state.mkdir()
    mount = f"mount --bind {shlex.quote(str(state))} {shlex.quote(str(state))} && " + (
        f"mount -o remount,bind,ro {shlex.quote(str(state))}"
    )
    proc = cli_with_mount(mount, "run", packet, "--no-commit", "--json")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    line = one_sentence(proc.stderr)
    assert f"{state}" in line and "the file system is read-only" in line, line
    assert "session" not in proc.stderr  # no agent worked on state it could not record
    assert json.loads(proc.stdout)["kind"] == "StorageError"
    assert not (tmp_path / "repo" / "a.txt").exists()


def test_a_disk_that_fills_mid_run_is_exit_3_naming_the_file(tmp_path: Path) -> None:
    """The first write that fails is reported (not the cleanup writes after it),
    and a session log write failing is never the provider's ``unknown`` failure."""
    packet = make_packet(tmp_path, {f"0{i}": WRITE for i in range(1, 4)})
    state = packet / ".prompt_runner"
    state.mkdir()
    mount = f"mount -t tmpfs -o size=40k tmpfs {shlex.quote(str(state))}"
    proc = cli_with_mount(mount, "run", packet, "--no-commit", "--json")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    line = one_sentence(proc.stderr)
    assert f"{state}/logs/prompt-01-" in line, line
    assert "cannot be written: the disk is full (No space left on device)" in line, line
    assert "reported unknown" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 3 and doc["error"] == line.removeprefix("error: ")


def test_state_writers_name_the_file_and_the_cause(tmp_path: Path) -> None:
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full")
    appender = LineAppender(full)
    with pytest.raises(StorageError, match="/dev/full: cannot be written: the disk is full") as e:
        appender.append_line(b"x\n")
    assert isinstance(e.value, OSError) and e.value.errno == 28  # still an OSError
    appender.close()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError, match=f"{blocker} is a file, not a directory"):
        write_bytes_atomic(blocker / "state.json", b"{}")


def test_a_session_log_that_cannot_be_written_is_raised_on_the_runner_thread(
    tmp_path: Path,
) -> None:
    """Events arrive on the provider's thread: a failed write there is kept and
    raised by the runner's next note, so it never reads as the provider failing."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    files = SessionFiles(Path("/dev/full"), None, "compact")
    files.event(Event("assistant_text", {"text": "x" * 10_000}))  # no raise on this thread
    files.events([Event("assistant_text", {"text": "y"})], ['{"text":"y"}'])
    with pytest.raises(StorageError, match="the disk is full"):
        files.note("OUTCOME")
    with pytest.raises(StorageError):
        files.close()
