"""D: with --json, stdout is exactly one JSON document; human text goes to stderr."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.inproc import PR
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

WRITES = {"simulate": {"attempts": [{"writes": [{"path": "f.txt", "text": "x"}]}]}}


def test_run_json_prints_only_the_result(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": WRITES, "02": {}})
    result = pr("run", packet, "--no-commit", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["status"] == "completed"
    assert doc["prompts"] == {"01": "completed", "02": "completed"}
    assert result.err.strip()  # the progress went to stderr, not nowhere


def test_run_json_in_a_real_process_is_parseable(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITES})
    proc = cli("run", packet, "--no-commit", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["prompts"] == {"01": "completed"}


def test_dry_run_json_is_the_plan_marked_as_a_dry_run(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})
    result = pr("run", packet, "--dry-run", "--json", "--no-commit", "--from", "02")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["dry_run"] is True
    assert doc["selected"] == ["02", "03"]
    by_id = {p["id"]: p for p in doc["prompts"]}
    assert by_id["02"]["provider"] == "simulated"
    assert by_id["02"]["cwd"] == str((tmp_path / "repo").resolve())
    assert by_id["02"]["commit_enabled"] is False
    assert not (packet / ".prompt_runner").exists()


def test_remaining_json_with_nothing_left_prints_only_json(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert pr("run", packet, "--no-commit").code == 0
    result = pr("run", packet, "--remaining", "--no-commit", "--json")
    assert result.code == 0
    doc = json.loads(result.out)
    assert doc["status"] == "nothing"
    assert doc["message"].startswith("Nothing remaining")
    assert "Nothing remaining" in result.err


def test_repair_json_prints_only_the_result(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": WRITES})
    assert pr("run", packet, "--no-commit").code == 0
    result = pr("repair", packet, "01", "--no-commit", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["prompts"] == {"01": "completed"}
