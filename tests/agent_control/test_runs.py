"""SPEC 7 end to end through the simulated provider, whose scripted directives go
through the same authenticated path a real agent uses (``issue_simulated``)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.agent import protocol
from prompt_runner.state.journal import read_journal
from tests.agent_control._helpers import (
    DONE,
    RecordingAgent,
    h_packet,
    install_agent,
    progress_lines,
    prompts,
    run,
)
from tests.helpers.cli import cli


def steps(*items: dict[str, Any]) -> dict[str, Any]:
    return {"simulate": {"attempts": list(items)}}


def directive(action: str, reason: str | None = None, **extra: Any) -> dict[str, Any]:
    control: dict[str, Any] = {"directive": action, **extra}
    if reason is not None:
        control["reason"] = reason
    return {"agent_control": control}


def journal(packet: Path, run_id: str) -> list[dict[str, Any]]:
    return read_journal(packet / ".prompt_runner" / "runs" / run_id / "journal.jsonl")


def test_repeat_twice_then_continue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(
        tmp_path,
        {"01": steps(directive("repeat"), directive("repeat", "more"), directive("continue"))},
    )
    result, out = run(packet)
    assert result.exit_code == 0, out
    assert [r.prompt_id for r in agent.requests] == ["01", "01", "01", "02"]
    state = prompts(packet)
    assert state["01"]["status"] == "completed" and state["02"]["status"] == "completed"
    assert [a["mode"] for a in state["01"]["attempts"]] == ["run", "run", "run"]
    assert [a["attempt"] for a in state["01"]["attempts"]] == [1, 1, 1]
    control = state["01"]["agent_control"]
    assert (control["action"], control["source"], control["iteration"]) == ("continue", "agent", 3)
    assert [(h["action"], h["source"]) for h in control["history"]] == [
        ("repeat", "agent"),
        ("repeat", "agent"),
        ("continue", "agent"),
    ]
    assert control["history"][1]["reason"] == "more"
    assert control["looping"] is True
    assert state["02"]["agent_control"]["looping"] is False

    for n, request in enumerate(agent.requests[:3], start=1):
        assert "## Prompt Runner agent control" in request.prompt_text
        assert f"This is iteration {n} of at most 4" in request.prompt_text
        assert "agent-control finish --reason R" in request.prompt_text
        env = dict(request.env)
        assert set(env) == set(protocol.ENV_NAMES)
        assert (env[protocol.ENV_RUN], env[protocol.ENV_PROMPT]) == (result.run_id, "01")
        assert env[protocol.ENV_ITERATION] == str(n)
        request_file = Path(env[protocol.ENV_FILE])
        directory = packet / ".prompt_runner" / "runs" / result.run_id / "agent-control"
        assert request_file.parent == directory
        assert request_file.name.startswith(f"01-{n}-") and request_file.suffix == ".json"
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert stat.S_IMODE(request_file.stat().st_mode) == 0o600
    tokens = {r.env[protocol.ENV_TOKEN] for r in agent.requests}
    assert len(tokens) == 4  # a fresh token per invocation
    records = [r["type"] for r in journal(packet, result.run_id)]
    assert records.count("agent_control_directive") == 4


def test_premature_finish_is_rejected_then_accepted_after_the_work_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(
        tmp_path,
        {
            "01": steps(
                directive("finish", "all done, surely"),
                {
                    "writes": [{"path": DONE, "text": "done\n"}],
                    **directive("finish", "the objective is complete"),
                },
            )
        },
    )
    result, out = run(packet)
    assert result.exit_code == 0, out
    assert len(agent.requests) == 2  # exactly two sessions; 02 never starts
    second = agent.requests[1].prompt_text
    assert "previous `finish` request was rejected" in second
    assert DONE in second
    state = prompts(packet)
    assert "02" not in state
    assert state["01"]["status"] == "completed"
    control = state["01"]["agent_control"]
    assert (control["action"], control["source"]) == ("finish", "agent")
    assert control["history"][0]["completion_verify"]["pass"] is False
    assert control["history"][1]["completion_verify"]["pass"] is True
    assert "Not run (the sequence is closed): 02" in result.message
    assert progress_lines(packet)[-1].startswith("01:completed:")

    # a later --remaining run opens no session: the completion contract passes
    again, out = run(packet, remaining=True)
    assert again.exit_code == 0
    assert "Packet completion contract already passes — no session was run." in out
    assert len(agent.requests) == 2


def test_completion_precheck_skips_the_selection_but_explicit_ids_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(tmp_path)
    (tmp_path / "repo" / DONE).write_text("done\n")
    result, out = run(packet)
    assert result.exit_code == 0
    assert "Packet completion contract already passes — no session was run." in out
    assert agent.requests == [] and prompts(packet) == {}
    result, out = run(packet, ids=("01",))
    assert result.exit_code == 0, out
    assert [r.prompt_id for r in agent.requests] == ["01"]


def test_blocked_exits_non_zero_with_the_reason_in_status(tmp_path: Path) -> None:
    reason = "the required remote repository does not exist"
    packet = h_packet(tmp_path, {"01": steps(directive("blocked", reason))})
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "agent_control_blocked" in proc.stdout and reason in proc.stdout
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert doc["prompts"]["01"]["status"] == "agent_control_blocked"
    assert reason in doc["prompts"]["01"]["reason"]
    assert doc["prompts"]["01"]["agent_control"]["action"] == "blocked"
    assert "02" not in doc["prompts"]
    human = cli("status", packet).stdout
    assert reason in human


def test_forgotten_directive_uses_the_default_action(tmp_path: Path) -> None:
    packet = h_packet(tmp_path)
    result, out = run(packet)
    assert result.exit_code == 0, out
    state = prompts(packet)
    for prompt_id in ("01", "02"):
        control = state[prompt_id]["agent_control"]
        assert state[prompt_id]["status"] == "completed"
        assert (control["action"], control["source"]) == ("continue", "default")


def test_iteration_cap_fails_resumably(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(tmp_path, default_action="repeat", max_iterations=2)
    result, out = run(packet)
    assert result.exit_code == 1
    assert "iteration_limit" in out and "max_iterations 2" in out
    assert [r.prompt_id for r in agent.requests] == ["01", "01"]
    state = prompts(packet)
    assert "02" not in state
    assert state["01"]["status"] == "iteration_limit"
    assert [a["mode"] for a in state["01"]["attempts"]] == ["run", "run"]
    assert [a["attempt"] for a in state["01"]["attempts"]] == [1, 1]
    assert [h["source"] for h in state["01"]["agent_control"]["history"]] == ["default"] * 2
    assert progress_lines(packet)[-1].startswith("01:failed:")
    # resumable: --remaining selects 01 again
    (tmp_path / "repo" / "unrelated.txt").write_text("x")
    again, _ = run(packet, remaining=True)
    assert [r.prompt_id for r in agent.requests[2:4]] == ["01", "01"]
    assert again.exit_code == 1


def test_a_directive_written_before_a_failed_verify_is_discarded_before_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(
        tmp_path,
        {
            "01": {
                "verify": {"files_exist": ["fixed.txt"]},
                **steps(
                    directive("blocked", "premature"),
                    {"writes": [{"path": "fixed.txt", "text": "ok\n"}]},
                ),
            }
        },
        repair=True,
    )
    result, out = run(packet)
    assert result.exit_code == 0, out
    assert "discarded the directive written before the failed verify" in out
    state = prompts(packet)
    assert [a["mode"] for a in state["01"]["attempts"]] == ["run", "repair"]
    control = state["01"]["agent_control"]
    assert (control["action"], control["source"]) == ("continue", "default")
    assert control["iteration"] == 1
    # the repair session still carries the agent-control block and the same invocation
    assert "## Prompt Runner agent control" in agent.requests[1].prompt_text
    assert "## Repair Instructions" in agent.requests[1].prompt_text
    assert agent.requests[1].env == agent.requests[0].env
    types = [r["type"] for r in journal(packet, result.run_id)]
    assert "agent_control_discarded" in types


def test_provider_failure_never_falls_through_to_the_default_action(tmp_path: Path) -> None:
    failure = {
        "error": {
            "kind": "provider_config_claim",
            "message": "invalid provider CLI arguments",
            "recovery": {
                "class": "provider_config_claim",
                "retryable?": False,
                "repairable?": False,
                "resumeable?": False,
                "local_deterministic?": True,
                "remote_claim?": False,
            },
        }
    }
    packet = h_packet(tmp_path, {"01": steps(failure)})
    result, out = run(packet)
    assert result.exit_code == 1
    assert "invalid provider CLI arguments" in out
    state = prompts(packet)
    assert [a["status"] for a in state["01"]["attempts"]] == ["failed"]
    assert state["01"]["agent_control"]["history"] == []
    assert progress_lines(packet)[-1].startswith("01:failed:")
    assert "02" not in state


def test_a_failed_turn_with_a_passing_contract_is_retried_not_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    capacity = {"error": {"kind": "provider_capacity", "message": "overloaded"}}
    packet = h_packet(
        tmp_path, {"01": steps({**capacity, **directive("blocked", "from the failed turn")})}
    )
    result, out = run(packet)
    assert result.exit_code == 0, out
    state = prompts(packet)
    assert [a["mode"] for a in state["01"]["attempts"]] == ["run", "retry"]
    assert state["01"]["source"] == "verifier"  # never verifier_override
    control = state["01"]["agent_control"]
    assert control["iteration"] == 1
    assert [(h["action"], h["source"]) for h in control["history"]] == [("continue", "default")]
    assert agent.requests[0].env == agent.requests[1].env


def test_progress_is_recorded_and_labelled_stale_in_later_iterations(tmp_path: Path) -> None:
    progress = {"cursor": "P09R.2", "unit": "B", "summary": "unit B completed"}
    packet = h_packet(
        tmp_path,
        {"01": steps(directive("repeat", progress=progress), directive("continue"))},
    )
    result, _ = run(packet)
    assert result.exit_code == 0
    view = prompts(packet)["01"]["agent_control"]["progress"]
    assert {k: view[k] for k in ("cursor", "unit", "summary", "iteration", "stale")} == {
        "cursor": "P09R.2",
        "unit": "B",
        "summary": "unit B completed",
        "iteration": 1,
        "stale": True,
    }
    assert (view["run_id"], view["prompt_id"]) == (result.run_id, "01")
    human = cli("status", packet).stdout
    assert "P09R.2" in human and "previous iteration" in human


def test_memory_store_runs_use_a_private_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(tmp_path, {"01": steps(directive("repeat"), directive("continue"))})
    result, _ = run(packet, runtime_store="memory")
    assert result.exit_code == 0
    directory = Path(agent.requests[0].env[protocol.ENV_FILE]).parent
    assert not directory.exists()  # removed after the prompt
    assert not (packet / ".prompt_runner").exists()
    assert len(agent.requests) == 3


FAULTY = {"commands": [{"exec": "/nonexistent/bin/check-complete", "timeout_ms": 5000}]}


def test_a_completion_verify_fault_before_the_run_halts_without_a_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = h_packet(tmp_path, completion_verify=FAULTY)
    result, _ = run(packet)
    assert result.exit_code == 3 and result.status == "halted"
    assert "could not be judged" in result.message
    assert agent.requests == []


def test_a_completion_verify_fault_on_finish_halts_the_run(tmp_path: Path) -> None:
    packet = h_packet(
        tmp_path, {"01": steps(directive("finish", "done"))}, completion_verify=FAULTY
    )
    result, out = run(packet, ids=("01",))
    assert result.exit_code == 3, out
    state = prompts(packet)["01"]
    assert state["status"] == "verifier_fault"
    assert state["agent_control"]["history"][0]["completion_verify"]["fault"] is True
    assert not [line for line in progress_lines(packet) if line.startswith("01:completed")]


def test_each_iteration_is_committed_before_its_directive_is_consumed(tmp_path: Path) -> None:
    from tests.conftest import git

    packet = h_packet(
        tmp_path,
        {
            "01": {
                "commit": "step 01",
                **steps(
                    {"writes": [{"path": "a.txt", "text": "a\n"}], **directive("repeat")},
                    {"writes": [{"path": "b.txt", "text": "b\n"}], **directive("continue")},
                ),
            }
        },
    )
    result, out = run(packet, ids=("01",), committer="git")
    assert result.exit_code == 0, out
    repo = tmp_path / "repo"
    assert git(repo, "log", "--format=%s").splitlines()[:2] == ["step 01", "step 01"]
    assert git(repo, "status", "--porcelain").strip() == ""
    assert progress_lines(packet)[-1].split(":")[1] == "completed"


def test_a_failed_commit_is_never_a_consumed_directive(tmp_path: Path) -> None:
    packet = h_packet(
        tmp_path,
        {
            "01": steps(
                {"writes": [{"path": "a.txt", "text": "a\n"}], **directive("finish", "done")}
            )
        },
    )
    (tmp_path / "repo" / DONE).write_text("done\n")
    hook = tmp_path / "repo" / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    result, out = run(packet, ids=("01",), committer="git")
    assert result.exit_code == 3, out  # a commit failure halts the run
    state = prompts(packet)["01"]
    assert state["status"] == "commit_failed"
    assert state["agent_control"]["history"] == []
    assert progress_lines(packet)[-1].startswith("01:failed:")


def test_status_shows_the_live_progress_of_a_running_iteration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    from prompt_runner.agent.client import record_progress

    def report(env: dict[str, str]) -> None:
        record_progress(env, cursor="LIVE.1", unit="U", summary="halfway")

    install_agent(monkeypatch, RecordingAgent([report]))
    packet = h_packet(tmp_path, {"01": steps({"delay_ms": 4000})})
    worker = threading.Thread(target=run, args=(packet,), kwargs={"ids": ("01",)})
    worker.start()
    try:
        seen: dict[str, Any] = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not seen:
            proc = cli("status", packet, "--json")
            if proc.returncode == 0:
                record = json.loads(proc.stdout)["prompts"].get("01", {})
                progress = (record.get("agent_control") or {}).get("progress") or {}
                if progress.get("cursor") == "LIVE.1":
                    seen = progress
                    human = cli("status", packet).stdout
            time.sleep(0.2)
    finally:
        worker.join(60)
    assert seen["live"] is True and seen["stale"] is False and seen["iteration"] == 1
    assert "cursor     LIVE.1 · unit U · halfway" in human
    final = prompts(packet)["01"]["agent_control"]
    assert final["live"] is None and final["progress"]["cursor"] == "LIVE.1"
