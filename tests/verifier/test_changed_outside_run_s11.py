"""`prompt-runner verify` cannot tell a prompt's changes from the user's (no run,
no snapshot): a changed_paths_only failure there says every uncommitted change
counts and never tells the user to delete files that may be their own (new user
s11 #8: a completed prompt FAILed over the user's notes.txt, "delete those files")."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_verify_outside_a_run_never_advises_deleting_the_user_s_files(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "f01.txt", "text": "x\n"}]}]},
                "verify": {"files_exist": ["f01.txt"], "changed_paths_only": ["f01.txt"]},
            }
        },
    )
    (tmp_path / "repo" / "notes.txt").write_text("mine\n")  # the user's, before the run
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr  # the run tells them apart

    checked = cli("verify", packet, "01", "--json")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    [item] = [
        i
        for i in json.loads(checked.stdout)["reports"][0]["items"]
        if i["kind"] == "changed_paths_only"
    ]
    assert item["pass"] is False and item["disallowed"] == ["notes.txt"]
    assert "delete" not in item["details"], item["details"]
    assert "outside a run every uncommitted change counts" in item["details"]
