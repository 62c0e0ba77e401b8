"""One attempt of a member on a worker, without a Temporal service: the state ref, a
dying predecessor that holds the run lock, and how outcomes become Temporal's."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

from temporalio.exceptions import ApplicationError, CancelledError

import prompt_runner
from prompt_runner.fleet.stateref import StateRef, StateRefRejected, truth_files
from prompt_runner.fleet.temporal import member
from prompt_runner.fleet.temporal.activities import outcome_result
from prompt_runner.fleet.temporal.client import member_manifest
from prompt_runner.state.fleet_layout import WorkerLayout
from prompt_runner.state.lock import identity_alive, read_pid_file
from prompt_runner.workspace.runspec import run_command
from tests.helpers.fleets import make_fleet, sleepy_prompts


def _attempt(tmp_path: Path, worker: str, delay_ms: int = 0) -> member.Attempt:
    if not (tmp_path / "fleet" / "fleet.yml").exists():
        make_fleet(tmp_path, 1, prompts=sleepy_prompts(3, delay_ms=delay_ms))
    fleet = prompt_runner.load_fleet(tmp_path / "fleet" / "fleet.yml")
    m = fleet.members[0]
    return member.Attempt(
        fleet.id, m.id, member_manifest(m), worker, WorkerLayout(tmp_path / worker)
    )


def test_a_dying_predecessor_is_stopped_without_spending_an_attempt(tmp_path: Path) -> None:
    attempt = _attempt(tmp_path, "w1", delay_ms=1500)
    ws = member.materialize(attempt)
    member.sync(attempt, ws, lambda _: None)
    cmd = run_command(ws, remaining=True)
    earlier = subprocess.Popen(
        cmd.argv,
        cwd=cmd.cwd,
        env=cmd.full_env(os.environ),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not ((i := read_pid_file(ws.layout.state.run_pid)) and identity_alive(i)):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        beats: list[object] = []
        said: list[str] = []
        out = member.run_member(
            attempt,
            mailbox=member.NoMailbox(),
            beat=beats.append,
            cancelled=lambda: False,
            tick_s=0.2,
            say=said.append,
        )
    finally:
        if earlier.poll() is None:
            earlier.kill()
        earlier.wait()
    assert out["state"] == "completed" and out["exit"] == 0, out
    assert any("an earlier runner" in line for line in said), said
    assert earlier.returncode is not None  # the predecessor was ended, not waited out
    assert out["row"]["completed"] == 3 and out["host"] == "w1"
    assert beats and all(b["host"] == "w1" for b in beats if isinstance(b, dict))
    lines = ws.layout.state.progress_log.read_text().splitlines()
    assert [x.split(":")[0] for x in lines if ":completed" in x] == ["01", "02", "03"]


def test_the_state_ref_restores_on_another_worker_and_refuses_a_stale_one(
    tmp_path: Path,
) -> None:
    first = _attempt(tmp_path, "wa")
    out = member.run_member(
        first,
        mailbox=member.NoMailbox(),
        beat=lambda _: None,
        cancelled=lambda: False,
        tick_s=0.2,
    )
    assert out["state"] == "completed"
    ws_a = member.materialize(first)
    pushed = (tmp_path / "wa" / "mig" / "mig-t0" / "state-ref").read_text().strip()
    second = _attempt(tmp_path, "wb")
    ws_b = member.materialize(second)
    ref_b, tip = member.sync(second, ws_b, lambda _: None)
    assert tip == pushed
    names = sorted(str(p.relative_to(ws_b.state_dir)) for p in truth_files(ws_b.layout.state))
    assert names == sorted(
        str(p.relative_to(ws_a.state_dir)) for p in truth_files(ws_a.layout.state)
    )
    assert (
        ws_b.layout.state.progress_log.read_bytes() == ws_a.layout.state.progress_log.read_bytes()
    )
    # b goes on and pushes; a, stale, is refused
    ws_b.layout.state.progress_log.write_text(
        ws_b.layout.state.progress_log.read_text() + "04:failed:2026-01-01T00:00:00Z\n"
    )
    newer = ref_b.push(tip, who="wb")
    assert newer != tip
    ws_a.layout.state.progress_log.write_text("")
    with pytest.raises(StateRefRejected, match="another worker runs this member now"):
        StateRef(ws_a, "mig").push(pushed, who="wa")
    # a worker that comes back to it discards its superseded copy and restores b's
    said: list[str] = []
    member.sync(first, ws_a, said.append)
    assert "another worker ran it since" in said[0]
    assert "04:failed" in ws_a.layout.state.progress_log.read_text()


def test_outcomes_become_temporal_results_and_errors() -> None:
    base = {"reason": "why", "row": {"workspace": "w"}, "host": "h", "exit": None}
    assert outcome_result({**base, "state": "completed"}, attempt=2)["attempt"] == 2
    for state, kind, final in [
        ("failed", "PacketFailed", True),
        ("bad_input", "BadInput", True),
        ("stopped", "Stopped", True),
        ("infrastructure", "Infrastructure", False),
        ("superseded", "Superseded", False),
    ]:
        with pytest.raises(ApplicationError) as caught:
            outcome_result({**base, "state": state}, attempt=1)
        assert (caught.value.type, caught.value.non_retryable) == (kind, final)
        assert caught.value.details[0]["state"] == state
        assert caught.value.message == "w: why"
    with pytest.raises(CancelledError):
        outcome_result({**base, "state": "cancelled"}, attempt=1)
