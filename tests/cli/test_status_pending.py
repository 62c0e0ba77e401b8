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
