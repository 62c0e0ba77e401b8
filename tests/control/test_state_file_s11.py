"""Every control command meets a ``.prompt_runner`` that is a file with the error
``run`` and ``status`` give: exit 3, "it is a file, not a directory". Through
the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet

COMMANDS = [
    ("control", "status"),
    ("control", "status", "--json"),
    ("control", "events"),
    ("control", "events", "--json"),
    ("control", "log"),
    ("control", "log", "--json"),
    ("control", "view", "--diff", "stat"),
    ("control", "steer", "hi"),
    ("control", "wake"),
    ("control", "contract", "01"),
]


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = list(args)
    argv.insert(2 if argv[0] == "control" else 1, "demo")  # the packet, after the command
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _same_error(
    got: subprocess.CompletedProcess[str], status: subprocess.CompletedProcess[str], code: int
) -> None:
    """``got`` failed with ``code`` and the sentence ``status`` printed: on stderr,
    or with ``--json`` as the error document on stdout."""
    assert got.returncode == code, got.stdout + got.stderr
    if "--json" not in got.args:
        assert (got.stdout, got.stderr) == ("", status.stderr)
        return
    doc = json.loads(got.stdout)
    assert doc["error"] == status.stderr.removeprefix("error: ").rstrip("\n")
    assert doc["exit_code"] == code


@pytest.fixture(scope="module")
def filed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet whose ``.prompt_runner`` is a file."""
    root = tmp_path_factory.mktemp("filed")
    packet = make_packet(root, {"01": {}})
    (packet / ".prompt_runner").write_text("not a directory\n")
    return root


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_state_dir_that_is_a_file_is_exit_3_everywhere(
    filed: Path, command: tuple[str, ...]
) -> None:
    status = _cli(filed, "status")
    got = _cli(filed, *command)
    assert status.returncode == 3
    assert status.stderr.startswith(
        "error: demo/.prompt_runner: cannot be used as the runtime state directory: "
        "it is a file, not a directory; move that file away, then run again"
    )
    _same_error(got, status, 3)
    assert (filed / "demo" / ".prompt_runner").read_text() == "not a directory\n"
