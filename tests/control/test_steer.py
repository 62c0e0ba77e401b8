"""Catalog G6: a steer interrupts and resumes the same session; audited; never evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prompt_runner.control import client
from prompt_runner.control.plane import ControlPlane
from prompt_runner.render.text import Console
from tests.control._helpers import (
    FAST,
    NOREPAIR,
    control,
    current_run_id,
    log,
    make_packet,
    prompt_record,
    run_file,
    when_session_runs,
)
from tests.helpers.cli import cli

STEERABLE = {"recovery": {**FAST, **NOREPAIR, "max_steers": 2}}


def _packet(tmp_path: Path, *, first: dict[str, Any], verify: dict[str, Any], **kw: Any) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [first],
                    "resume": kw.get(
                        "resume", {"writes": [{"path": "NOTES.md", "text": "steered"}]}
                    ),
                },
                "verify": verify,
            }
        },
        manifest=kw.get("manifest", STEERABLE),
    )


def test_catalog_g6_steer_through_a_resumed_run(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path, first={"messages": ["working"]}, verify={"files_exist": ["NOTES.md"]}
    )
    assert cli("run", packet, "--no-commit").returncode == 1  # NOTES.md missing
    r1 = current_run_id(packet)
    queued = cli("control", "steer", packet, "use the shared helper", "--author", "ada")
    assert queued.returncode == 0, queued.stderr
    assert "Steer queued" in queued.stdout
    assert "no run is live; resuming the unfinished run" in queued.stdout  # says what happens
    (request_file,) = control(packet).requests_dir.iterdir()
    request = json.loads(request_file.read_text())
    assert (request["command"], request["run_id"]) == ("steer", r1)

    resumed = cli("run", packet, "--remaining", "--no-commit")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert current_run_id(packet) == r1
    assert "interrupting to steer" in resumed.stdout
    assert "Resuming the provider thread with the steer" in resumed.stdout
    logs = packet / ".prompt_runner" / "logs"
    assert any(
        "STEER action=resume provider=simulated" in p.read_text() for p in logs.glob("*.log")
    )
    lines = (packet / ".prompt_runner" / "interventions" / "01.jsonl").read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert {k: record[k] for k in ("text", "prompt", "attempt", "author", "lane", "delivery")} == {
        "text": "use the shared helper",
        "prompt": "01",
        "attempt": 1,
        "author": "ada",
        "lane": "simulated",
        "delivery": "interrupt_and_resume",
    }
    assert record["at"]
    state = prompt_record(packet)
    assert state["status"] == "completed"
    assert (state["steered"], state["steer_count"]) == (True, 1)
    assert state["interventions_file"].endswith("interventions/01.jsonl")
    assert [a["mode"] for a in state["attempts"]] == ["run", "run"]  # a steer is no attempt
    entry = json.loads(cli("control", "log", packet, "--json").stdout.splitlines()[-1])
    assert (entry["command"], entry["outcome"], entry["author"]) == ("steer", "applied", "ada")
    assert (entry["prompt_id"], entry["attempt"]) == ("01", 1)
    assert entry["params"]["delivery"] == "interrupt_and_resume"
    assert list(control(packet).requests_dir.iterdir()) == []


def test_live_steer_interrupts_a_running_session_and_reaches_the_next_turn(
    tmp_path: Path,
) -> None:
    packet = _packet(
        tmp_path,
        first={"delay_ms": 20000, "messages": ["never said"]},
        verify={"files_exist": ["NOTES.md"]},
    )
    names: list[str] = []
    thread = when_session_runs(
        packet, lambda: names.append(client.steer(packet, "look at NOTES.md", author="bo"))
    )
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0, out
    assert "never said" not in out  # the first turn was interrupted before it spoke
    assert (packet.parent / "repo" / "NOTES.md").read_text() == "steered"
    state = prompt_record(packet)
    assert (state["steered"], state["steer_count"]) == (True, 1)
    assert [a["mode"] for a in state["attempts"]] == ["run"]
    assert state["attempts"][0]["decision"] == "complete"
    assert client.outcome(packet, names[0])["outcome"] == "applied"  # type: ignore[index]
    assert "steer" in [e["kind"] for e in client.iter_events(packet)]


def test_steer_budget_refuses_the_extra_steer_and_the_run_goes_on(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        first={"delay_ms": 20000},
        verify={"files_exist": ["NOTES.md"]},
        manifest={"recovery": {**FAST, **NOREPAIR}},  # max_steers defaults to 3
    )
    thread = when_session_runs(
        packet, lambda: [client.steer(packet, f"steer {i}", author="ada") for i in range(4)]
    )
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0, out
    steers = [e for e in log(packet) if e["command"] == "steer"]
    assert [e["outcome"] for e in steers] == ["applied"] * 3 + ["rejected"]
    assert "budget spent" in steers[3]["reason"]
    state = prompt_record(packet)
    assert state["steer_count"] == 3
    assert state["status"] == "completed"
    assert [a["mode"] for a in state["attempts"]] == ["run"]  # no retry or repair spent
    lines = (packet / ".prompt_runner" / "interventions" / "01.jsonl").read_text().splitlines()
    assert [json.loads(x)["text"] for x in lines] == ["steer 0", "steer 1", "steer 2"]


def test_a_steer_is_not_evidence(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        first={"delay_ms": 20000},
        verify={"contains": [{"path": "NOTES.md", "text": "the sky is green"}]},
        resume={"messages": ["ok"]},  # the resumed turn writes nothing
    )
    thread = when_session_runs(
        packet, lambda: client.steer(packet, "write 'the sky is green' into NOTES.md")
    )
    result, _ = run_file(packet)
    thread.join()
    assert result.exit_code == 1
    state = prompt_record(packet)
    assert state["status"] == "verification_failed"
    assert state["steered"] is True


def test_a_steer_for_an_ended_run_is_refused_and_the_prompt_is_unsteered(tmp_path: Path) -> None:
    packet = _packet(tmp_path, first={"messages": ["hi"]}, verify={})
    assert cli("run", packet, "--no-commit").returncode == 0
    r1 = current_run_id(packet)
    late = cli("control", "steer", packet, "too late")
    assert late.returncode == 2  # refused up front: no session could ever receive it
    assert "no live or unfinished run to steer" in late.stderr
    assert not list((packet / ".prompt_runner" / "control" / "requests").glob("*"))
    assert cli("run", packet, "01", "--no-commit").returncode == 0
    assert current_run_id(packet) != r1
    state = prompt_record(packet)
    assert state["steered"] is False
    assert "steer_count" not in state


def test_blank_steer_is_refused_before_a_request_is_written(tmp_path: Path) -> None:
    packet = _packet(tmp_path, first={}, verify={})
    proc = cli("control", "steer", packet, "   ")
    assert proc.returncode == 2
    assert "a steer needs something to say" in proc.stderr
    assert not control(packet).requests_dir.exists()
    (entry,) = log(packet)  # the refusal itself is logged
    assert (entry["command"], entry["outcome"]) == ("steer", "rejected")
    assert "a steer needs something to say" in entry["reason"]


def test_a_steer_while_no_prompt_runs_is_refused(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    plane = ControlPlane(root, run_id="R1", packet="demo", console=Console(None))
    plane.start()
    client_store = plane.store
    from prompt_runner.control.requests import build_request

    name = client_store.write_request(
        build_request("steer", {"text": "hi"}, run_id="R1", author=None)
    )
    plane.boundary(None)
    (entry,) = client_store.read_log()
    assert entry["request"] == name
    assert (entry["outcome"], entry["reason"]) == ("rejected", "no prompt is running")
    assert plane.take_steer("01") is None
    assert not (root / "interventions").exists()


def test_a_steered_simulated_session_without_a_resume_script_finishes_its_step(
    tmp_path: Path,
) -> None:
    """Like an agent picking up where a steer stopped it: the cut step's writes
    happen in the resumed turn (without its delay), so the prompt completes."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [{"delay_ms": 20000, "writes": [{"path": "a.txt", "text": "A"}]}]
                },
                "verify": {"files_exist": ["a.txt"]},
            }
        },
        manifest=STEERABLE,
    )
    thread = when_session_runs(packet, lambda: client.steer(packet, "go on", author="bo"))
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0, out
    assert (packet.parent / "repo" / "a.txt").read_text() == "A"
    state = prompt_record(packet)
    assert (state["steered"], state["steer_count"]) == (True, 1)
