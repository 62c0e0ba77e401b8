"""Agent control's run-level hooks and the prompt's agent_control record, each alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from prompt_runner.runner.agent_record import BLOCKED, FINISHED, ControlRecord
from prompt_runner.runner.agent_sequence import ends_sequence
from tests.runner._steps import step_context


@dataclass
class Tally:
    status: str = "completed"
    exit_code: int = 0
    prompts: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    message: str = ""


def test_an_accepted_finish_closes_the_sequence_naming_what_did_not_run(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}, "02": {}, "03": {}})
    result = Tally()
    assert ends_sequence(ctx, "01", FINISHED, result)
    assert result.prompts == {"01": "completed"} and result.exit_code == 0
    assert result.message.endswith("Not run (the sequence is closed): 02, 03.")


def test_blocked_stops_the_run_with_the_agents_reason(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}, "02": {}})
    ctx.store.update_prompt("01", {"agent_control": {"reason": "the API key is missing"}})
    result = Tally()
    assert ends_sequence(ctx, "01", BLOCKED, result)
    assert (result.status, result.exit_code, result.failures) == ("failed", 1, ["01"])
    assert result.message == ("agent_control_blocked: prompt 01 is blocked: the API key is missing")


def test_other_statuses_leave_the_sequence_alone(tmp_path: Path) -> None:
    ctx = step_context(tmp_path, {"01": {}})
    result = Tally()
    assert not ends_sequence(ctx, "01", "completed", result)
    assert result == Tally()


def test_the_record_labels_progress_of_an_earlier_iteration_stale() -> None:
    record = ControlRecord(max_iterations=3, default_action="continue", iteration=2)
    record.progress = {"run_id": "r", "prompt_id": "01", "iteration": 1, "cursor": "A"}
    doc = record.to_dict("r", "01")
    assert doc["progress"]["stale"] is True and doc["looping"] is True
    record.progress = {**record.progress, "iteration": 2}
    assert record.to_dict("r", "01")["progress"]["stale"] is False
    first = ControlRecord(max_iterations=3, default_action="continue", iteration=1)
    assert first.to_dict("r", "01")["looping"] is False
