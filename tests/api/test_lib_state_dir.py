"""``state_dir=`` on every library call whose CLI command takes ``--state-dir``
(new-user finding t7 #6: ``status()`` took none, so a program could not read
back the ``run(state_dir=...)`` it had just made -- it silently got the
packet's own, empty state).

Each call reads back (or writes into) a real run made with ``state_dir``; the
same call without it sees the packet's own state; the process environment is
the caller's again afterwards. Real runs of the simulated provider.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import InfrastructureError, UserError
from prompt_runner.state.layout import STATE_DIR_ENV
from prompt_runner.state.lock import PidIdentity, process_start_time
from tests.helpers.packets import make_packet

WRITE = {
    "verify": {"files_exist": ["a.txt"]},
    "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "hi"}]}]},
}
FAILS = {"verify": {"files_exist": ["never.txt"]}, "simulate": {"attempts": [{"writes": []}]}}


@pytest.fixture
def ran(tmp_path: Path) -> tuple[Path, Path, str]:
    """``(packet, state_dir, run_id)`` of a completed run kept outside the packet."""
    packet = make_packet(tmp_path, {"01": WRITE})
    state_dir = tmp_path / "elsewhere"
    result = prompt_runner.run(packet, runtime_store="file", state_dir=str(state_dir))
    assert result.exit_code == 0, result
    assert not (packet / ".prompt_runner" / "state.json").exists()
    assert result.run_id is not None
    return packet, state_dir, result.run_id


@pytest.fixture(autouse=True)
def _environment_restored() -> object:
    assert STATE_DIR_ENV not in os.environ
    yield
    assert STATE_DIR_ENV not in os.environ, "a state_dir= call left the environment changed"


def test_status_reads_the_run_kept_in_state_dir(ran: tuple[Path, Path, str]) -> None:
    packet, state_dir, run_id = ran
    doc = prompt_runner.status(packet, state_dir=state_dir)
    assert doc["last_run"]["run_id"] == run_id
    assert doc["prompts"]["01"]["status"] == "completed"
    assert prompt_runner.status(packet)["last_run"] is None  # the packet's own state
    # text, relative to the current directory, as --state-dir takes it
    cwd = os.getcwd()
    os.chdir(state_dir.parent)
    try:
        assert prompt_runner.status(packet, state_dir="elsewhere")["last_run"]["run_id"] == run_id
    finally:
        os.chdir(cwd)


def test_watch_samples_read_the_run_kept_in_state_dir(ran: tuple[Path, Path, str]) -> None:
    packet, state_dir, _ = ran
    assert prompt_runner.watch_sample(packet, state_dir=state_dir).prompt == "01"
    assert prompt_runner.watch_sample(packet).prompt is None
    (sample,) = prompt_runner.watch_samples(packet, once=True, state_dir=state_dir)
    assert sample.prompt == "01"


def test_watch_for_leaves_its_evidence_in_state_dir(ran: tuple[Path, Path, str]) -> None:
    packet, state_dir, _ = ran
    report = prompt_runner.watch_for(packet, for_s=0.2, every_s=0.1, state_dir=state_dir)
    assert report.passed, report
    assert report.evidence.is_relative_to(state_dir), report.evidence
    assert not (packet / ".prompt_runner" / "acceptance").exists()


def test_watch_for_takes_no_state_dir_with_a_workspace(tmp_path: Path) -> None:
    with pytest.raises(prompt_runner.ArgumentError, match=r"watch_for\(state_dir=\.\.\.\)"):
        prompt_runner.watch_for(workspace="ws", for_s=1, state_dir=tmp_path)


def test_control_reads_the_run_kept_in_state_dir(ran: tuple[Path, Path, str]) -> None:
    packet, state_dir, run_id = ran
    assert prompt_runner.control_status(packet, state_dir=state_dir).run_id == run_id
    with pytest.raises(UserError, match="no recorded run"):
        prompt_runner.control_status(packet)
    events = list(prompt_runner.control_events(packet, state_dir=state_dir))
    assert events and events[-1]["kind"] == "run_finished", events[-3:]
    assert events[-1]["run_id"] == run_id


def test_control_requests_go_to_state_dir(ran: tuple[Path, Path, str]) -> None:
    packet, state_dir, _ = ran
    receipt = prompt_runner.control_view(packet, log_mode="verbose", state_dir=state_dir)
    assert (state_dir / "control" / "requests" / receipt.request).exists()
    with pytest.raises(UserError):
        prompt_runner.control_wake(packet, state_dir=state_dir, wait_s=0)  # no live run
    with pytest.raises(UserError):
        prompt_runner.control_steer(packet, "go on", state_dir=state_dir)  # it completed
    log = list(prompt_runner.control_log(packet, state_dir=state_dir))
    commands = [(r.get("command"), r.get("outcome")) for r in log]
    assert ("wake", "rejected") in commands and ("steer", "rejected") in commands, commands
    assert list(prompt_runner.control_log(packet)) == []  # the packet's own log


def test_control_steer_queues_for_the_unfinished_run_in_state_dir(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": FAILS})
    state_dir = tmp_path / "elsewhere"
    assert prompt_runner.run(packet, runtime_store="file", state_dir=state_dir).exit_code == 1
    receipt = prompt_runner.control_steer(packet, "try again", state_dir=state_dir)
    assert (state_dir / "control" / "requests" / receipt.request).exists()
    with pytest.raises(UserError):
        prompt_runner.control_steer(packet, "try again")  # no run in the packet's own state


def test_verify_honours_the_live_run_in_state_dir(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": [{"run": "true"}]}}})
    state_dir = tmp_path / "elsewhere"
    state_dir.mkdir()
    holder = subprocess.Popen(["sleep", "60"])  # a live process holding the run lock
    try:
        start = process_start_time(holder.pid)
        (state_dir / "run.pid").write_text(PidIdentity(holder.pid, start).render())
        with pytest.raises(InfrastructureError):
            prompt_runner.verify(packet, state_dir=state_dir)
        assert prompt_runner.verify(packet)["pass"] is True  # no run holds its own state
    finally:
        holder.kill()
        holder.wait()
    assert prompt_runner.verify(packet, state_dir=state_dir)["pass"] is True


def test_contract_calls_use_the_run_kept_in_state_dir(ran: tuple[Path, Path, str]) -> None:
    packet, state_dir, _ = ran
    amended = prompt_runner.control_amend(
        packet, "01", add={"files_exist": ["b.txt"]}, reason="also b", state_dir=state_dir
    )
    assert Path(amended.amendments_file).is_relative_to(state_dir), amended.amendments_file
    view = prompt_runner.control_contract(packet, "01", state_dir=state_dir)
    assert view.amended and view.amendments, view
    assert not prompt_runner.control_contract(packet, "01").amended  # the packet's own state
