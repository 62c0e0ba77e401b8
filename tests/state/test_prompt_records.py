"""The saved fields of attempts and prompts: same bytes as before, typed to read."""

from __future__ import annotations

import json
from pathlib import Path

from prompt_runner.state.prompt_records import (
    ABSENT,
    AttemptEnd,
    AttemptRecord,
    AttemptStart,
    PromptRecord,
    PromptStart,
)
from prompt_runner.state.records import AttemptStatus, PromptStatus
from prompt_runner.state.store import FileStore


def _end(**changes: object) -> AttemptEnd:
    fields: dict[str, object] = {
        "status": AttemptStatus.VERIFICATION_FAILED,
        "completed_at": "2025-01-02T03:04:06.000Z",
        "duration_ms": 12,
        "session_id": "s-1",
        "provider_outcome": "success",
        "failure_class": None,
        "failure": None,
        "verifier": {"pass": False, "items": []},
        "workspace_changed": True,
        "decision": "repair",
        "reason": "the contract has unmet items",
        "delay_ms": 0,
        "usage": {"input_tokens": 1, "output_tokens": 2, "cached_tokens": 0, "cost_usd": 0.1},
        "cost_usd": 0.1,
        "tool_count": 3,
    }
    fields.update(changes)
    return AttemptEnd(**fields)  # type: ignore[arg-type]


def test_records_save_the_keys_in_the_order_they_were_written_before() -> None:
    start = AttemptStart(
        attempt=1,
        mode="run",
        started_at="2025-01-02T03:04:05.000Z",
        provider="simulated",
        model=None,
        run_id="r1",
    )
    assert json.dumps(start.to_dict()) == json.dumps(
        {
            "attempt": 1,
            "mode": "run",
            "status": "running",
            "started_at": "2025-01-02T03:04:05.000Z",
            "provider": "simulated",
            "model": None,
            "run_id": "r1",
        }
    )
    end = _end().to_dict()
    assert list(end)[:3] == ["status", "completed_at", "duration_ms"]
    assert list(end)[-2:] == ["cost_usd", "tool_count"]
    assert "budget_failure" not in end  # saved only when a budget refused
    assert _end(budget_failure={"class": "guardrail_blocked"}).to_dict()["budget_failure"] == {
        "class": "guardrail_blocked"
    }
    prompt = PromptStart(name="Step 01", run_id="r1", started_at="2025-01-02T03:04:05Z")
    assert list(prompt.to_dict()) == ["status", "name", "run_id", "started_at"]
    assert (
        PromptStart(name="n", run_id=None, started_at="t", dirty_at_start=None).to_dict()[
            "dirty_at_start"
        ]
        is None
    )  # too many: saved as null
    assert ABSENT not in PromptStart(name="n", run_id=None, started_at="t").to_dict().values()


def test_a_saved_prompt_record_reads_back_typed(tmp_path: Path) -> None:
    store = FileStore(tmp_path / ".prompt_runner")
    start = AttemptStart(
        attempt=1, mode="run", started_at="t0", provider="simulated", model="m", run_id="r1"
    )
    store.update_prompt("01", PromptStart(name="Step", run_id="r1", started_at="t").to_dict())
    key = store.start_attempt("01", start.to_dict())
    store.finish_attempt("01", key, _end().to_dict())
    store.update_prompt("01", {"status": PromptStatus.VERIFICATION_FAILED, "future_key": 1})
    store.close()
    record = PromptRecord.from_dict(FileStore(tmp_path / ".prompt_runner").load_prompt("01"))
    assert record.status == PromptStatus.VERIFICATION_FAILED
    assert record.name == "Step"
    assert record.extra == {"future_key": 1}
    (attempt,) = record.attempts
    assert attempt.status == AttemptStatus.VERIFICATION_FAILED
    assert (attempt.mode, attempt.decision, attempt.tool_count) == ("run", "repair", 3)
    assert attempt.budget_failure is None and attempt.extra == {}


def test_reading_never_fails_on_an_odd_record() -> None:
    assert PromptRecord.from_dict({}).shown_status == "pending"
    odd = PromptRecord.from_dict({"status": "interrupted", "attempts": [{"x": 1}, "junk"]})
    assert odd.shown_status == "interrupted"
    assert odd.attempts == (AttemptRecord(extra={"x": 1}),)
