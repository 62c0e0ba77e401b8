"""Crash safety with real processes: SIGKILL the runner at random points, then resume."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PROMPTS = ["01", "02", "03", "04", "05"]


def _packet(root: Path) -> Path:
    prompts = {}
    for pid in PROMPTS:
        prompts[pid] = {
            "commit": f"feat: {pid}",
            "simulate": {
                "attempts": [
                    {"delay_ms": 80, "error": {"kind": "provider_capacity", "message": "busy"}},
                    {"delay_ms": 80, "writes": [{"path": f"f{pid}.txt", "text": f"content {pid}"}]},
                ]
            },
            "verify": {"contains": [{"path": f"f{pid}.txt", "text": f"content {pid}"}]},
        }
    return make_packet(root, prompts)


def _spawn(packet: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _completed_lines(packet: Path) -> list[str]:
    path = packet / ".prompt_runner" / "progress.log"
    if not path.exists():
        return []
    return [line for line in path.read_text().splitlines() if line.split(":")[1:2] == ["completed"]]


@pytest.mark.slow
def test_sigkill_at_random_points_then_remaining_finishes(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    for trial in range(20):
        packet = _packet(tmp_path / f"t{trial}")
        repo = tmp_path / f"t{trial}" / "repo"
        proc = _spawn(packet)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state_dir = packet / ".prompt_runner"
        state_file = state_dir / "state.json"
        if state_file.exists():
            json.loads(state_file.read_text())  # always a whole document
        for line in _completed_lines(packet):
            pid = line.split(":")[0]
            assert (repo / f"f{pid}.txt").read_text() == f"content {pid}", (trial, line)
        resumed = cli("run", packet, "--remaining")
        assert resumed.returncode == 0, (trial, resumed.stdout, resumed.stderr)
        assert not (state_dir / "run.pid").exists()
        done = [line.split(":")[0] for line in _completed_lines(packet)]
        assert sorted(done) == PROMPTS, (trial, done)
        state = json.loads(state_file.read_text())
        statuses = {p: state["prompts"].get(p, {}).get("status") for p in PROMPTS}
        assert statuses == {p: "completed" for p in PROMPTS}, (trial, statuses)
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True
        )
        assert status.stdout == ""


def test_two_runs_at_once_exactly_one_runs(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"delay_ms": 4000}]},
                "verify": {"files_exist": ["README.md"]},
            }
        },
    )
    first = _spawn(packet, "--no-commit")
    pid_file = packet / ".prompt_runner" / "run.pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists()
    before = pid_file.read_bytes()
    second = cli("run", packet, "--no-commit")
    assert second.returncode == 3, second.stdout + second.stderr
    assert str(first.pid) in second.stderr and "run.pid" in second.stderr
    assert pid_file.read_bytes() == before
    assert first.wait(timeout=60) == 0
    assert not pid_file.exists()


def test_stale_pid_file_from_a_dead_run_does_not_block(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    state_dir = packet / ".prompt_runner"
    state_dir.mkdir()
    (state_dir / "run.pid").write_text("2147483646 12345\n")
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 0, proc.stderr
    assert not (state_dir / "run.pid").exists()


def test_sigterm_stops_the_run_and_removes_the_pid_file(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 30000}]}}})
    proc = _spawn(packet, "--no-commit")
    pid_file = packet / ".prompt_runner" / "run.pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGTERM)
    code = proc.wait(timeout=30)
    assert code != 0
    assert not pid_file.exists()
    current = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())
    assert current["status"] == "interrupted"
    status = json.loads(cli("status", packet, "--json").stdout)["prompts"]["01"]
    assert status["status"] == "interrupted"
    assert [a["status"] for a in status["attempts"]] == ["interrupted"]


def test_plain_run_after_a_crash_resumes_without_rerunning_completed_prompts(
    tmp_path: Path,
) -> None:
    prompts = {
        pid: {
            "commit": f"feat: {pid}",
            "simulate": {
                "attempts": [{"delay_ms": 1500, "writes": [{"path": f"f{pid}.txt", "text": pid}]}]
            },
            "verify": {"files_exist": [f"f{pid}.txt"]},
        }
        for pid in ("01", "02", "03", "04")
    }
    packet = make_packet(tmp_path, prompts)
    proc = _spawn(packet)
    deadline = time.monotonic() + 60
    while len(_completed_lines(packet)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = [line.split(":")[0] for line in _completed_lines(packet)]
    assert len(done_before) >= 2
    # A dead runner's "running" prompt reads as interrupted, in JSON and text alike.
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert doc["runner"] == {"alive": False}
    assert "running" not in {rec["status"] for rec in doc["prompts"].values()}
    again = cli("run", packet)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Skipping " + ", ".join(done_before) in again.stdout
    state = json.loads(cli("status", packet, "--json").stdout)["prompts"]
    for pid in done_before:
        assert [a["mode"] for a in state[pid]["attempts"]] == ["run"], pid
    assert sorted(line.split(":")[0] for line in _completed_lines(packet)) == list(prompts)
    for record in state.values():
        assert all(a["status"] != "running" for a in record["attempts"])
