"""The control snapshot says the stage -- verifying, committing, since when --
while a slow verify command or commit hook runs outside a session (t6 #11)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import prompt_runner
from tests.helpers.packets import make_packet


def hook(repo: Path, body: str) -> Path:
    path = repo / ".git" / "hooks" / "pre-commit"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


# -- 4. the snapshot says the stage while a hook or a verify command runs (t6 #11) ----


def _snapshot(packet: Path) -> dict[str, Any]:
    path = packet / ".prompt_runner" / "control" / "snapshot.json"
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def _wait_for(path: Path, runner: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert runner.poll() is None, "the run ended before the stage began"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _blocking(started: Path, release: Path) -> str:
    """Shell that says it began, then waits (up to 60 s) for ``release``."""
    return (
        f"touch '{started}'; i=0; while [ ! -e '{release}' ] && [ $i -lt 1200 ]; "
        "do sleep 0.05; i=$((i+1)); done"
    )


def _staged_while_blocked(
    tmp_path: Path, packet: Path, started: Path, release: Path
) -> tuple[dict[str, Any], dict[str, Any], float, float]:
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet)]
    runner = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(started, runner)
        began = time.time()
        time.sleep(0.5)  # the deferred snapshot write lands
        during = _snapshot(packet)
        release.touch()
        assert runner.wait(timeout=60) == 0
    finally:
        release.touch()
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    return during, _snapshot(packet), began, time.time()


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_the_snapshot_says_committing_while_a_slow_commit_hook_runs(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]},
                "verify": {"contains": [{"path": "a.txt", "text": "Hello"}]},
            }
        },
    )
    started, release = tmp_path / "hook-started", tmp_path / "release"
    hook(tmp_path / "repo", _blocking(started, release))
    during, after, began, _ = _staged_while_blocked(tmp_path, packet, started, release)
    stage = during.get("stage")
    assert isinstance(stage, dict), during
    assert (stage["name"], stage["prompt_id"]) == ("committing", "01")
    assert _epoch(stage["since"]) <= began + 0.5
    assert during["prompt_id"] == "01" and during["status"] == "running"
    assert after["stage"] is None and after["status"] == "completed"


def test_the_snapshot_says_verifying_while_a_slow_verify_command_runs(tmp_path: Path) -> None:
    started, release = tmp_path / "verify-started", tmp_path / "release"
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]},
                "verify": {
                    "commands": [{"run": _blocking(started, release), "timeout_ms": 90_000}]
                },
            }
        },
    )
    during, after, began, _ = _staged_while_blocked(tmp_path, packet, started, release)
    stage = during.get("stage")
    assert isinstance(stage, dict), during
    assert (stage["name"], stage["prompt_id"]) == ("verifying", "01")
    assert _epoch(stage["since"]) <= began + 0.5
    assert after["stage"] is None and after["status"] == "completed"


def test_no_stage_is_shown_by_a_run_without_a_control_plane(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]},
                "verify": {"contains": [{"path": "a.txt", "text": "Hello"}]},
            }
        },
    )
    result = prompt_runner.run(packet)  # in memory: no snapshot, no stage, no error
    assert result.prompts == {"01": "completed"}
    assert not (packet / ".prompt_runner" / "control").exists()


def _shown_stage(reader: Any, seconds: float = 5.0) -> Any:
    """The stage the snapshot on disk shows once the stage thread wrote it."""
    deadline = time.monotonic() + seconds
    while True:
        stage = (reader.read_snapshot() or {}).get("stage")
        if stage is not None or time.monotonic() > deadline:
            return stage
        time.sleep(0.02)


def test_a_stage_is_shown_once_it_lasts_and_a_short_one_is_never_written(
    tmp_path: Path,
) -> None:
    from prompt_runner.control.plane import STAGE_SHOWN_AFTER_S, ControlPlane
    from prompt_runner.control.store import ControlStore
    from prompt_runner.render.text import Console

    (tmp_path / "prompt_runner_packet.md").write_text("---\nname: demo\n---\n")
    root = tmp_path / ".prompt_runner"
    plane = ControlPlane(root, run_id="R1", packet="demo", console=Console(None), notify=False)
    plane.start()
    reader = ControlStore(root)  # as control status reads it
    snapshot = root / "control" / "snapshot.json"
    try:
        # A short stage (most commits and verifications) costs no snapshot write.
        written = snapshot.stat().st_mtime_ns, snapshot.read_bytes()
        short = plane.enter_stage("01", "verifying")
        plane.leave_stage(short)
        time.sleep(STAGE_SHOWN_AFTER_S * 2)
        assert (snapshot.stat().st_mtime_ns, snapshot.read_bytes()) == written
        # A long one is shown once it has lasted, nested ones in turn, each end at once.
        outer = plane.enter_stage("01", "committing")
        assert outer is None
        assert (reader.read_snapshot() or {}).get("stage") is None  # not yet
        shown = _shown_stage(reader)
        assert (shown["name"], shown["prompt_id"]) == ("committing", "01")
        inner = plane.enter_stage("01", "verifying")  # a hook changed the commit: verified again
        deadline = time.monotonic() + 5
        while (reader.read_snapshot() or {})["stage"]["name"] != "verifying":
            assert time.monotonic() < deadline, "the inner stage was never shown"
            time.sleep(0.02)
        plane.leave_stage(inner)
        assert (reader.read_snapshot() or {})["stage"]["name"] == "committing"
        plane.leave_stage(outer)
        assert (reader.read_snapshot() or {})["stage"] is None
    finally:
        plane.finish("completed")


def test_control_status_names_the_stage_a_running_snapshot_holds() -> None:
    """The human ``control status`` header says what runs outside a session."""
    from prompt_runner.cli.controlling import status_lines

    snap = {
        "run_id": "r1",
        "packet": "p",
        "status": "running",
        "prompt_id": "01",
        "stage": {"name": "committing", "prompt_id": "01", "since": "2026-12-02T06:00:00Z"},
    }
    assert "Stage committing (prompt 01) since 2026-12-02T06:00:00Z" in status_lines(snap)
    ended = {**snap, "status": "completed"}
    assert not any(line.startswith("Stage") for line in status_lines(ended))
    assert not any(line.startswith("Stage") for line in status_lines({**snap, "stage": None}))
