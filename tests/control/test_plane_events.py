"""Catalog G8 (event stream archive/append) and the events/log readers."""

from __future__ import annotations

import json
import time
from pathlib import Path

from prompt_runner.control import client
from tests.control._helpers import FAST, NOREPAIR, control, current_run_id, make_packet
from tests.helpers.cli import cli
from tests.helpers.live_run import start_run, wait_for_snapshot


def test_a_fresh_run_archives_the_previous_stream(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [{"messages": ["one"]}]}}})
    assert cli("run", packet, "--no-commit").returncode == 0
    r1 = current_run_id(packet)
    events = control(packet).events_path
    first = events.read_bytes()
    assert first
    assert cli("run", packet, "01", "--no-commit").returncode == 0
    r2 = current_run_id(packet)
    assert r2 != r1
    assert control(packet).archived_events_path(r1).read_bytes() == first
    now = events.read_bytes()
    assert not now.startswith(first)
    sessions = {json.loads(x)["session_id"] for x in now.splitlines() if b"session_started" in x}
    old = {json.loads(x)["session_id"] for x in first.splitlines() if b"session_started" in x}
    assert sessions and not sessions & old
    assert control(packet).event_stream_run_id() == r2


def test_a_resumed_run_appends_to_its_stream(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["later.txt"]}}},
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    assert cli("run", packet, "--no-commit").returncode == 1
    events = control(packet).events_path
    first = events.read_bytes()
    (packet.parent / "repo" / "later.txt").write_text("x")
    assert cli("run", packet, "--remaining", "--no-commit").returncode == 0
    now = events.read_bytes()
    assert len(now) > len(first) and now.startswith(first)
    assert list((events.parent / "events").iterdir()) == []


def test_events_are_json_with_kind_prompt_and_data(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {"messages": ["hello"], "writes": [{"path": "a.txt", "text": "a"}]}
                    ]
                }
            }
        },
    )
    assert cli("run", packet, "--no-commit").returncode == 0
    run_id = current_run_id(packet)
    proc = cli("control", "events", packet, "--json")
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    *events, end = records
    kinds = [r["kind"] for r in events]
    assert kinds[0] == "session_started" and "assistant_text" in kinds and "file_change" in kinds
    assert all(r["prompt_id"] == "01" and isinstance(r["at_ms"], int) for r in events)
    assert all(r["run_id"] == run_id for r in records)  # every event names its run
    assert (end["kind"], end["status"], end["prompt_id"]) == ("run_finished", "completed", None)
    human = cli("control", "events", packet)
    assert "[01] » hello" in human.stdout
    assert human.stdout.splitlines()[-1] == f"Run {run_id} finished: completed"
    assert cli("control", "events", packet, "--from", "current", "--json").stdout == ""


def test_follow_streams_new_events_until_the_run_ends(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {"simulate": {"attempts": [{"delay_ms": 1500, "messages": ["late one"]}]}},
            "02": {"simulate": {"attempts": [{"messages": ["two"]}]}},
        },
    )
    runner = start_run(packet)
    try:
        wait_for_snapshot(packet)
        started = time.monotonic()
        texts = [
            e.get("text")
            for e in client.iter_events(packet, follow=True, poll_s=0.1)
            if e["kind"] == "assistant_text"
        ]
        assert time.monotonic() - started < 30
    finally:
        assert runner.wait(timeout=60) == 0
    assert texts == ["late one", "two"]
    followed_log = cli("control", "log", packet, "--follow", "--json")
    assert followed_log.returncode == 0, followed_log.stderr
    (end,) = [json.loads(line) for line in followed_log.stdout.splitlines()]
    assert (end["kind"], end["run_id"], end["status"]) == (
        "run_finished",
        current_run_id(packet),
        "completed",
    )


def test_follow_ends_with_a_line_naming_the_run_and_its_end(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"delay_ms": 1500, "messages": ["hi"]}]},
                "verify": {"files_exist": ["never.txt"]},
            }
        },
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    runner = start_run(packet)
    try:
        wait_for_snapshot(packet)
        followed = cli("control", "events", packet, "--follow", "--json")
        human = cli("control", "events", packet, "--follow")
    finally:
        assert runner.wait(timeout=60) == 1
    run_id = current_run_id(packet)
    records = [json.loads(line) for line in followed.stdout.splitlines()]
    assert records[-1] == {
        "kind": "run_finished",
        "run_id": run_id,
        "status": "failed",
        "at_ms": records[-1]["at_ms"],
        "prompt_id": None,
    }
    assert [r["kind"] for r in records].count("run_finished") == 1
    assert human.stdout.splitlines()[-1] == f"Run {run_id} finished: failed"
    # A resumed run appends to the stream: following it ends at its own end, not the first.
    resumed = start_run(packet)
    try:
        deadline = time.monotonic() + 30
        while json.loads(control(packet).snapshot_path.read_text()).get("status") != "running":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        again = [
            e["kind"]
            for e in client.iter_events(packet, follow=True, poll_s=0.1)
            if e["kind"] in ("run_finished", "session_started")
        ]
    finally:
        assert resumed.wait(timeout=60) == 1
    assert current_run_id(packet) == run_id
    assert again[-1] == "run_finished" and again.count("run_finished") == 2
    assert again[-2] == "session_started"  # the resumed run's session came after the first end


def test_follow_says_so_when_the_runner_died_without_an_end(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 60_000, "messages": ["x"]}]}}}
    )
    runner = start_run(packet)
    try:
        events = control(packet).events_path
        deadline = time.monotonic() + 30
        while b"session_started" not in (events.read_bytes() if events.exists() else b""):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        runner.kill()
        runner.wait()
    *_, end = list(client.iter_events(packet, follow=True, poll_s=0.1))
    assert (end["kind"], end["run_id"], end["status"], end["recorded"]) == (
        "run_finished",
        current_run_id(packet),
        "unknown",
        False,
    )
    assert "no longer running" in end["reason"]
    human = cli("control", "events", packet, "--follow")
    assert "finished: unknown (the runner is no longer running" in human.stdout.splitlines()[-1]


def test_the_reader_streams_in_bounded_chunks(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    line = json.dumps({"kind": "assistant_text", "text": "x" * 1000}) + "\n"
    path.write_text(line * 3000 + '{"kind": "torn')  # ~3 MB, several chunks, a torn tail
    got = list(client.read_jsonl_stream(path))
    assert len(got) == 3000
    assert got[-1][1] == len(line) * 3000  # offset just past the last whole line
    assert list(client.read_jsonl_stream(path, got[1499][1])) == got[1500:]
