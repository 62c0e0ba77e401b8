"""Every control command that writes says an unusable state directory the same way.

``control view`` and ``control steer`` said ``...: the request could not be
written ([Errno 30] Read-only file system: '.../control/tmp/NNN.tmp')`` while
``control amend`` said ``...: cannot be used: the file system is read-only;
make it writable, ...``: now all four name the path, the cause and the fix in
the one StorageError sentence, exit 3.

The read-only case is real: the CLI runs in a private mount namespace
(``unshare -m``) where the packet's ``.prompt_runner`` is a read-only bind
mount; it skips, with the reason, where none can be made. A file where a
control directory should be needs no namespace.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.control._helpers import make_packet, run_file
from tests.helpers.cli import cli

WRITES = [
    ("control", "view", "--log-mode", "verbose"),
    ("control", "steer", "use the helper"),
    ("control", "amend", "01", "--add-file", "b.txt", "--reason", "needs b"),
    ("control", "relax", "01", "--drop", "files_exist", "--reason", "too strict", "--confirm"),
]


@pytest.fixture
def failed(tmp_path: Path) -> Path:
    """A packet whose run failed (unfinished: a steer has a run to target)."""
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["missing.txt"]}}})
    result, _ = run_file(packet)
    assert result.prompts["01"] != "completed"
    return packet


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "Errno" not in proc.stderr, proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    return line


@cache
def _no_mount_namespace() -> str | None:
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True,
        text=True,
    )
    return None if probe.returncode == 0 else f"no private mount namespace: {probe.stderr.strip()}"


def _read_only_cli(packet: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """``prompt-runner ARGS`` (the packet after the command) with a read-only state directory."""
    problem = _no_mount_namespace()
    if problem:
        pytest.skip(problem)
    state = shlex.quote(str(packet / ".prompt_runner"))
    command = shlex.join([sys.executable, "-m", "prompt_runner", *args[:2], str(packet), *args[2:]])
    return subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f"mount --bind {state} {state} && mount -o remount,bind,ro {state} && exec {command}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("args", WRITES, ids=lambda a: a[1])
def test_a_read_only_state_directory_is_one_sentence(failed: Path, args: tuple[str, ...]) -> None:
    line = _error_line(_read_only_cli(failed, args))
    assert line.startswith(f"error: {failed / '.prompt_runner'}/"), line
    assert line.endswith(
        ": cannot be written: the file system is read-only; make it writable, or move the "
        "packet somewhere writable"
    ), line
    assert ".tmp" not in line, line  # names the directory, not a temp file that never existed


@pytest.mark.parametrize("args", WRITES, ids=lambda a: a[1])
def test_a_file_where_a_control_directory_should_be_is_named(
    failed: Path, args: tuple[str, ...]
) -> None:
    state = failed / ".prompt_runner"
    blocked = state / ("amendments" if args[1] in ("amend", "relax") else "control/tmp")
    if blocked.is_dir():
        for child in blocked.iterdir():
            child.unlink()
        blocked.rmdir()
    blocked.write_text("in the way")
    proc = cli(*args[:2], failed, *args[2:], "--json")
    line = _error_line(proc)
    assert line == (
        f"error: {blocked}: cannot be written: it is a file, not a directory; move that file "
        "away, then run again"
    ), line
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 3 and doc["kind"] == "StorageError", doc


def test_the_reading_commands_work_on_a_read_only_state_directory(failed: Path) -> None:
    for args in (
        ("control", "status"),
        ("control", "events"),
        ("control", "log"),
        ("control", "contract", "01"),
    ):
        proc = _read_only_cli(failed, args)
        assert proc.returncode == 0, (args, proc.stderr)
