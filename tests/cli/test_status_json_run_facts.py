"""``status --json`` carries what the human ``status`` shows: the prompts the
current run selected and never started (``pending``) and how that run stands or
ended (``last_run``: its status, ``finished_at``, targets, a ``stop`` order) --
the human summary said "1 pending" and "Last run ended failed at T" while the
JSON had neither. And where ``status --json``, ``control status --json`` and
``watch --once --json`` report the same fact (the run's id and status, whether
a runner lives, the prompt it was on), they agree. Real runs, real git, real
subprocesses; a real ``kill -9`` of a runner mid-prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.api_status import status as library_status
from prompt_runner.state import status_cache
from tests.helpers.packets import FAST, NOREPAIR, make_packet
from tests.supervise._helpers import cli, run_finished, slow_packet, state, wait_for

NEVER = {"verify": {"files_exist": ["never.txt"]}}
ONE_TRY = {"recovery": {**FAST, **NOREPAIR, "retry": {**FAST["retry"], "max_attempts": 1}}}


def _on_02(packet: Path) -> bool:
    """02's session runs: the control snapshot is on it and its log exists (what
    ``control status`` and ``watch`` name as the prompt)."""
    try:
        snap = json.loads((state(packet) / "control" / "snapshot.json").read_text())
    except (OSError, ValueError):
        return False
    logs = state(packet) / "logs"
    return (
        snap.get("prompt_id") == "02"
        and snap.get("status") == "running"
        and any(logs.glob("prompt-02-*.log"))
    )


def _json(*args: str | Path) -> dict[str, Any]:
    shown = cli(*args)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    doc: dict[str, Any] = json.loads(shown.stdout)
    return doc


def _lines(packet: Path) -> list[str]:
    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return shown.stdout.splitlines()


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 01, 02, 03 that ended ``failed``: 01 completed, 02 failed its
    contract (no repair, one try), 03 never started."""
    packet = make_packet(
        tmp_path_factory.mktemp("partial"), {"01": {}, "02": NEVER, "03": {}}, manifest=ONE_TRY
    )
    ran = cli("run", packet, "--no-commit")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    return packet


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 01, 02, 03 whose runner was killed -9 while 02 ran."""
    packet = slow_packet(tmp_path_factory.mktemp("killed"), delay_ms=3000)
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own group: the kill reaches whatever it started
    )
    try:
        wait_for(lambda: _on_02(packet), 60, "prompt 02's session")
        time.sleep(0.3)  # inside 02's 3 s session
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(timeout=30)
    assert runner.returncode == -signal.SIGKILL
    return packet


def test_a_partial_run_shows_its_pending_prompt_and_its_end_in_both_forms(partial: Path) -> None:
    doc = _json("status", partial, "--json")
    assert doc["pending"] == ["03"]
    last = doc["last_run"]
    assert last["run_id"] == doc["run_id"]
    assert last["status"] == "failed" and "recorded_status" not in last
    assert last["targets"] == ["01", "02", "03"]
    assert last["stop"] is None and last["resumed_at"] is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", last["finished_at"])
    assert last["started_at"] <= last["finished_at"]
    assert {k: v["status"] for k, v in doc["prompts"].items()} == {
        "01": "completed",
        "02": "verification_failed",
    }
    assert doc["runner"] == {"alive": False}

    lines = _lines(partial)
    assert lines[0] == f"Run: {last['run_id']}"
    assert lines[1] == "Prompts: 1 completed, 1 pending, 1 verification_failed"
    assert lines[2] == (
        f"Last run ended failed at {last['finished_at']}; 1 of its 3 prompt(s) not run: 03"
        " -- `prompt-runner run --remaining` runs them"
    )
    assert lines[-1] == f"  03  {'pending':<22} not run yet"

    # the library call is the document the command prints
    assert library_status(partial) == doc


def test_a_run_killed_mid_prompt_is_unknown_with_what_its_file_says(killed: Path) -> None:
    doc = _json("status", killed, "--json")
    assert doc["runner"] == {"alive": False}
    assert doc["pending"] == ["03"]
    last = doc["last_run"]
    assert last["status"] == "unknown" and last["recorded_status"] == "running"
    assert last["finished_at"] is None and last["targets"] == ["01", "02", "03"]
    assert doc["prompts"]["01"]["status"] == "completed"
    assert doc["prompts"]["02"]["status"] == "interrupted"
    assert doc["prompts"]["02"]["recorded_status"] == "running"

    lines = _lines(killed)
    assert lines[1] == "Prompts: 1 completed, 1 interrupted, 1 pending"
    assert lines[2] == (
        "Last run did not finish: its runner is gone; 1 of its 3 prompt(s) not run: 03"
        " -- `prompt-runner run --remaining` runs them"
    )
    assert lines[-1] == f"  03  {'pending':<22} not run yet"


def test_a_packet_never_run_has_every_prompt_pending_and_no_last_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    doc = _json("status", packet, "--json")
    assert doc == {
        "schema_version": 1,
        "version": 1,
        "prompts": {},
        "runner": {"alive": False},
        "pending": ["01", "02"],
        "last_run": None,
    }
    assert _lines(packet) == [
        "Run: (none yet)",
        "No prompt has run yet.",
        "Prompts: 2 pending",
        f"  01  {'pending':<22} not run yet",
        f"  02  {'pending':<22} not run yet",
    ]


def test_a_stop_after_prompt_is_in_last_run(tmp_path: Path) -> None:
    """``stop --after-prompt`` of a detached run: interrupted, the order in
    ``last_run.stop``, the two prompts it never started pending."""
    packet = slow_packet(tmp_path, ids=("01", "02", "03"), delay_ms=2500)
    started = cli("start", packet)
    assert started.returncode == 0, started.stdout + started.stderr
    wait_for(lambda: (state(packet) / "prompts" / "01.jsonl").exists(), 60, "prompt 01 to run")
    stopped = cli("stop", packet, "--after-prompt")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    wait_for(lambda: run_finished(packet), 60, "the run to end")
    doc = _json("status", packet, "--json")
    assert doc["runner"] == {"alive": False}
    assert doc["pending"] == ["02", "03"]
    last = doc["last_run"]
    assert last["status"] == "interrupted" and last["finished_at"]
    assert last["stop"]["after_prompt"] is True
    assert _lines(packet)[2].startswith(
        f"Last run ended interrupted at {last['finished_at']} (a `stop --after-prompt`)"
    )


def _agree(packet: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``status --json``, ``control status --json`` and ``watch --once --json`` of
    ``packet``, after checking every fact two of them report alike."""
    doc = _json("status", packet, "--json")
    control = _json("control", "status", packet, "--json")
    watch = _json("watch", packet, "--once", "--json")
    last = doc["last_run"]
    # the run's identity and status
    assert doc["run_id"] == last["run_id"] == control["run_id"]
    assert last["status"] == control["status"]
    assert last.get("recorded_status") == control.get("recorded_status")
    # whether a runner lives
    assert doc["runner"]["alive"] is (watch["runner"] == "up")
    # the prompt the run was on: a record of this run, and the same one in both
    assert control["prompt_id"] == watch["prompt"]
    assert doc["prompts"][control["prompt_id"]]["run_id"] == last["run_id"]
    assert control["prompt_id"] not in doc["pending"]
    return doc, control, watch


