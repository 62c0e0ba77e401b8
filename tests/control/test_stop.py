"""The ``stop`` request: the run ends at the next event boundary, or after the prompt."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.control.requests import build_request, validate_request
from prompt_runner.errors import UserError
from tests.control._helpers import (
    FAST,
    NOREPAIR,
    control,
    current_run_id,
    log,
    make_packet,
    prompt_record,
    run_file,
    when_session_runs,
)

QUICK = {"recovery": {**FAST, **NOREPAIR}}


def _stop(packet: Path, *, after_prompt: bool = False, author: str | None = "ops") -> str:
    request = build_request(
        "stop", {"after_prompt": after_prompt}, run_id=current_run_id(packet), author=author
    )
    return control(packet).write_request(request)


def _two_prompts(tmp_path: Path, first: dict[str, Any]) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: one",
                "simulate": {"attempts": [first, {"writes": [{"path": "one.txt", "text": "1"}]}]},
                "verify": {"files_exist": ["one.txt"]},
            },
            "02": {
                "commit": "feat: two",
                "simulate": {"attempts": [{"writes": [{"path": "two.txt", "text": "2"}]}]},
                "verify": {"files_exist": ["two.txt"]},
            },
        },
        manifest=QUICK,
    )


def test_stop_validates_its_one_parameter() -> None:
    request = build_request("stop", {}, run_id="R1", author=None)
    assert (request["command"], request["params"]) == ("stop", {"after_prompt": False})
    with pytest.raises(UserError, match="must be true or false"):
        build_request("stop", {"after_prompt": "yes"}, run_id="R1", author=None)
    with pytest.raises(UserError, match="unknown stop parameter `now`"):
        build_request("stop", {"now": True}, run_id="R1", author=None)
    ok, reason = validate_request(
        {"command": "stop", "params": {"after_prompt": 1}}, current_run_id="R1"
    )
    assert (ok, reason) == (False, "after_prompt: must be true or false.")


def test_stop_interrupts_the_session_and_the_prompt_resumes(tmp_path: Path) -> None:
    # The simulated provider replays attempts[0] in the resumed run too: it is
    # slow enough to be stopped mid-session, and then finishes.
    packet = _two_prompts(
        tmp_path,
        {
            "delay_ms": 2500,
            "messages": ["step one done"],
            "writes": [{"path": "one.txt", "text": "1"}],
        },
    )
    names: list[str] = []
    thread = when_session_runs(packet, lambda: names.append(_stop(packet)))
    result, out = run_file(packet, no_commit=False, default_committer="git")
    thread.join()
    assert (result.status, result.exit_code) == ("interrupted", 143), out
    assert "step one done" not in out  # the session was cut short, not waited for
    assert "stop requested by ops: the run ends now" in out
    assert "Run stopped on request by ops" in result.message
    record = prompt_record(packet, "01")
    assert record["status"] == "interrupted"
    assert [a["status"] for a in record["attempts"]] == ["interrupted"]
    assert result.prompts == {"01": "interrupted"}  # 02 never started
    entry = next(e for e in log(packet) if e["command"] == "stop")
    assert (entry["outcome"], entry["request"], entry["author"]) == ("applied", names[0], "ops")
    current = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())
    assert current["status"] == "interrupted"
    # and the control snapshot says so too (it said "unknown": a new user's finding)
    shown = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "control", "status", str(packet), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(shown.stdout)["status"] == "interrupted"

    resumed, out = run_file(packet, no_commit=False, default_committer="git", remaining=True)
    assert resumed.exit_code == 0, out
    assert set(resumed.prompts.values()) == {"completed"}
    assert prompt_record(packet, "01")["status"] == "completed"
    assert _subjects(packet.parent / "repo")[:2] == ["feat: two", "feat: one"]


def test_stop_after_prompt_lets_the_prompt_commit_first(tmp_path: Path) -> None:
    packet = _two_prompts(
        tmp_path, {"delay_ms": 3000, "writes": [{"path": "one.txt", "text": "1"}]}
    )
    thread = when_session_runs(packet, lambda: _stop(packet, after_prompt=True))
    result, out = run_file(packet, no_commit=False, default_committer="git")
    thread.join()
    assert (result.status, result.exit_code) == ("interrupted", 143), out
    assert "the run ends once the current prompt has ended" in out
    assert prompt_record(packet, "01")["status"] == "completed"
    assert "feat: one" in _subjects(packet.parent / "repo")
    assert "02" not in result.prompts
    assert not (packet.parent / "repo" / "two.txt").exists()

    resumed, out = run_file(packet, no_commit=False, default_committer="git", remaining=True)
    assert resumed.exit_code == 0, out
    assert _subjects(packet.parent / "repo")[:2] == ["feat: two", "feat: one"]


def test_a_stop_asked_before_the_runner_started_is_refused_as_stale(tmp_path: Path) -> None:
    packet = _two_prompts(tmp_path, {"writes": [{"path": "one.txt", "text": "1"}]})
    assert run_file(packet, ids=["01"])[0].exit_code == 0  # a run to target
    stale = build_request("stop", {}, run_id=None, author=None)
    stale["requested_at"] = (
        (datetime.now(UTC) - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    )
    name = control(packet).write_request(stale)
    result, out = run_file(packet, ids=["02"])
    assert result.exit_code == 0, out
    entry = next(e for e in log(packet) if e.get("request") == name)
    assert entry["outcome"] == "rejected"
    assert entry["reason"] == "stale: it was asked before this runner started"


def _subjects(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def test_a_stop_now_overrides_a_stop_after_the_prompt(tmp_path: Path) -> None:
    packet = _two_prompts(
        tmp_path, {"delay_ms": 4000, "writes": [{"path": "one.txt", "text": "1"}]}
    )

    def both() -> None:
        _stop(packet, after_prompt=True)
        _stop(packet)

    thread = when_session_runs(packet, both)
    result, out = run_file(packet, default_committer="git")
    thread.join()
    assert (result.status, result.exit_code) == ("interrupted", 143), out
    assert prompt_record(packet, "01")["status"] == "interrupted"
    assert [e["outcome"] for e in log(packet) if e["command"] == "stop"] == ["applied"] * 2


def _steer(packet: Path, text: str) -> str:
    request = build_request("steer", {"text": text}, run_id=current_run_id(packet), author="ops")
    return control(packet).write_request(request)


def test_a_steer_after_a_stop_now_is_refused_not_receipted_applied(tmp_path: Path) -> None:
    # a new user's finding: a stop and a steer read in one batch -- the steer's
    # receipt said "applied", but the stop ended the session and no agent ever read it
    packet = _two_prompts(
        tmp_path, {"delay_ms": 4000, "writes": [{"path": "one.txt", "text": "1"}]}
    )
    names: list[str] = []

    def both() -> None:
        names.append(_stop(packet))
        names.append(_steer(packet, "MAGIC-STEER-TEXT"))

    thread = when_session_runs(packet, both)
    result, out = run_file(packet, default_committer="git")
    thread.join()
    assert (result.status, result.exit_code) == ("interrupted", 143), out
    entries = {e["request"]: e for e in log(packet)}
    assert entries[names[0]]["outcome"] == "applied"
    steer = entries[names[1]]
    assert steer["outcome"] == "rejected"
    assert f"stop request {names[0]} was applied" in steer["reason"]
    assert "interrupting to steer" not in out


def test_a_steer_after_a_stop_after_the_prompt_still_reaches_the_session(tmp_path: Path) -> None:
    # the prompt runs on to its end, so its live session can still take a steer
    packet = _two_prompts(
        tmp_path, {"delay_ms": 4000, "writes": [{"path": "one.txt", "text": "1"}]}
    )
    names: list[str] = []

    def both() -> None:
        names.append(_stop(packet, after_prompt=True))
        names.append(_steer(packet, "keep going"))

    thread = when_session_runs(packet, both)
    result, out = run_file(packet, default_committer="git")
    thread.join()
    assert result.exit_code == 143, out
    entries = {e["request"]: e for e in log(packet)}
    assert [entries[n]["outcome"] for n in names] == ["applied", "applied"]
    assert "interrupting to steer: keep going" in out
    assert prompt_record(packet, "01")["status"] == "completed"


def test_work_a_stopped_session_left_is_committed_with_its_prompt(tmp_path: Path) -> None:
    # a new user's finding: a file written while the session ran, then `stop`;
    # the resumed run took it for the user's own change and never committed it
    packet = _two_prompts(
        tmp_path, {"delay_ms": 4000, "writes": [{"path": "one.txt", "text": "1"}]}
    )
    repo = packet.parent / "repo"

    def write_then_stop() -> None:
        (repo / "partial.txt").write_text("written before the stop\n")
        _stop(packet)

    thread = when_session_runs(packet, write_then_stop)
    result, out = run_file(packet, no_commit=False, default_committer="git")
    thread.join()
    assert result.exit_code == 143, out
    assert prompt_record(packet, "01")["status"] == "interrupted"

    resumed, out = run_file(packet, no_commit=False, default_committer="git", remaining=True)
    assert resumed.exit_code == 0, out
    assert "already has uncommitted changes" not in out
    assert "its interrupted run left uncommitted work (partial.txt)" in out
    shown = subprocess.run(
        ["git", "show", "--name-only", "--format=", "HEAD~1"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(shown) == ["one.txt", "partial.txt"]  # feat: one, with the stopped session's file
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
