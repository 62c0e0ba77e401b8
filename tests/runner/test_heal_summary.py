"""A runner killed after a prompt's progress line but before its spaced
``state.json`` rewrite leaves that file behind the prompt logs; when every
prompt is then completed, ``run --remaining`` has nothing to run -- and it now
heals ``state.json`` from the logs as it closes the dead run, instead of
leaving a prompt out of it for good (state/store.FileStore.heal_summary,
runner/locks.close_dead_run; found by tests/runner/test_crash.py's random
SIGKILLs on a loaded CI machine). Real ``prompt-runner run`` subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import cli
from tests.runner.test_crash import PROMPTS, _packet


def test_a_remaining_run_with_nothing_left_heals_state_json(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    assert cli("run", packet).returncode == 0
    state = packet / ".prompt_runner"
    # what a kill -9 right after 05's progress line leaves: the run recorded
    # running, state.json from before 04 and 05 were summarised
    doc = json.loads((state / "state.json").read_text())
    del doc["prompts"]["04"], doc["prompts"]["05"]
    (state / "state.json").write_text(json.dumps(doc))
    current = json.loads((state / "runs" / "current.json").read_text())
    current["status"] = "running"
    (state / "runs" / "current.json").write_text(json.dumps(current))
    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "recorded completed" in resumed.stdout
    healed = json.loads((state / "state.json").read_text())
    assert sorted(healed["prompts"]) == PROMPTS
    assert all(healed["prompts"][p]["status"] == "completed" for p in PROMPTS)