def test_status_control_status_and_watch_agree_on_a_partial_run(partial: Path) -> None:
    doc, control, watch = _agree(partial)
    assert (control["status"], control["prompt_id"], watch["runner"]) == ("failed", "02", "down")
    assert doc["prompts"]["02"]["status"] == "verification_failed"


def test_status_control_status_and_watch_agree_on_a_killed_run(killed: Path) -> None:
    doc, control, watch = _agree(killed)
    assert (control["status"], control["prompt_id"], watch["runner"]) == ("unknown", "02", "down")
    assert doc["prompts"]["02"]["status"] == "interrupted"


def test_a_kept_text_carries_the_new_keys_and_a_new_stop_order_is_folded_anew(
    partial: Path, tmp_path: Path
) -> None:
    """The kept ``status --json`` text (state/status_cache.py) has ``pending`` and
    ``last_run``, and the control snapshot is one of its inputs: a ``stop`` it
    records afterwards is printed, not the text kept before."""
    packet = tmp_path / "packet"
    subprocess.run(["cp", "-a", str(partial), str(packet)], check=True)
    time.sleep(status_cache.SETTLED_NS / 1e9 + 0.2)  # only settled files' fold is kept
    first = _json("status", packet, "--json")
    assert (state(packet) / "status-cache").is_file()
    kept = _json("status", packet, "--json")
    assert kept == first and kept["pending"] == ["03"] and kept["last_run"]["status"] == "failed"

    snapshot_path = state(packet) / "control" / "snapshot.json"
    snapshot = json.loads(snapshot_path.read_text())
    assert snapshot["run_id"] == first["last_run"]["run_id"]
    snapshot["stop"] = {"after_prompt": True, "request": "r1", "author": None, "requested_at": None}
    snapshot_path.write_text(json.dumps(snapshot))
    assert _json("status", packet, "--json")["last_run"]["stop"] == snapshot["stop"]


def test_status_control_status_and_watch_agree_on_a_live_run(tmp_path: Path) -> None:
    """While 02 of 01, 02, 03 runs: running in all three, 03 pending, 02 running."""
    packet = slow_packet(tmp_path, delay_ms=6000)
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: _on_02(packet), 60, "prompt 02's session")
        doc, control, watch = _agree(packet)
        lines = _lines(packet)
        assert runner.poll() is None, "the run ended while it was sampled"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(timeout=30)
    assert (control["status"], control["prompt_id"], watch["runner"]) == ("running", "02", "up")
    assert doc["runner"] == {"alive": True} and doc["last_run"]["status"] == "running"
    assert doc["last_run"]["finished_at"] is None and doc["pending"] == ["03"]
    assert doc["prompts"]["02"]["status"] == "running"
    assert lines[0] == f"Run: {doc['run_id']} (runner active)"
    assert lines[1] == "Prompts: 1 completed, 1 pending, 1 running"
    assert not any(line.startswith("Last run") for line in lines)
