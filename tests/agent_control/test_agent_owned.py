"""SPEC 2.8 / catalog I: agent-owned completion (structural checks, fresh sessions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from prompt_runner.planning.agent_owned import agent_owned_findings
from tests.agent_control._helpers import RecordingAgent, install_agent, prompts, run
from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.packets import FAST, make_packet

AGENT_OWNED = {"completion": "agent_owned", "incomplete": "repeat"}
EVIDENCE = {
    "files_exist": ["evidence.txt"],
    "contains": [{"path": "evidence.txt", "text": "complete"}],
}


def owned_packet(root: Path, front: dict[str, Any], execution: Any = AGENT_OWNED) -> Path:
    return make_packet(
        root,
        {"01": front},
        manifest={"profile": None, "recovery": FAST, "execution": execution},
    )


def test_an_incomplete_normal_return_repeats_in_a_fresh_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    script = {
        "attempts": [
            {"messages": ["working"]},
            {"writes": [{"path": "evidence.txt", "text": "complete\n"}]},
        ]
    }
    packet = owned_packet(tmp_path, {"verify": EVIDENCE, "simulate": script})
    result, out = run(packet, remaining=True)
    assert result.exit_code == 0, out
    assert "structurally incomplete; starting a fresh session" in out
    attempts = prompts(packet)["01"]["attempts"]
    assert [a["mode"] for a in attempts] == ["run", "agent_owned_repeat"]
    assert [a["status"] for a in attempts] == ["incomplete", "completed"]
    second = agent.requests[1].prompt_text
    assert "Agent-Owned Completion — Fresh Session 2" in second
    assert "evidence.txt" in second

    again, out = run(packet, remaining=True)
    assert again.status == "nothing" and "Nothing remaining" in out
    assert len(agent.requests) == 2


def test_stale_committed_evidence_does_not_preflight_complete_an_unrecorded_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = install_agent(monkeypatch, RecordingAgent())
    packet = owned_packet(tmp_path, {"verify": EVIDENCE})
    repo = tmp_path / "repo"
    (repo / "evidence.txt").write_text("complete\n")
    git(repo, "add", "evidence.txt")
    git(repo, "commit", "-q", "-m", "stale evidence")
    result, out = run(packet, remaining=True)
    assert result.exit_code == 0, out
    record = prompts(packet)["01"]
    assert len(agent.requests) == 1
    assert record["source"] != "preflight_verify" and len(record["attempts"]) == 1


def test_agent_owned_packets_reject_verify_commands_before_any_session(tmp_path: Path) -> None:
    verify = {"files_exist": ["e.txt"], "commands": [{"exec": "false", "timeout_ms": 1000}]}
    packet = owned_packet(tmp_path, {"verify": verify})
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "verify_commands_not_allowed" in proc.stderr
    assert "verify.commands" in proc.stderr
    assert not (packet / ".prompt_runner" / "prompts").exists()
    findings = agent_owned_findings(load_packet(packet))
    assert [(f["prompt_id"], f["kind"]) for f in findings] == [
        ("01", "verify_commands_not_allowed")
    ]


@pytest.mark.parametrize(
    "verify",
    [
        {"repos_clean": [{"repo": "app"}]},
        {"changed_paths_only": ["lib/x.py"], "repos_clean": [{"repo": "app"}]},
        None,
    ],
)
def test_agent_owned_prompts_need_prompt_specific_structural_evidence(
    tmp_path: Path, verify: Any
) -> None:
    packet = owned_packet(tmp_path, {"verify": verify} if verify else {})
    with pytest.raises(UserError, match="prompt_specific_structural_evidence_required"):
        api.run(packet)


def test_agent_owned_requires_incomplete_repeat(tmp_path: Path) -> None:
    packet = owned_packet(tmp_path, {"verify": EVIDENCE}, execution={"completion": "agent_owned"})
    with pytest.raises(UserError, match="incomplete: repeat"):
        load_packet(packet)


def test_verifier_owned_is_the_default_and_is_not_validated_as_agent_owned(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"repos_clean": [{"repo": "app"}]}}},
        manifest={"profile": None, "recovery": FAST},
    )
    loaded = load_packet(packet)
    assert loaded.manifest.execution.completion == "verifier_owned"
    assert agent_owned_findings(loaded) == []
