"""A file in ``.prompt_runner/prompts/`` that the store could not have written (a
user's backup ``01 copy.jsonl``), or a key of that kind in an edited
``state.json``, is not a prompt's: ``status``, ``list`` and a resume pass it
over instead of ending in an internal error (a new user's finding;
state/summary.py). Real ``prompt-runner`` subprocesses on a real run's state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

COMMANDS = [
    ("status",),
    ("status", "--json"),
    ("list",),
    ("list", "--json"),
    ("run", "--remaining"),
]


def ran(tmp_path: Path) -> Path:
    def writes(name: str) -> dict[str, object]:
        return {
            "verify": {"files_exist": [name]},
            "simulate": {"attempts": [{"writes": [{"path": name, "text": "x\n"}]}]},
        }

    prompts = {"01": writes("a.txt"), "02": writes("b.txt")}
    packet = make_packet(tmp_path, prompts)
    assert cli("run", packet).returncode == 0
    return packet


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_backup_copy_of_a_prompt_log_is_passed_over(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    packet = ran(tmp_path)
    logs = packet / ".prompt_runner" / "prompts"
    shutil.copy(logs / "01.jsonl", logs / "01 copy.jsonl")
    proc = cli(command[0], packet, *command[1:])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr
    if command == ("status", "--json"):
        assert sorted(json.loads(proc.stdout)["prompts"]) == ["01", "02"]
    assert (logs / "01 copy.jsonl").exists()  # not ours: left as it was


def test_a_bad_key_in_state_json_is_passed_over(tmp_path: Path) -> None:
    packet = ran(tmp_path)
    state = packet / ".prompt_runner" / "state.json"
    doc = json.loads(state.read_text())
    doc["prompts"]["0 1"] = doc["prompts"]["01"]
    state.write_text(json.dumps(doc))
    proc = cli("status", packet, "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["prompts"]) == ["01", "02"]
    assert cli("run", packet, "--remaining").returncode == 0
