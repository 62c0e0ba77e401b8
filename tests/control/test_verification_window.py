"""Amendments and steers that arrive while a prompt is being verified (issue 12, items 8-9).

A real runner process verifies a prompt whose contract has a gate command: it
writes a flag file when verification starts and waits until the test creates
a go file, so the test acts exactly while the verification is in progress.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.control._helpers import FAST, NOREPAIR, Gate, log, make_packet, prompt_record
from tests.helpers.cli import cli
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.providers.conftest import case_dir

QUIET = {"recovery": {**FAST, **NOREPAIR}}
ONE_REPAIR = {"recovery": {**FAST, "repair": {"enabled": True, "max_attempts": 1}}}


def _start_run(
    packet: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


@contextlib.contextmanager
def _running(
    packet: Path, *extra: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """The run in a process (:func:`_start_run`); killed if it still runs when the block
    ends, its pipe closed however the block ends (a failed test leaves nothing open)."""
    with _start_run(packet, *extra, env=env) as runner:
        try:
            yield runner
        finally:
            if runner.poll() is None:
                runner.kill()


def _finish(runner: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = runner.communicate(timeout=120)
    return runner.returncode, out


def _while_verifying(
    packet: Path, gate: Gate, *control_args: str
) -> tuple[subprocess.CompletedProcess[str], int, str]:
    """Run the packet; while 01 is being verified run `control ARGS`; return both."""
    with _running(packet) as runner:
        try:
            gate.wait_started(runner)
            sent = cli("control", *control_args)
        finally:
            gate.open()
        code, out = _finish(runner)
    return sent, code, out


# -- item 8: amendments during verification ------------------------------------------------


@pytest.mark.parametrize("persist", [False, True], ids=["run_local", "persist"])
def test_an_amend_during_verification_is_applied_to_that_verification(
    tmp_path: Path, persist: bool
) -> None:
    gate = Gate(tmp_path)
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"], "commands": [gate.command()]},
            }
        },
        manifest=QUIET,
    )
    flags = ["--persist"] if persist else []
    sent, code, out = _while_verifying(
        packet, gate, "amend", packet, "01", "--add-file", "never.txt", "--reason", "r", *flags,
        "--json",
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    target = json.loads(sent.stdout)["record"]["applies_to"]
    assert (target["verification"], target["prompt"], target["attempt"]) == ("in_progress", "01", 1)
    # The receipt said "this verification": the verdict is judged against the amendment.
    assert code == 1, out
    record = prompt_record(packet)
    assert record["status"] == "verification_failed", record
    (attempt,) = record["attempts"]
    unmet = [i.get("path") for i in attempt["verifier"]["items"] if not i["pass"]]
    assert unmet == ["never.txt"], attempt["verifier"]
    assert "verifying again" in out
    assert record["amended"] is True


def test_the_human_receipt_names_the_verification_in_progress(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"], "commands": [gate.command()]}}},
        manifest=QUIET,
    )
    sent, code, out = _while_verifying(
        packet, gate, "amend", packet, "01", "--add-file", "README.md", "--reason", "r"
    )
    assert sent.returncode == 0, sent.stderr
    assert "Applies to the verification of 01 in progress (attempt 1" in sent.stdout
    assert code == 0, out


def test_a_relax_during_verification_counts_without_a_repair(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"messages": ["did nothing"]}]},
                "verify": {"files_exist": ["never.txt"], "commands": [gate.command()]},
            }
        },
        manifest=ONE_REPAIR,
    )
    sent, code, out = _while_verifying(
        packet, gate, "relax", packet, "01", "--drop", "files_exist", "--reason", "wrong",
        "--confirm",
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    assert code == 0, out
    record = prompt_record(packet)
    assert record["status"] == "completed"
    assert [a["mode"] for a in record["attempts"]] == ["run"]  # no repair was spent


def _completed_once(tmp_path: Path) -> Path:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            },
        },
        manifest=QUIET,
    )
    first = cli("run", packet, "--no-commit")
    assert first.returncode == 0, first.stdout + first.stderr
    return packet


def test_remaining_revisits_a_completion_judged_under_an_older_persisted_contract(
    tmp_path: Path,
) -> None:
    packet = _completed_once(tmp_path)
    amended = cli(
        "control", "amend", packet, "01", "--add-file", "b.txt", "--reason", "r", "--persist",
        "--json",
    )  # fmt: skip
    assert amended.returncode == 0, amended.stderr
    target = json.loads(amended.stdout)["record"]["applies_to"]
    assert target["verification"] == "deferred"
    assert "--remaining" in target["note"]
    plan = json.loads(cli("plan", packet, "--remaining", "--json").stdout)
    assert plan["selected"] == ["01"]
    assert any("01" in note and "contract" in note for note in plan["notes"]), plan["notes"]
    listed = json.loads(cli("list", packet, "--json").stdout)["prompts"]
    assert [row["status"] for row in listed] == ["contract_changed"]
    again = cli("run", packet, "--remaining", "--no-commit")
    assert again.returncode == 1, again.stdout + again.stderr  # b.txt is required now
    assert prompt_record(packet)["status"] == "verification_failed"


def test_remaining_completes_a_revisited_prompt_that_already_meets_the_new_contract(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            },
        },
        manifest=QUIET,
    )
    first = cli("run", packet)  # committed: pre-flight verification needs a clean tree
    assert first.returncode == 0, first.stdout + first.stderr
    repo = tmp_path / "repo"
    (repo / "b.txt").write_text("b")
    subprocess.run(["git", "add", "b.txt"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "b"], cwd=repo, check=True)
    amended = cli(
        "control", "amend", packet, "01", "--add-file", "b.txt", "--reason", "r", "--persist"
    )
    assert amended.returncode == 0, amended.stderr
    assert "Deferred" in amended.stdout
    again = cli("run", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "01 already satisfies its contract" in again.stdout  # pre-flight, no session
    done = cli("plan", packet, "--remaining", "--json")
    assert json.loads(done.stdout)["selected"] == []  # judged under the new contract now


def test_a_resumed_run_revisits_a_prompt_whose_contract_was_persisted_after_it_completed(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            },
            "02": {"verify": {"files_exist": ["never.txt"]}},
        },
        manifest=QUIET,
    )
    assert cli("run", packet, "--no-commit").returncode == 1  # 02 fails: the run is unfinished
    amended = cli(
        "control", "amend", packet, "01", "--add-file", "b.txt", "--reason", "r", "--persist"
    )
    assert amended.returncode == 0, amended.stderr
    resumed = cli("run", packet, "--no-commit")
    assert "Resuming run" in resumed.stdout, resumed.stdout + resumed.stderr
    assert "Skipping 01" not in resumed.stdout
    assert prompt_record(packet)["status"] == "verification_failed"  # b.txt: the new contract


def test_a_run_local_amend_of_a_completed_prompt_says_it_is_deferred(tmp_path: Path) -> None:
    packet = _completed_once(tmp_path)
    amended = cli(
        "control", "amend", packet, "01", "--add-file", "b.txt", "--reason", "r", "--json"
    )
    assert amended.returncode == 0, amended.stderr
    target = json.loads(amended.stdout)["record"]["applies_to"]
    assert target["verification"] == "deferred"
    assert "run PACKET 01" in target["note"]
    # Documented: a run-local amendment never reopens a completed prompt for --remaining.
    assert json.loads(cli("plan", packet, "--remaining", "--json").stdout)["selected"] == []


def test_an_amend_before_any_run_applies_to_the_next_verification(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    amended = cli(
        "control", "amend", packet, "01", "--add-file", "README.md", "--reason", "r", "--json"
    )
    assert amended.returncode == 0, amended.stderr
    target = json.loads(amended.stdout)["record"]["applies_to"]
    assert target["verification"] == "next"


# -- item 9: steers during verification -----------------------------------------------------


def test_a_steer_during_verification_reaches_the_repair_session(tmp_path: Path) -> None:
    """The CLI says the next session gets it, and the repair's prompt carries it."""
    gate = Gate(tmp_path)
    lines = (case_dir("claude", "success_write") / "stdout.jsonl").read_text()
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    record_file = tmp_path / "rec.jsonl"
    config = write_config(
        tmp_path / "fake.json",
        record_file,
        [
            {"stdout": lines, "exit_code": 0},
            {"stdout": lines, "exit_code": 0, "writes": {"NOTES.md": "steered"}},
        ],
    )
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["NOTES.md"], "commands": [gate.command()]}}},
        manifest={**ONE_REPAIR, "profile": None, "provider": "claude", "model": None},
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    with _running(packet, env=env) as runner:
        try:
            gate.wait_started(runner)
            sent = cli("control", "steer", packet, "write NOTES.md first", "--author", "ada")
        finally:
            gate.open()
        code, out = _finish(runner)
    assert sent.returncode == 0, sent.stderr
    assert "prompt 01 is being verified" in sent.stdout
    assert "its next session" in sent.stdout
    assert code == 0, out
    invocations = read_records(record_file)
    assert len(invocations) == 2
    assert "write NOTES.md first" not in json.dumps(invocations[0])
    assert "write NOTES.md first" in invocations[1]["stdin"]  # the repair's prompt
    state = prompt_record(packet)
    assert [a["mode"] for a in state["attempts"]] == ["run", "repair"]
    assert (state["steered"], state["steer_count"]) == (True, 1)
    (steer,) = [e for e in log(packet) if e["command"] == "steer"]
    assert steer["outcome"] == "applied", steer
    assert steer["params"]["delivery"] == "next_session"
    (line,) = (packet / ".prompt_runner" / "interventions" / "01.jsonl").read_text().splitlines()
    intervention = json.loads(line)
    assert (intervention["attempt"], intervention["delivery"]) == (2, "next_session")


