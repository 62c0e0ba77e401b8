"""A ``run --state-dir DIR`` holds the packet's repos while the observers given
no state directory look in the packet's own ``.prompt_runner`` and find no
runner there: ``status`` said "No prompt has run yet." and ``watch --once``
``runner=DOWN`` with no word of the live run (nu14 06); ``stop`` alone said to
pass the same --state-dir. Now each says so too, naming the repo and the pid
(real runs of the simulated provider, real git, the CLI in subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

SLOW = {"simulate": {"attempts": [{"delay_ms": 60000, "writes": [{"path": "f.txt", "text": "x"}]}]}}
SAME = "keeps its state elsewhere: pass the same --state-dir DIR to"


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[tuple[Path, Path, int]]:
    """``(packet, state dir, runner pid)`` of a live run of the packet whose state is elsewhere."""
    packet = make_packet(tmp_path, {"01": SLOW})
    state = tmp_path / "state"
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", packet, "--state-dir", state],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lock = tmp_path / "repo" / ".git" / "prompt-runner.pid"
    deadline = time.monotonic() + 60
    while not (lock.exists() and (state / "run.pid").exists()):
        assert runner.poll() is None and time.monotonic() < deadline, "the run never held the repo"
        time.sleep(0.05)
    try:
        yield packet, state, runner.pid
    finally:
        cli("stop", packet, "--state-dir", state, "--grace", "1")
        runner.kill()
        runner.wait(30)


def test_status_says_where_the_live_run_keeps_its_state(
    elsewhere: tuple[Path, Path, int],
) -> None:
    packet, state, pid = elsewhere
    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stderr
    assert f"Repo 'app' is held by a live run (pid {pid})" in shown.stdout, shown.stdout
    assert f"{SAME} status." in shown.stdout, shown.stdout
    looked = cli("status", packet, "--state-dir", state)  # the right one: no hint
    assert "(runner active)" in looked.stdout and SAME not in looked.stdout, looked.stdout


def test_watch_once_says_where_the_live_run_keeps_its_state(
    elsewhere: tuple[Path, Path, int],
) -> None:
    packet, state, pid = elsewhere
    for args in (("--once",), ("--once", "--json"), ("--once", "--interval", "60")):
        watched = cli("watch", packet, *args)  # the argparse-free path, and the parsed one
        assert watched.returncode == 0, watched.stderr
        line = watched.stdout.strip()
        assert "runner=DOWN" in line or json.loads(line)["runner"] == "down", line
        assert f"live run (pid {pid})" in watched.stderr, (args, watched.stderr)
        assert f"{SAME} watch." in watched.stderr, watched.stderr
    looked = cli("watch", packet, "--once", "--state-dir", state)
    assert "runner=UP" in looked.stdout and SAME not in looked.stderr, looked


def test_steer_says_where_the_live_run_keeps_its_state(
    elsewhere: tuple[Path, Path, int],
) -> None:
    packet, state, pid = elsewhere
    refused = cli("control", "steer", packet, "hello")
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    said = refused.stderr.strip()
    assert said.count("error:") == 1 and "\n" not in said, said
    assert "there is no live or unfinished run to steer; repo 'app' is held by a live run " in said
    assert f"(pid {pid})" in said and said.endswith("pass the same --state-dir DIR to steer."), said
    assert "start the run first" not in said, said
    sent = cli("control", "steer", packet, "hello", "--state-dir", state)
    assert sent.returncode == 0, (sent.stdout, sent.stderr)


def test_no_hint_when_no_run_holds_the_repos(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert SAME not in cli("status", packet).stdout
    assert SAME not in cli("watch", packet, "--once").stderr
    steer = cli("control", "steer", packet, "hello")
    assert steer.returncode == 2 and "start the run first" in steer.stderr, steer.stderr
