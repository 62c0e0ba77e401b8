"""Requests are authenticated against the live invocation: forged, replayed,
misplaced and second directives are rejected and logged (SPEC 7)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.agent import client, protocol
from prompt_runner.agent import invocation as ac
from prompt_runner.state.journal import read_journal
from tests.agent_control._helpers import (
    RecordingAgent,
    agent_control_cmd,
    h_packet,
    install_agent,
    prompts,
    run,
)


def rejections(packet: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = prompts(packet)["01"]["agent_control"]["rejections"]
    return found


def journaled(packet: Path, run_id: str) -> list[dict[str, Any]]:
    path = packet / ".prompt_runner" / "runs" / run_id / "journal.jsonl"
    return [r for r in read_journal(path) if r["type"] == "agent_control_rejected"]


def cmd_ok(*args: str, env: dict[str, str]) -> None:
    proc = agent_control_cmd(*args, env=env)
    assert proc.returncode == 0, proc.stderr


def test_a_wrong_token_is_rejected_and_the_default_action_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def forge(env: dict[str, str]) -> None:
        cmd_ok("blocked", "--reason", "forged", env={**env, protocol.ENV_TOKEN: "guessed-token"})

    install_agent(monkeypatch, RecordingAgent([forge]))
    packet = h_packet(tmp_path)
    result, out = run(packet)
    assert result.exit_code == 0, out  # the forged `blocked` was not obeyed
    control = prompts(packet)["01"]["agent_control"]
    assert (control["action"], control["source"]) == ("continue", "default")
    assert "token mismatch" in rejections(packet)[0]["reason"]
    assert "token mismatch" in journaled(packet, result.run_id)[0]["data"]["reason"]
    assert "agent control rejected directive: token mismatch" in out


def test_a_request_replayed_from_a_previous_iteration_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved: dict[str, bytes] = {}

    def repeat_and_keep(env: dict[str, str]) -> None:
        cmd_ok("repeat", env=env)
        saved["request"] = Path(env[protocol.ENV_FILE]).read_bytes()

    def replay(env: dict[str, str]) -> None:
        target = Path(env[protocol.ENV_FILE])
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, saved["request"])
        os.close(fd)

    agent = install_agent(monkeypatch, RecordingAgent([repeat_and_keep, replay]))
    packet = h_packet(tmp_path)
    result, out = run(packet)
    assert result.exit_code == 0, out
    assert [r.prompt_id for r in agent.requests] == ["01", "01", "02"]  # no third iteration
    control = prompts(packet)["01"]["agent_control"]
    assert [(h["action"], h["source"]) for h in control["history"]] == [
        ("repeat", "agent"),
        ("continue", "default"),
    ]
    (rejected,) = rejections(packet)
    assert rejected["iteration"] == 2
    assert "identity mismatch" in rejected["reason"] and "iteration 1" in rejected["reason"]
    assert len(journaled(packet, result.run_id)) == 1


def test_a_request_file_outside_the_invocation_directory_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o700)

    def misplace(env: dict[str, str]) -> None:
        proc = agent_control_cmd(
            "blocked",
            "--reason",
            "elsewhere",
            env={**env, protocol.ENV_FILE: str(outside / "request.json")},
        )
        assert proc.returncode == 1 and "outside the invocation directory" in proc.stderr

    def symlink_out(env: dict[str, str]) -> None:
        foreign = outside / "forged.json"
        doc = {
            "schema": protocol.REQUEST_SCHEMA,
            "token": env[protocol.ENV_TOKEN],
            "run_id": env[protocol.ENV_RUN],
            "prompt_id": env[protocol.ENV_PROMPT],
            "iteration": int(env[protocol.ENV_ITERATION]),
            "action": "blocked",
            "reason": "through a symlink",
        }
        foreign.write_text(json.dumps(doc))
        foreign.chmod(0o600)
        os.symlink(foreign, env[protocol.ENV_FILE])

    install_agent(monkeypatch, RecordingAgent({"01": [misplace], "02": [symlink_out]}))
    packet = h_packet(tmp_path)
    result, out = run(packet)
    assert result.exit_code == 0, out
    assert list(outside.iterdir()) == [outside / "forged.json"]
    state = prompts(packet)
    assert state["01"]["agent_control"]["source"] == "default"
    assert "outside the invocation directory" in rejections(packet)[0]["reason"]
    assert "refused by the agent side" in rejections(packet)[0]["what"]
    assert state["02"]["agent_control"]["source"] == "default"
    assert "symbolic link" in state["02"]["agent_control"]["rejections"][0]["reason"]
    assert len(journaled(packet, result.run_id)) == 2


def test_a_second_terminal_directive_is_rejected_and_the_first_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def two(env: dict[str, str]) -> None:
        cmd_ok("blocked", "--reason", "first", env=env)
        proc = agent_control_cmd("continue", env=env)
        assert proc.returncode == 1 and "request already exists" in proc.stderr

    install_agent(monkeypatch, RecordingAgent([two]))
    packet = h_packet(tmp_path)
    result, _ = run(packet)
    assert result.exit_code == 1
    state = prompts(packet)
    assert state["01"]["status"] == "agent_control_blocked"
    assert state["01"]["agent_control"]["reason"] == "first"
    (rejected,) = rejections(packet)
    assert "request already exists" in rejected["reason"]
    assert rejected["what"].startswith("agent-control continue")
    assert len(journaled(packet, result.run_id)) == 1


def test_a_late_directive_after_the_invocation_ended_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept: dict[str, str] = {}
    install_agent(monkeypatch, RecordingAgent([kept.update]))
    packet = h_packet(tmp_path)
    result, _ = run(packet)
    assert result.exit_code == 0
    proc = agent_control_cmd("blocked", "--reason", "too late", env=kept)
    assert proc.returncode == 1 and "has ended" in proc.stderr


# --------------------------------------------------------------------------- runner-side units


@pytest.fixture
def inv(tmp_path: Path) -> ac.Invocation:
    directory, _ = ac.control_directory(tmp_path / "state", "run-1")
    return ac.open_invocation(directory, "run-1", "01", 2, 5)


def write_request(inv: ac.Invocation, **changes: Any) -> None:
    doc = {
        "schema": protocol.REQUEST_SCHEMA,
        "token": inv.token,
        "run_id": inv.run_id,
        "prompt_id": inv.prompt_id,
        "iteration": inv.iteration,
        "action": "finish",
        "reason": "done",
    }
    doc.update(changes)
    fd = os.open(inv.request_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, json.dumps(doc).encode())
    os.close(fd)


def test_an_authentic_request_is_accepted(inv: ac.Invocation) -> None:
    write_request(inv)
    directive, problem = ac.read_directive(inv)
    assert problem is None and directive is not None
    assert (directive.action, directive.reason) == ("finish", "done")


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"token": "x"}, "token mismatch"),
        ({"run_id": "run-0"}, "identity mismatch"),
        ({"prompt_id": "02"}, "identity mismatch"),
        ({"iteration": 1}, "identity mismatch"),
        ({"iteration": "2"}, "malformed identity"),
        ({"iteration": True}, "malformed identity"),
        ({"schema": "other"}, "schema"),
        ({"action": "skip"}, "unknown directive"),
        ({"reason": " "}, "without a reason"),
    ],
)
def test_forged_requests_are_rejected(
    inv: ac.Invocation, changes: dict[str, Any], expected: str
) -> None:
    write_request(inv, **changes)
    directive, problem = ac.read_directive(inv)
    assert directive is None
    assert problem is not None and expected in problem


def test_a_request_other_users_can_read_is_rejected(inv: ac.Invocation) -> None:
    write_request(inv)
    inv.request_file.chmod(0o644)
    assert "not 0600" in str(ac.read_directive(inv)[1])


def test_garbage_and_oversized_requests_are_rejected(inv: ac.Invocation) -> None:
    fd = os.open(inv.request_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"{not json")
    os.close(fd)
    assert "not valid JSON" in str(ac.read_directive(inv)[1])
    inv.request_file.write_bytes(b" " * 70000)
    assert "larger than" in str(ac.read_directive(inv)[1])


def test_a_directory_is_not_a_request(inv: ac.Invocation) -> None:
    inv.request_file.mkdir()
    assert ac.read_directive(inv)[1] is not None
    shutil.rmtree(inv.request_file)


def test_progress_from_another_iteration_is_rejected(inv: ac.Invocation) -> None:
    env = inv.env()
    client.record_progress(env, cursor="C", summary="s")
    progress, problem = ac.read_progress(inv)
    assert problem is None and progress is not None and progress["cursor"] == "C"
    later = ac.Invocation(**{**inv.__dict__, "iteration": 3})
    assert "identity mismatch" in str(ac.read_progress(later)[1])


def test_sealing_makes_a_late_directive_fail_but_keeps_an_issued_one(
    inv: ac.Invocation, tmp_path: Path
) -> None:
    client.issue_directive(inv.env(), "repeat", None)
    before = inv.request_file.read_bytes()
    ac.seal(inv)
    assert inv.request_file.read_bytes() == before
    other = ac.open_invocation(inv.directory, "run-1", "01", 3, 5)
    ac.seal(other)
    assert ac.read_directive(other) == (None, None)
    with pytest.raises(client.AgentControlError, match="has ended"):
        client.issue_directive(other.env(), "continue", None)


def test_the_invocation_directory_is_private(inv: ac.Invocation) -> None:
    assert inv.directory.stat().st_mode & 0o777 == 0o700
    assert len(inv.token) >= 40 and inv.token not in inv.request_file.name


def test_status_ignores_live_progress_that_does_not_authenticate(inv: ac.Invocation) -> None:
    marker = ac.live_marker(inv)
    assert inv.token not in json.dumps(marker)
    client.record_progress(inv.env(), cursor="C", summary="s")
    shown = client.live_progress(marker, inv.run_id, inv.prompt_id)
    assert shown is not None and shown["cursor"] == "C"
    assert client.live_progress(marker, inv.run_id, "02") is None
    forged = {**marker, "token_sha256": "0" * 64}
    assert client.live_progress(forged, inv.run_id, inv.prompt_id) is None


def test_tokens_never_reach_state_journal_logs_or_the_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    script = {"simulate": {"attempts": [{"agent_control": {"directive": "repeat"}}]}}
    packet = h_packet(tmp_path, {"01": script})
    result, out = run(packet)
    assert result.exit_code == 0
    tokens = [r.env[protocol.ENV_TOKEN] for r in agent.requests]
    assert len(tokens) == 3
    root = packet / ".prompt_runner"
    control_dir = root / "runs" / result.run_id / "agent-control"
    checked = 0
    for path in root.rglob("*"):
        if path.is_file() and control_dir not in path.parents:
            text = path.read_text(errors="replace")
            checked += 1
            assert not any(token in text for token in tokens), path
    assert checked > 3
    assert not any(t in out or t in r.prompt_text for t in tokens for r in agent.requests)
