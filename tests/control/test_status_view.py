"""Catalog G1 (control status) and G2 (control view validation), through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.control._helpers import FAST, NOREPAIR, control, current_run_id, make_packet
from tests.helpers.cli import cli
from tests.helpers.live_run import start_run, wait_for_snapshot


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime_ns)
    return out


def test_status_before_any_run_is_bad_input(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    proc = cli("control", "status", packet)
    assert proc.returncode == 2
    assert "this packet has no recorded run" in proc.stderr
    assert not (packet / ".prompt_runner").exists()  # reading created nothing


def test_status_after_a_completed_run_carries_the_dashboard_header(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"]}}},
        manifest={"log_mode": "studio"},
    )
    assert cli("run", packet, "--no-commit").returncode == 0
    state = packet / ".prompt_runner"
    before = _tree(state)
    proc = cli("control", "status", packet, "--json")
    assert proc.returncode == 0, proc.stderr
    snap = json.loads(proc.stdout)
    assert snap["status"] == "completed"
    assert (snap["prompt_id"], snap["prompt_name"], snap["attempt"], snap["mode"]) == (
        "01",
        "Step 01",
        1,
        "run",
    )
    assert (snap["provider"], snap["model"]) == ("simulated", "simulated-demo")
    assert snap["packet"] == packet.name
    assert snap["run_id"] == current_run_id(packet)
    assert snap["view"]["log_mode"] == "studio"
    assert snap["event_count"] >= 2
    for key in ("started_at", "updated_at", "elapsed_ms", "tool_count", "tokens", "steer_count"):
        assert key in snap
    human = cli("control", "status", packet)
    assert human.returncode == 0
    assert "completed" in human.stdout and "Step 01" in human.stdout
    assert _tree(state) == before  # reading status writes nothing


def test_status_of_a_failed_run_says_failed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    assert cli("run", packet, "--no-commit").returncode == 1
    snap = json.loads(cli("control", "status", packet, "--json").stdout)
    assert snap["status"] == "failed"


def test_snapshot_outlives_a_killed_runner_and_reads_unknown(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 30000}]}, "verify": {}}}
    )
    proc = start_run(packet)
    try:
        snap_path = packet / ".prompt_runner" / "control" / "snapshot.json"
        import time

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if snap_path.exists() and json.loads(snap_path.read_text()).get("prompt_id") == "01":
                break
            time.sleep(0.05)
        live = json.loads(cli("control", "status", packet, "--json").stdout)
        assert live["status"] == "running"
        assert live["prompt_id"] == "01"
    finally:
        proc.kill()
        proc.wait()
    dead = json.loads(cli("control", "status", packet, "--json").stdout)
    assert dead["status"] == "unknown"
    assert dead["recorded_status"] == "running"
    assert dead["prompt_id"] == "01"


def test_view_validation_writes_nothing_on_bad_input(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    assert cli("run", packet, "--no-commit").returncode == 0
    requests = control(packet).requests_dir
    bad = cli("control", "view", packet, "--tool-output", "everything")
    assert bad.returncode == 2
    assert "tool_output" in bad.stderr and "everything" in bad.stderr
    assert list(requests.iterdir()) == []
    none = cli("control", "view", packet)
    assert none.returncode == 2
    assert "name at least one setting" in none.stderr
    assert list(requests.iterdir()) == []
    # Refused, and the refusal is in the control log with its reason (SPEC 5).
    refused = [e for e in control(packet).read_log() if e["command"] == "set_view"]
    assert [e["outcome"] for e in refused] == ["rejected", "rejected"]
    assert "invalid value `everything`" in refused[0]["reason"]
    assert refused[0]["params"] == {"tool_output": "everything"}
    assert "name at least one setting" in refused[1]["reason"]
    human = cli("control", "log", packet).stdout
    assert "set_view rejected: tool_output: invalid value `everything`" in human


def test_a_view_with_no_live_run_is_kept_for_the_next_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    assert cli("run", packet, "--no-commit").returncode == 0
    ended = current_run_id(packet)
    ok = cli("control", "view", packet, "--tool-output", "full")
    assert ok.returncode == 0, ok.stderr
    assert "no run is live" in ok.stdout
    assert "the next run of this packet applies it" in ok.stdout
    assert "the run applies it" not in ok.stdout
    as_json = json.loads(cli("control", "view", packet, "--diff", "stat", "--json").stdout)
    assert (as_json["applies_to"], as_json["run_id"]) == ("next_run", None)
    files = sorted(control(packet).requests_dir.iterdir())
    assert len(files) == 2
    request = json.loads(files[0].read_text())
    assert request["command"] == "set_view"
    assert request["params"] == {"tool_output": "full"}
    assert request["run_id"] is None  # not the ended run: the next run takes it
    assert cli("run", packet, "01", "--no-commit").returncode == 0  # a new run generation
    assert current_run_id(packet) != ended
    entries = control(packet).read_log()
    assert [(e["command"], e["outcome"]) for e in entries] == [("set_view", "applied")] * 2
    snap = json.loads(cli("control", "status", packet, "--json").stdout)
    assert (snap["view"]["tool_output"], snap["view"]["diff"]) == ("full", "stat")


def test_a_view_before_any_run_is_kept_for_the_first_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    ok = cli("control", "view", packet, "--log-mode", "verbose")
    assert ok.returncode == 0, ok.stderr
    assert "no run is live; the next run of this packet applies it" in ok.stdout
    assert cli("run", packet, "--no-commit").returncode == 0
    snap = json.loads(cli("control", "status", packet, "--json").stdout)
    assert snap["view"]["log_mode"] == "verbose"


def test_a_view_during_a_live_run_goes_to_that_run(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 3000}]}, "verify": {}}}
    )
    proc = start_run(packet)
    try:
        wait_for_snapshot(packet, lambda snap: snap.get("prompt_id") == "01")
        ok = cli("control", "view", packet, "--tool-output", "full", "--json")
        assert ok.returncode == 0, ok.stderr
        doc = json.loads(ok.stdout)
        assert (doc["applies_to"], doc["run_id"]) == ("live_run", current_run_id(packet))
        human = cli("control", "view", packet, "--diff", "stat")
        assert "the live run applies it at its next event boundary" in human.stdout
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    entries = control(packet).read_log()
    assert [(e["command"], e["outcome"]) for e in entries] == [("set_view", "applied")] * 2


def test_refused_commands_are_logged_with_their_reason(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    assert cli("run", packet, "--no-commit").returncode == 0
    attempts = [
        (("steer", packet, "too late", "--author", "ada"), "steer", "no live or unfinished run"),
        (("amend", packet, "01", "--add-file", "x.txt"), "amend", "--reason is mandatory"),
        (("relax", packet, "01", "--drop", "files_exist", "--reason", "r"), "relax", "--confirm"),
        (("amend", packet, "01", "--add-contains", "oops", "--reason", "r"), "amend", "PATH=TEXT"),
        (("amend", packet, "99", "--add-file", "x", "--reason", "r"), "amend", "99"),
    ]
    for args, command, reason in attempts:
        proc = cli("control", *args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        entry = control(packet).read_log()[-1]
        assert (entry["command"], entry["outcome"]) == (command, "rejected"), entry
        assert reason in entry["reason"], entry
    assert control(packet).read_log()[0]["author"] == "ada"
    assert list(control(packet).requests_dir.iterdir()) == []
    assert not (packet / ".prompt_runner" / "amendments" / "01.jsonl").exists()


def test_unknown_view_key_is_refused_by_the_api(tmp_path: Path) -> None:
    import pytest

    from prompt_runner.control import client
    from prompt_runner.errors import UserError

    packet = make_packet(tmp_path, {"01": {}})
    with pytest.raises(UserError, match="colour"):
        client.set_view(packet, {"colour": "green"}, author="ada")
    assert not (packet / ".prompt_runner" / "control" / "requests").exists()
    (entry,) = control(packet).read_log()
    assert (entry["command"], entry["outcome"], entry["author"]) == ("set_view", "rejected", "ada")
    assert "unknown view setting `colour`" in entry["reason"]


def test_status_events_log_view_steer_stay_off_pydantic(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={"recovery": {"repair": {"enabled": False}}},
    )
    assert cli("run", packet, "--no-commit").returncode == 1  # unfinished: steerable
    code = (
        "import sys\n"
        "from prompt_runner.cli.main import main\n"
        "for argv in (['control','status',P], ['control','events',P,'--json'],"
        " ['control','log',P], ['control','view',P,'--diff','stat'],"
        " ['control','steer',P,'hello']):\n"
        "    assert main(argv) == 0, argv\n"
        "bad = [m for m in ('pydantic', 'yaml', 'ruamel') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", f"P = {str(packet)!r}\n" + code], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_a_snapshot_damaged_by_a_power_loss_reads_as_missing(tmp_path: Path) -> None:
    """snapshot.json is a live view written without fsync; a torn or empty one
    (what a power loss can leave) is not an error, and the next run rewrites it."""
    from prompt_runner.control.store import ControlStore

    root = tmp_path / ".prompt_runner"
    store = ControlStore(root)
    store.init()
    store.write_snapshot({"run_id": "R1", "status": "running"})
    assert store.read_snapshot() == {"run_id": "R1", "status": "running", "schema_version": 1}
    for damaged in (b"", b'{"run_id": "R1", "sta'):
        store.snapshot_path.write_bytes(damaged)
        assert store.read_snapshot() is None
