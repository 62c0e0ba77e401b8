"""A completed prompt a later run re-ran and lost to kill -9 is not completed for --remaining."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _packet(root: Path, delay_ms: int) -> Path:
    return make_packet(
        root,
        {
            "01": {
                "commit": "feat: one",
                "simulate": {
                    "attempts": [
                        {"delay_ms": delay_ms, "writes": [{"path": "f1.txt", "text": "1\n"}]}
                    ]
                },
                "verify": {"files_exist": ["f1.txt"]},
            }
        },
    )


def _state(packet: Path) -> dict[str, object]:
    path = packet / ".prompt_runner" / "state.json"
    try:
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


def _current(packet: Path) -> dict[str, object]:
    return json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())  # type: ignore[no-any-return]


def test_a_killed_new_run_is_resumed_by_remaining(tmp_path: Path) -> None:
    packet = _packet(tmp_path, 2500)
    assert cli("run", packet).returncode == 0
    rerun = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--new-run"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            prompts = _state(packet).get("prompts") or {}
            if prompts.get("01", {}).get("status") == "running":  # type: ignore[attr-defined]
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the re-run never started 01")
        os.kill(rerun.pid, signal.SIGKILL)
    finally:
        rerun.wait()
    killed_id = _current(packet)["run_id"]
    assert _current(packet)["status"] == "running"
    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Nothing remaining" not in resumed.stdout
    assert "re-ran it and was interrupted" in resumed.stdout
    assert f"Resuming run {killed_id}: demo, prompts 01" in resumed.stdout
    current = _current(packet)
    assert current["run_id"] == killed_id and current["status"] == "completed"
    prompts = _state(packet)["prompts"]
    assert prompts["01"]["status"] == "completed"  # type: ignore[index]


def test_remaining_closes_a_dead_run_whose_prompts_all_completed(tmp_path: Path) -> None:
    """kill -9 after the last prompt ended, before the run was closed: what it
    leaves is current.json ``running`` and a dead run.pid."""
    packet = _packet(tmp_path, 0)
    assert cli("run", packet).returncode == 0
    state_dir = packet / ".prompt_runner"
    current = _current(packet)
    current["status"] = "running"
    del current["finished_at"]
    (state_dir / "runs" / "current.json").write_text(json.dumps(current))
    (state_dir / "run.pid").write_text("2147483646 12345\n")
    again = cli("run", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Nothing remaining" in again.stdout and "recorded completed" in again.stdout
    closed = _current(packet)
    assert closed["status"] == "completed" and closed["closed_by"] == "remaining"
    assert not (state_dir / "run.pid").exists()
