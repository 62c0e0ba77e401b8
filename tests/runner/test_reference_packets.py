"""Compatibility: the reference system's packets run unchanged (reads ../shared)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from prompt_runner import api
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "reference-packets"

pytestmark = pytest.mark.compat

EXPECTED_MODES = {
    "01": ["run", "retry"],
    "02": ["run", "repair"],
    "03": ["run", "resume"],
    "04": ["run", "retry"],
    "05": ["run", "retry", "retry"],
    "06": ["run"],
    "07": ["run", "retry", "repair"],
    "08": ["run", "retry"],
    "09": ["run", "resume"],
}


def _copy(name: str, tmp_path: Path) -> Path:
    source = SHARED / name
    if not source.is_dir():
        pytest.skip(f"skipped: reference packet {source} is not present (../shared absent)")
    dest = tmp_path / name
    shutil.copytree(source, dest)
    make_git_repo(dest / "workspace")
    return dest


def test_simulated_recovery_packet_runs_unchanged(tmp_path: Path) -> None:
    packet = _copy("simulated_recovery_packet", tmp_path)
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Run completed: 9 prompt(s) completed." in proc.stdout
    state = api.status(packet)
    modes = {pid: [a["mode"] for a in rec["attempts"]] for pid, rec in state["prompts"].items()}
    assert modes == EXPECTED_MODES
    assert all(rec["status"] == "completed" for rec in state["prompts"].values())
    assert state["prompts"]["06"]["source"] == "verifier_override"
    assert state["prompts"]["01"]["attempts"][0]["failure_class"] == "provider_capacity"
    assert state["prompts"]["03"]["attempts"][0]["failure_class"] == "protocol_error"
    assert state["prompts"]["07"]["attempts"][1]["workspace_changed"] is True
    log = subprocess.run(
        ["git", "log", "--format=%s"],
        cwd=packet / "workspace",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(log) == 10  # 9 prompt commits + the initial one
    assert log[0] == "docs: add timeout resume example output"
    progress = (packet / ".prompt_runner" / "progress.log").read_text().splitlines()
    assert [line.split(":")[0] for line in progress] == list(EXPECTED_MODES)
    assert all(line.split(":")[1] == "completed" for line in progress)
    assert not (packet / ".prompt_runner" / "run.pid").exists()


@pytest.mark.parametrize("name", ["simulated_recovery_packet", "single_repo_packet"])
def test_reference_packets_plan_json(tmp_path: Path, name: str) -> None:
    packet = _copy(name, tmp_path)
    proc = cli("plan", packet, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    first = doc["prompts"][0]
    if name == "single_repo_packet":
        assert doc["profile"] == "codex-default"
        assert first["provider"] == "codex" and first["model"] == "gpt-5.6-luna"
        assert first["reasoning_effort"] == "low" and first["cli_confirmation"] == "require"
        assert first["allowed_tools"] == ["Read", "Edit", "Write", "Bash"]
        assert doc["selected"] == ["01", "02"]
    else:
        assert doc["profile"] == "simulated-default"
        assert first["provider"] == "simulated" and first["model"] == "simulated-demo"
        assert len(doc["prompts"]) == 9
        seventh = doc["prompts"][6]["recovery"]["retry"]["class_attempts"]
        assert seventh["provider_runtime_claim"] == 1 and seventh["provider_capacity"] == 5
    assert first["permission_mode"] == "bypass"
    assert first["recovery"]["retry"]["class_attempts"]["transport_timeout"] == 4
    assert first["recovery"]["resume_attempts"] == 2
    assert doc["repos"]["app"] == str((packet / "workspace").resolve())
    assert first["cwd"] == str((packet / "workspace").resolve())
    assert first["targets"] == ["app"]
