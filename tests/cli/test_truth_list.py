"""``list`` and ``status`` say one word for a prompt's state: ``list`` printed
``failed`` (progress.log keeps only ``completed`` and ``failed``) where
``status`` printed ``verification_failed`` for the same prompt (a new user's
finding). Real runs, real git.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import FAST, NOREPAIR, make_packet

ONE_TRY = {"recovery": {**FAST, **NOREPAIR, "retry": {**FAST["retry"], "max_attempts": 1}}}


def test_list_says_the_status_status_says(tmp_path: Path) -> None:
    never = {"verify": {"files_exist": ["never.txt"]}}
    packet = make_packet(tmp_path, {"01": {}, "02": never, "03": {}}, manifest=ONE_TRY)
    assert cli("run", packet, "--no-commit").returncode == 1
    status = json.loads(cli("status", packet, "--json").stdout)
    assert status["prompts"]["02"]["status"] == "verification_failed"
    listed = cli("list", packet)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[1].split()[:4] == ["01", "phase", "1", "completed"]
    assert lines[2].split()[:4] == ["02", "phase", "1", "verification_failed"]
    assert lines[3].split()[:4] == ["03", "phase", "1", "pending"]
    doc = json.loads(cli("list", packet, "--json").stdout)
    shown = {p["id"]: p["status"] for p in doc["prompts"]}
    assert shown == {"01": "completed", "02": "verification_failed", "03": "pending"}


def test_list_keeps_failed_for_a_provider_failure(tmp_path: Path) -> None:
    """A prompt the state records ``failed`` (a provider failure) is ``failed`` in both."""
    broken = {"simulate": {"attempts": [{"error": {"kind": "approval_denied"}}]}}
    packet = make_packet(tmp_path, {"01": broken}, manifest=ONE_TRY)
    assert cli("run", packet, "--no-commit").returncode == 1
    status = json.loads(cli("status", packet, "--json").stdout)
    recorded = status["prompts"]["01"]["status"]
    doc = json.loads(cli("list", packet, "--json").stdout)
    assert doc["prompts"][0]["status"] == recorded
