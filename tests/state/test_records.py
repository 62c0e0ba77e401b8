"""The status vocabulary: each member is its bare word on disk and in JSON."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path

import orjson
import pytest

from prompt_runner.state.records import (
    AttemptStatus,
    PromptStatus,
    RunStatus,
    exit_code_for,
    run_status_for_prompt,
)
from prompt_runner.state.store import FileStore

STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
EVERY_STATUS = [member for enum in (PromptStatus, AttemptStatus, RunStatus) for member in enum]


@pytest.mark.parametrize("status", EVERY_STATUS, ids=lambda s: f"{type(s).__name__}.{s.name}")
def test_json_round_trip_is_the_bare_word(status: StrEnum) -> None:
    word = status.value
    assert json.dumps({"status": status}) == json.dumps({"status": word})
    assert orjson.dumps({"status": status}) == orjson.dumps({"status": word})
    assert f"{status}" == str(status) == word
    read_back = json.loads(json.dumps(status))
    assert type(read_back) is str
    assert read_back == status
    assert type(status)(read_back) is status


def test_the_words_in_use_are_unchanged() -> None:
    """The saved words are part of the file formats and of --json output."""
    assert {s.value for s in RunStatus} == {
        "running", "completed", "failed", "halted", "interrupted", "nothing", "dry_run",
        "unknown",
    }  # fmt: skip
    assert {"pending", "running", "repairing", "completed", "failed", "interrupted",
            "verification_failed", "verifier_fault", "commit_failed", "blocked_by_dependency",
            "contract_changed"} <= {s.value for s in PromptStatus}  # fmt: skip
    assert {s.value for s in AttemptStatus} == {
        "running", "completed", "failed", "incomplete", "verification_failed",
        "verifier_fault", "interrupted",
    }  # fmt: skip


def test_a_store_writes_the_same_bytes_for_a_member_and_its_word(tmp_path: Path) -> None:
    """state.json, the prompt log and progress.log, times masked."""
    files = []
    for name, status, attempt in (
        ("words", "completed", "failed"),
        ("members", PromptStatus.COMPLETED, AttemptStatus.FAILED),
    ):
        store = FileStore(tmp_path / name / ".prompt_runner")
        key = store.start_attempt("01", {"attempt": 1, "started_at": "2025-01-02T03:04:05Z"})
        store.finish_attempt("01", key, {"status": attempt})
        store.update_prompt("01", {"status": status, "updated_at": "2025-01-02T03:04:06Z"})
        store.append_progress("01", status)
        store.close()
        files.append(
            {
                p.relative_to(tmp_path / name): STAMP.sub(b"<time>", p.read_bytes())
                for p in sorted((tmp_path / name).rglob("*"))
                if p.is_file()
            }
        )
    assert Path(".prompt_runner/progress.log") in files[0]
    assert files[0] == files[1]


def test_exit_codes_follow_spec_10() -> None:
    assert [exit_code_for(s) for s in ("completed", "nothing", "dry_run")] == [0, 0, 0]
    assert exit_code_for(RunStatus.FAILED) == 1
    assert exit_code_for(RunStatus.HALTED) == 3
    assert exit_code_for(RunStatus.INTERRUPTED) == 130
    assert exit_code_for(RunStatus.INTERRUPTED, signum=15) == 143
    for not_an_end in ("running", "unknown", "verifier_fault"):
        with pytest.raises(ValueError, match="not how a run ends"):
            exit_code_for(not_an_end)


def test_a_repair_ends_as_its_prompt_did() -> None:
    assert run_status_for_prompt("completed") is RunStatus.COMPLETED
    assert run_status_for_prompt(PromptStatus.VERIFIER_FAULT) is RunStatus.HALTED
    assert run_status_for_prompt("commit_failed") is RunStatus.HALTED
    for status in ("failed", "verification_failed", "agent_owned_incomplete", "interrupted"):
        assert run_status_for_prompt(status) is RunStatus.FAILED
