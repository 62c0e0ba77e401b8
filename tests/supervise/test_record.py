"""The supervisor record: identity by pid + start time, a damaged record, bad targets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import StateError, UserError
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.lock import process_start_time
from prompt_runner.supervise import SupervisorRecord, live_run, read_record
from prompt_runner.supervise.record import write_record
from prompt_runner.supervise.target import Supervised
from tests.supervise._helpers import cli, record, slow_packet, state, wait_for


def _record(pid: int, start_time: int | None) -> SupervisorRecord:
    return SupervisorRecord(
        containment="process_group",
        pid=pid,
        start_time=start_time,
        marker="m1",
        argv=("python", "-m", "prompt_runner", "run", "/p"),
        cwd="/p",
        state_dir="/p/.prompt_runner",
        stdout="/p/out",
        stderr="/p/err",
        started_at="2026-08-10T12:00:00Z",
        env_names=("PATH",),
    )


def test_a_recycled_pid_is_never_taken_for_the_run(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path / "state")
    sup = Supervised("demo", layout, layout.supervisor)
    me = os.getpid()
    start = process_start_time(me)
    assert start is not None
    write_record(layout.supervisor.record, _record(me, start))
    found = live_run(sup, read_record(layout.supervisor.record))
    assert found is not None and found.pid == me and found.containment == "process_group"
    # the same pid with another start time: another process, the run is not live
    write_record(layout.supervisor.record, _record(me, start - 1))
    assert live_run(sup, read_record(layout.supervisor.record)) is None
    round_trip = read_record(layout.supervisor.record)
    assert round_trip == _record(me, start - 1)


def test_a_damaged_record_is_an_error_naming_the_file(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01",), delay_ms=0)
    path = state(packet) / "supervisor" / "record.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "prompt_runner.supervisor/v1", "pid": "x"}')
    with pytest.raises(StateError, match="is not a supervisor record"):
        read_record(path)
    started = cli("start", packet)
    assert started.returncode == 2, started.stdout + started.stderr
    assert "supervisor/record.json" in started.stderr and "delete it" in started.stderr
    assert "Traceback" not in started.stderr
    assert not (state(packet) / "run.pid").exists()  # nothing was launched


def test_what_is_neither_a_packet_nor_a_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        prompt_runner.start(tmp_path / "nowhere")
    refused = cli("stop", tmp_path / "nowhere")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    with pytest.raises(UserError, match="unknown containment"):
        prompt_runner.start(slow_packet(tmp_path, ids=("01",)), containment="docker")


def test_a_foreground_run_is_refused_by_start_and_ended_by_stop(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01", "02"), delay_ms=3000)
    foreground = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: (state(packet) / "control" / "snapshot.json").exists(), 30, "the run")
        refused = cli("start", packet)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert f"pid {foreground.pid} (not started by `start`" in refused.stderr
        stopped = cli("stop", packet, "--json")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert foreground.wait(timeout=30) == 143  # it ended on the request, as SIGTERM would
        assert '"request_outcome": "applied"' in stopped.stdout
    finally:
        foreground.kill()
        foreground.wait()
    assert not (state(packet) / "supervisor" / "record.json").exists()
    with pytest.raises(FileNotFoundError):
        record(packet)