def test_a_steer_during_a_final_verification_is_refused_with_the_reason(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"], "commands": [gate.command()]}}},
        manifest=QUIET,
    )
    sent, code, out = _while_verifying(packet, gate, "steer", packet, "too late?", "--json")
    assert sent.returncode == 0, sent.stderr
    doc = json.loads(sent.stdout)
    assert (doc["prompt_id"], doc["stage"]) == ("01", "verifying")
    assert code == 0, out
    (steer,) = [e for e in log(packet) if e["command"] == "steer"]
    assert steer["outcome"] == "rejected"
    assert "no prompt is running" not in steer["reason"]
    assert "01" in steer["reason"] and "no further session" in steer["reason"]
    state = prompt_record(packet)
    assert state["steered"] is False
    assert not (packet / ".prompt_runner" / "interventions").exists()


def test_a_persisted_amend_enforced_by_the_live_run_leaves_the_completion_standing(
    tmp_path: Path,
) -> None:
    """The completion was judged against what the prompt file now says: --remaining skips it."""
    gate = Gate(tmp_path)
    packet = make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["README.md"], "commands": [gate.command()]}},
            "02": {
                "simulate": {"attempts": [{"writes": [{"path": "p02.txt", "text": "x"}]}]},
                "verify": {"files_exist": ["README.md"]},
            },
        },
        manifest=QUIET,
    )
    sent, code, out = _while_verifying(
        packet, gate, "amend", packet, "02", "--add-file", "p02.txt", "--reason", "r", "--persist"
    )
    assert sent.returncode == 0, sent.stderr
    assert "Applies to the next verification of 02" in sent.stdout
    assert code == 0, out
    assert prompt_record(packet, "02")["amended"] is True
    plan = json.loads(cli("plan", packet, "--remaining", "--json").stdout)
    assert plan["selected"] == [] and plan["notes"] == []


def test_an_amend_request_through_the_transport_names_its_verification(tmp_path: Path) -> None:
    from prompt_runner.control import client
    from tests.control._helpers import run_file, when_session_runs

    packet = make_packet(
        tmp_path,
        {"01": {"simulate": {"attempts": [{"delay_ms": 1500}]}, "verify": {"files_exist": []}}},
        manifest=QUIET,
    )
    params = {"prompt_id": "01", "add": {"files_exist": ["README.md"]}, "reason": "r"}
    thread = when_session_runs(packet, lambda: client.submit(packet, "amend", params))
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0, out
    (entry,) = [e for e in log(packet) if e["command"] == "amend"]
    assert entry["outcome"] == "applied"
    assert (entry["applies_to"]["verification"], entry["applies_to"]["prompt"]) == ("next", "01")
