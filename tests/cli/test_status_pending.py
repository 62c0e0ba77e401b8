"""``status`` tells the whole truth in its human summary: the prompts the last
run selected and never ran are counted and listed as pending, and how the run
ended is said -- after ``stop --after-prompt`` of a 3-prompt packet it printed
"Prompts: 1 completed" and nothing else (a new user's finding). Real runs, real
detached runner, real git.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.packets import FAST, NOREPAIR, make_packet
from tests.supervise._helpers import cli, run_finished, slow_packet, state, wait_for


def _snapshot_prompt(packet: Path) -> str | None:
    try:
        snap = json.loads((state(packet) / "control" / "snapshot.json").read_text())
    except (OSError, ValueError):
        return None
    running = snap.get("status") == "running" and snap.get("event_count", 0) > 0
    return snap.get("prompt_id") if running else None


def test_status_after_stop_after_prompt_counts_the_prompts_never_run(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01", "02", "03"), delay_ms=2500)
    assert cli("start", packet).returncode == 0
    wait_for(lambda: _snapshot_prompt(packet) == "01", 60, "prompt 01 to run")
    stopped = cli("stop", packet, "--after-prompt")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    wait_for(lambda: run_finished(packet), 60, "the run to end")
    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == "Prompts: 1 completed, 2 pending"
    assert lines[2].startswith("Last run ended interrupted at ")
    assert lines[2].endswith(
        " (a `stop --after-prompt`); 2 of its 3 prompt(s) not run: 02, 03"
        " -- `prompt-runner run --remaining` runs them"
    )
    assert lines[3].startswith("  01  completed ")
    assert lines[4:] == [f"  {i}  {'pending':<22} not run yet" for i in ("02", "03")]


def test_status_after_a_failed_prompt_stops_the_run_names_what_was_left(tmp_path: Path) -> None:
    never = {"verify": {"files_exist": ["never.txt"]}}
    packet = make_packet(
        tmp_path,
        {"01": {}, "02": never, "03": {}},
        manifest={"recovery": {**FAST, **NOREPAIR, "retry": {**FAST["retry"], "max_attempts": 1}}},
    )
    ran = cli("run", packet, "--no-commit")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    lines = cli("status", packet).stdout.splitlines()
    assert lines[1] == "Prompts: 1 completed, 1 pending, 1 verification_failed"
    assert lines[2].startswith("Last run ended failed at ")
    assert lines[2].endswith(
        "; 1 of its 3 prompt(s) not run: 03 -- `prompt-runner run --remaining` runs them"
    )
    assert lines[-1] == f"  03  {'pending':<22} not run yet"


def test_status_of_a_completed_run_says_so_and_lists_nothing_pending(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    assert cli("run", packet, "--no-commit").returncode == 0
    lines = cli("status", packet).stdout.splitlines()
    assert lines[1] == "Prompts: 2 completed"
    assert lines[2].startswith("Last run ended completed at ")
    assert "pending" not in "\n".join(lines)


def test_status_counts_the_prompts_no_run_selected(tmp_path: Path) -> None:
    """``run PKT 01`` of a 3-prompt packet: 02 and 03 were neither counted nor
    listed ("Prompts: 1 completed"; ``pending: []``) while ``list`` showed them
    pending (nu14 05); nor was a prompt file added after the run."""
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})
    assert cli("run", packet, "01", "--no-commit").returncode == 0
    lines = cli("status", packet).stdout.splitlines()
    assert lines[1] == "Prompts: 1 completed, 2 pending"
    assert lines[2].startswith("Last run ended completed at ")
    assert "not run:" not in lines[2]  # the run left none of its own unrun
    assert lines[4:] == [f"  {i}  {'pending':<22} not run yet" for i in ("02", "03")]
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert doc["pending"] == ["02", "03"] and list(doc["prompts"]) == ["01"]

    added = (packet / "prompts" / "03_step.prompt.md").read_text(encoding="utf-8")
    (packet / "prompts" / "04_step.prompt.md").write_text(
        added.replace("id: '03'", "id: '04'"), encoding="utf-8"
    )
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert doc["pending"] == ["02", "03", "04"]
    assert cli("status", packet).stdout.splitlines()[1] == "Prompts: 1 completed, 3 pending"


def test_a_runs_own_unrun_prompts_come_first_and_are_the_ones_it_left(tmp_path: Path) -> None:
    never = {"verify": {"files_exist": ["never.txt"]}}
    packet = make_packet(
        tmp_path,
        {"01": {}, "02": never, "03": {}, "04": {}},
        manifest={"recovery": {**FAST, **NOREPAIR, "retry": {**FAST["retry"], "max_attempts": 1}}},
    )
    assert cli("run", packet, "04", "02", "03", "--no-commit").returncode == 1
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert doc["pending"] == ["03", "01"]  # the run's (in its order), then the packet's
    lines = cli("status", packet).stdout.splitlines()
    assert lines[1] == "Prompts: 1 completed, 2 pending, 1 verification_failed"
    assert lines[2].endswith(
        "; 1 of its 3 prompt(s) not run: 03 -- `prompt-runner run --remaining` runs them"
    )
