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

import pytest

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


def test_a_kill_after_the_run_ended_leaves_nothing_to_heal_or_heals(tmp_path: Path) -> None:
    """The kill came after ``runs/current.json`` said ``completed`` but before
    the store closed (the second window test_crash's SIGKILLs hit under load):
    the resumed ``--remaining`` run, with nothing to run, still heals
    ``state.json``, and leaves the run recorded as it was."""
    packet = _packet(tmp_path)
    assert cli("run", packet).returncode == 0
    state = packet / ".prompt_runner"
    doc = json.loads((state / "state.json").read_text())
    doc["prompts"]["05"]["status"] = "running"
    (state / "state.json").write_text(json.dumps(doc))
    before = json.loads((state / "runs" / "current.json").read_text())
    assert before["status"] == "completed"
    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "recorded completed" not in resumed.stdout
    healed = json.loads((state / "state.json").read_text())
    assert all(healed["prompts"][p]["status"] == "completed" for p in PROMPTS)
    assert json.loads((state / "runs" / "current.json").read_text()) == before


def test_state_json_is_current_before_the_run_is_recorded_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``finish_run`` rewrites a waiting ``state.json`` before it writes the
    run's end into ``runs/current.json``: at the moment the run reads ended,
    every prompt's summary already says what its log says."""
    from prompt_runner import api
    from prompt_runner.state import store as store_module

    packet = _packet(tmp_path)
    seen: list[dict[str, str]] = []
    original = store_module.FileStore.write_current_run

    def spy(self: store_module.FileStore, doc: dict) -> None:  # type: ignore[type-arg]
        if doc.get("finished_at"):
            on_disk = json.loads(self.state_path.read_text())
            seen.append({p: s.get("status") for p, s in on_disk["prompts"].items()})
        original(self, doc)

    monkeypatch.setattr(store_module.FileStore, "write_current_run", spy)
    result = api.run(packet, default_runtime_store="file", default_committer="git")
    assert result.status == "completed"
    assert seen == [{p: "completed" for p in PROMPTS}]
