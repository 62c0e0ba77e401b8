"""A command started in a directory that was deleted under it says so in one
sentence (exit 3) instead of "a file: cannot be used" naming no file (a new
user's finding; cli/exits.py). Real subprocesses through a shell that removes
its own current directory before it starts prompt-runner."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


@pytest.mark.parametrize("command", [("list",), ("status",), ("plan",), ("status", "--json")])
def test_a_deleted_current_directory_is_named(tmp_path: Path, command: tuple[str, ...]) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert cli("run", packet).returncode == 0
    argv = [sys.executable, "-m", "prompt_runner", command[0], str(packet), *command[1:]]
    script = f"mkdir gone && cd gone && rmdir ../gone && exec {shlex.join(argv)}"
    proc = subprocess.run(
        ["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "the current directory no longer exists" in proc.stderr
    assert "Traceback" not in proc.stderr
