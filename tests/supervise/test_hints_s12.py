"""Every command a start message suggests works typed where the user is (nu12 finding 07):
it names the packet (or ``--workspace W``) as the user did, quoted for the shell,
and a run named by the current directory leaves no empty argument behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.supervise.hints import command
from prompt_runner.supervise.start import LiveRun
from prompt_runner.workspace import load_workspace
from prompt_runner.workspace.claims import live_sentence
from tests.helpers.workspaces import make_workspace
from tests.supervise._helpers import slow_packet


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_command_joins_words_without_empty_ones() -> None:
    assert command("stop", "") == "prompt-runner stop"
    assert command("watch", " ") == "prompt-runner watch"
    assert command("control", "events", "", "--follow") == "prompt-runner control events --follow"
    assert command("stop", "'my p' --state-dir s") == "prompt-runner stop 'my p' --state-dir s"


@pytest.mark.parametrize("name", ["p", "my p"])
def test_a_second_start_from_the_parent_names_the_packet(tmp_path: Path, name: str) -> None:
    packet = slow_packet(tmp_path / "root", ids=("01",), delay_ms=8000)
    parent = packet.parent
    typed = packet.name
    if name != packet.name:
        typed = name
        packet = packet.rename(parent / name)
    first = _cli("start", typed, "--containment", "process_group", cwd=parent)
    assert first.returncode == 0, first.stdout + first.stderr
    try:
        quoted = "'my p'" if name == "my p" else typed
        assert f"Stop it: prompt-runner stop {quoted}\n" in first.stdout, first.stdout
        second = _cli("start", typed, cwd=parent)
        assert second.returncode == 3, second.stdout + second.stderr
        assert f"(`prompt-runner stop {quoted}`)" in second.stderr, second.stderr
        assert f"(`prompt-runner watch {quoted}`)" in second.stderr, second.stderr
        # what it says to type works, typed there
        watched = subprocess.run(
            f"prompt-runner watch {quoted} --once".replace(
                "prompt-runner", f"{sys.executable} -m prompt_runner", 1
            ),
            shell=True,
            cwd=parent,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "is not a packet" not in watched.stderr, watched.stderr
    finally:
        stopped = _cli("stop", typed, cwd=parent)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_start_inside_the_packet_leaves_no_empty_argument(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path / "root", ids=("01",), delay_ms=8000)
    first = _cli("start", "--containment", "process_group", cwd=packet)
    assert first.returncode == 0, first.stdout + first.stderr
    try:
        lines = first.stdout.splitlines()
        assert "Stop it: prompt-runner stop" in lines, lines
        assert (
            "Follow it: prompt-runner watch  or  prompt-runner control events --follow" in lines
        ), lines
        assert not any(line.endswith(" ") for line in lines), lines
        second = _cli("start", cwd=packet)
        assert second.returncode == 3, second.stdout + second.stderr
        assert "(`prompt-runner stop`)" in second.stderr, second.stderr
        assert "(`prompt-runner watch`)" in second.stderr, second.stderr
    finally:
        stopped = _cli("stop", cwd=packet)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_prepare_refused_by_a_live_run_quotes_the_manifest(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path / "a b")
    ws = load_workspace(manifest)
    found = LiveRun(4242, None, "process_group", "R")
    said = live_sentence(ws, found)
    ref = f"'{manifest}'"  # not registered: the manifest's path, quoted for the shell
    assert f"(`prompt-runner stop --workspace {ref}`)" in said, said
    assert f"(`prompt-runner watch --workspace {ref}`)" in said, said
