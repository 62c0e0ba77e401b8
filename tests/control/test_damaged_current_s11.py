"""Every control command meets a damaged ``runs/current.json`` with the error
``run`` and ``status`` give: exit 2 and its one sentence -- never the stale
snapshot, events or log, never a queued request. Through the real CLI."""

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
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet whose one run completed (its snapshot, events and log are there)."""
    root = tmp_path_factory.mktemp("ran")
    packet = make_packet(root, {"01": {}})
    done = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    log = _cli(root, "control", "view", "--diff", "stat")  # a control log line
    assert log.returncode == 0, log.stdout + log.stderr
    return root


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_damaged_current_json_is_the_same_error_everywhere(
    ran: Path, command: tuple[str, ...]
) -> None:
    state = ran / "demo" / ".prompt_runner"
    current = state / "runs" / "current.json"
    kept = current.read_text()
    requests = sorted((state / "control" / "requests").iterdir())
    current.write_text('{"run_id": 5')
    try:
        status = _cli(ran, "status")
        got = _cli(ran, *command)
    finally:
        current.write_text(kept)
    assert status.returncode == 2
    assert status.stderr.startswith(
        "error: demo/.prompt_runner/runs/current.json: is not valid JSON at line 1; "
        "delete it; the next run then starts a new run generation"
    )
    _same_error(got, status, 2)
    assert sorted((state / "control" / "requests").iterdir()) == requests  # nothing queued
