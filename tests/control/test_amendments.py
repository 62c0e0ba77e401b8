"""Catalog G3 (amendment governance) and G4 (timing), plus enforcement and --persist."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prompt_runner import api
from prompt_runner.control.amendments import effective_contract
from prompt_runner.packet.loader import load_packet
from tests.control._helpers import FAST, NOREPAIR, Gate, make_packet, prompt_record, run_file
from tests.helpers.cli import cli

QUIET = {"recovery": {**FAST, **NOREPAIR}}


def _records(packet: Path, prompt_id: str = "01") -> list[dict[str, object]]:
    path = packet / ".prompt_runner" / "amendments" / f"{prompt_id}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_catalog_g3_governance(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}}, manifest=QUIET
    )
    amendments = packet / ".prompt_runner" / "amendments" / "01.jsonl"
    no_reason = cli("control", "amend", packet, "01", "--add-file", "lib/foo.ex")
    assert no_reason.returncode == 2 and "--reason is mandatory" in no_reason.stderr
    assert not amendments.exists()
    unconfirmed = cli(
        "control", "relax", packet, "01", "--drop", "files_exist", "--reason", "was wrong"
    )
    assert unconfirmed.returncode == 2 and "relax needs --confirm" in unconfirmed.stderr
    assert not amendments.exists()
    typo = cli(
        "control", "relax", packet, "01", "--drop", "file_exists", "--reason", "t", "--confirm"
    )
    assert typo.returncode == 2 and "unknown clause `file_exists`" in typo.stderr
    nothing = cli("control", "amend", packet, "01", "--reason", "why")
    assert nothing.returncode == 2 and "name what to add" in nothing.stderr
    assert not amendments.exists()
    ok = cli(
        "control", "relax", packet, "01", "--drop", "files_exist",
        "--reason", "the requirement was wrong", "--confirm",
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    (record,) = _records(packet)
    assert (record["direction"], record["operation"], record["reason"]) == (
        "relax",
        "drop",
        "the requirement was wrong",
    )
    assert "- files_exist: README.md" in ok.stdout  # shown as a diff


def test_catalog_g4_phase_follows_the_latest_verification(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["README.md"]}},
            "02": {"verify": {"files_exist": ["never.txt"]}},
        },
        manifest={**QUIET, "failure_policy": None},
    )
    assert (
        cli("control", "amend", packet, "01", "--add-file", "README.md", "--reason", "r").returncode
        == 0
    )
    assert _records(packet)[-1]["phase"] == "pre_verify"
    assert cli("run", packet, "01", "--no-commit").returncode == 0
    assert (
        cli("control", "amend", packet, "01", "--add-absent", "x.tmp", "--reason", "r").returncode
        == 0
    )
    assert _records(packet)[-1]["phase"] == "post_success"
    assert cli("run", packet, "02", "--no-commit").returncode == 1
    relax = cli(
        "control", "relax", packet, "02", "--drop", "files_exist", "--reason", "r", "--confirm"
    )
    assert relax.returncode == 0, relax.stderr
    assert _records(packet, "02")[-1]["phase"] == "post_failure"


def test_the_runner_enforces_amendments_and_records_them(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}}, manifest=QUIET
    )
    added = cli(
        "control", "amend", packet, "01", "--add-contains", "README.md=never there",
        "--reason", "the doc must say it", "--author", "ada",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    result, _ = run_file(packet)
    assert result.exit_code == 1  # the amended contract is what is verified
    record = prompt_record(packet)
    assert record["amended"] is True
    assert record["amendments_file"].endswith("amendments/01.jsonl")
    assert record["amendments"][0]["direction"] == "amend"
    relaxed = cli(
        "control", "relax", packet, "01", "--drop", "contains", "--reason", "wrong", "--confirm"
    )
    assert relaxed.returncode == 0, relaxed.stderr
    result, _ = run_file(packet, remaining=True)
    assert result.exit_code == 0
    assert prompt_record(packet)["status"] == "completed"
    # Run-local amendments expire with their run: the completed run took them along.
    contract = json.loads(cli("control", "contract", packet, "01", "--json").stdout)
    assert contract["contract"] == {"files_exist": [{"path": "README.md"}]}
    assert contract["amendments"] == []
    # A run from clean state uses the prompt file's contract.
    loaded = load_packet(packet).prompt("01")
    assert effective_contract(None, loaded, None) == loaded.contract


def test_run_local_amendments_expire_with_their_run(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {"files_exist": ["x.txt"]},
                "simulate": {"attempts": [{"messages": ["no"]}]},
            }
        },
        manifest=QUIET,
    )
    relaxed = cli(
        "control", "relax", packet, "01", "--drop", "files_exist", "--reason", "tonight only",
        "--confirm",
    )  # fmt: skip
    assert relaxed.returncode == 0, relaxed.stderr
    first, _ = run_file(packet)
    assert first.exit_code == 0  # the next run adopted the relaxation
    again, _ = run_file(packet, select_all=True)
    assert again.exit_code == 1  # a later run enforces the prompt file's contract again
    assert prompt_record(packet)["status"] == "verification_failed"


def test_a_persisted_amendment_is_never_replayed_over_the_file(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {
                    "files_exist": ["README.md"],
                    "contains": [{"path": "README.md", "text": "alpha"}],
                }
            }
        },
        manifest=QUIET,
    )
    prompt_file = packet / "prompts" / "01_step.prompt.md"
    original = prompt_file.read_text()
    persisted = cli(
        "control", "relax", packet, "01", "--drop", "contains", "--reason", "exp", "--confirm",
        "--persist",
    )  # fmt: skip
    assert persisted.returncode == 0, persisted.stderr
    prompt_file.write_text(original)  # the user restores the clause
    result, _ = run_file(packet)
    assert result.exit_code == 1  # README.md has no "alpha": the file's contract rules


def test_persist_edits_the_prompt_file_keeping_comments_and_key_order(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    prompt_file = packet / "prompts" / "01_step.prompt.md"
    prompt_file.write_text(
        "---\n"
        "# who owns this: the platform team\n"
        'id: "01"\n'
        "name: Step 01  # keep me\n"
        "phase: 1\n"
        "targets: [app]\n"
        "verify:\n"
        "  files_exist:\n"
        "    - README.md  # the one we always had\n"
        'commit: "feat: step"\n'
        "---\n"
        "# Step 01\n\nBody stays.\n",
        encoding="utf-8",
    )
    proc = cli(
        "control", "amend", packet, "01", "--add-file", "lib/foo.py",
        "--reason", "the work needs it", "--persist",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "+  - lib/foo.py" in proc.stdout or "+    - lib/foo.py" in proc.stdout
    text = prompt_file.read_text()
    assert "# who owns this: the platform team" in text
    assert "# keep me" in text and "# the one we always had" in text
    keys = [
        line.split(":")[0]
        for line in text.split("---")[1].splitlines()
        if line and line[0].isalpha()
    ]
    assert keys == ["id", "name", "phase", "targets", "verify", "commit"]
    assert text.endswith("# Step 01\n\nBody stays.\n")
    contract = load_packet(packet).prompt("01").contract.to_raw()
    assert contract == {"files_exist": [{"path": "README.md"}, {"path": "lib/foo.py"}]}
    (record,) = _records(packet)
    assert record["persist"] is True
    again = json.loads(cli("control", "contract", packet, "01", "--json").stdout)
    assert again["contract"] == contract  # applying the persisted record again changes nothing


def test_cli_amendments_are_in_the_control_log(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}}, manifest=QUIET
    )
    added = cli(
        "control", "amend", packet, "01", "--add-file", "NOTES.md", "--reason", "needed",
        "--author", "ada",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    out = cli("control", "log", packet, "--json").stdout
    entries = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert any(e.get("command") == "amend" and e.get("author") == "ada" for e in entries), entries


def _two_slow_prompts(root: Path, gate: Gate) -> Path:
    """Two slow prompts; 01's contract waits for ``gate``, so 02 cannot start before
    the test has opened it (however long the amend's process takes to start)."""
    prompts: dict[str, Any] = {
        f"0{i}": {
            "simulate": {
                "attempts": [{"delay_ms": 2000, "writes": [{"path": f"p0{i}.txt", "text": "x"}]}]
            },
            "verify": {"files_exist": [f"p0{i}.txt"]},
        }
        for i in (1, 2)
    }
    prompts["01"]["verify"]["commands"] = [gate.command()]
    return make_packet(root, prompts, manifest=QUIET)


def _run_and_amend_while_01_runs(packet: Path, gate: Gate, *amend_args: str) -> tuple[int, str]:
    """Start `run` in a process; while 01 works, `control amend 02 ...`, then open 01's
    gate; return the run's exit code and output."""
    with subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as runner:  # its pipe is closed however the test ends
        try:
            try:
                snap = packet / ".prompt_runner" / "control" / "snapshot.json"
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        doc = json.loads(snap.read_text())
                    except (OSError, ValueError):
                        doc = {}
                    if doc.get("prompt_id") == "01" and doc.get("status") == "running":
                        break
                    time.sleep(0.02)
                amended = cli("control", "amend", packet, "02", *amend_args)
                assert amended.returncode == 0, amended.stderr
                before_02 = api.status(packet)["prompts"].get("02", {}).get("status")
                assert before_02 in (None, "pending"), before_02  # the amend landed before 02 ran
            finally:
                gate.open()
            out, _ = runner.communicate(timeout=60)
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
    return runner.returncode, out


def test_a_persisted_amend_during_a_live_run_is_enforced_by_that_run(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    packet = _two_slow_prompts(tmp_path, gate)
    code, out = _run_and_amend_while_01_runs(
        packet, gate, "--add-file", "must_exist.txt", "--reason", "r", "--persist"
    )
    assert code == 1, out  # 02 is verified against the amended contract
    record = prompt_record(packet, "02")
    assert record["status"] == "verification_failed", record
    assert record["amended"] is True
    assert [a["persist"] for a in record["amendments"]] == [True]
    assert prompt_record(packet, "01")["status"] == "completed"
    prompt_file = packet / "prompts" / "02_step.prompt.md"
    assert "must_exist.txt" in prompt_file.read_text()  # and the file is the contract now


def test_a_run_local_amend_during_a_live_run_is_enforced_by_that_run(tmp_path: Path) -> None:
    gate = Gate(tmp_path)
    packet = _two_slow_prompts(tmp_path, gate)
    code, out = _run_and_amend_while_01_runs(
        packet, gate, "--add-file", "must_exist.txt", "--reason", "r"
    )
    assert code == 1, out
    assert prompt_record(packet, "02")["status"] == "verification_failed"
    assert "must_exist.txt" not in (packet / "prompts" / "02_step.prompt.md").read_text()


def test_concurrent_persisted_amends_all_reach_the_prompt_file(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}}, manifest=QUIET
    )
    names = [f"added_{i}.txt" for i in range(8)]
    procs = [
        subprocess.Popen(
            [
                sys.executable, "-m", "prompt_runner", "control", "amend", str(packet), "01",
                "--add-file", name, "--reason", f"r{i}", "--persist",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, name in enumerate(names)
    ]  # fmt: skip
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream is not None:
                stream.close()
    assert all(code == 0 for code, _ in results), results
    contract = load_packet(packet).prompt("01").contract.to_raw()
    assert sorted(e["path"] for e in contract["files_exist"]) == sorted(["README.md", *names])
    records = _records(packet)
    assert len(records) == len(names)
    # Serialized: each record's "before" is the previous one's "after".
    for earlier, later in itertools.pairwise(records):
        assert later["before"] == earlier["after"]
    assert records[-1]["after"] == contract
    log = [
        json.loads(line)
        for line in cli("control", "log", packet, "--json").stdout.splitlines()
        if line.strip()
    ]
    assert [e["outcome"] for e in log] == ["applied"] * len(names)


def test_a_run_amended_with_persist_can_still_be_resumed(tmp_path: Path) -> None:
    """--persist edits the prompt file, which changes the packet's fingerprint;
    the unfinished run it was made for moves its recorded fingerprint along, so
    a plain `run` resumes it instead of demanding --new-run."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {
                    "files_exist": ["a.txt"],
                    "contains": [{"path": "a.txt", "text": "not there"}],
                },
                "recovery": {"repair": {"enabled": False}},
            }
        },
    )
    first = cli("run", packet)
    assert first.returncode == 1, first.stdout + first.stderr
    amended = cli(
        "control",
        "relax",
        packet,
        "01",
        "--drop",
        "contains",
        "--reason",
        "not needed after all",
        "--confirm",
        "--persist",
    )
    assert amended.returncode == 0, amended.stdout + amended.stderr
    again = cli("run", packet)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Resuming run" in again.stdout
    assert "--new-run" not in again.stdout + again.stderr
