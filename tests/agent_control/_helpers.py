"""Packets and readers shared by the agent-control tests (the catalog's H packet)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.providers.base import SessionRequest
from prompt_runner.providers.events import EventSink
from prompt_runner.providers.simulated import SimulatedProvider, SimulatedSession
from tests.helpers.packets import FAST, make_packet

DONE = "P09R_COMPLETE"
README_CHECK = {"commands": [{"exec": "test", "args": ["-f", "README.md"], "timeout_ms": 60000}]}


def control_block(**overrides: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "enabled": True,
        "default_action": "continue",
        "max_iterations": 4,
        "completion_verify": {"files_exist": [{"repo": "app", "path": DONE}]},
    }
    block.update(overrides)
    return block


def h_packet(
    root: Path,
    prompts: dict[str, dict[str, Any]] | None = None,
    *,
    repair: bool = False,
    **control: Any,
) -> Path:
    """The H packet: prompts 01 and 02 (verify: README.md exists) under agent control."""
    base = {"01": {"verify": README_CHECK}, "02": {"verify": README_CHECK}}
    for prompt_id, front in (prompts or {}).items():
        base[prompt_id] = {**base.get(prompt_id, {}), **front}
    recovery: dict[str, Any] = dict(FAST)
    if not repair:
        recovery["repair"] = {"enabled": False}
    return make_packet(
        root,
        base,
        manifest={"profile": None, "recovery": recovery, "agent_control": control_block(**control)},
    )


def run(packet: Path, **options: Any) -> tuple[Any, str]:
    """``api.run`` with the file store and no commits; returns ``(result, output)``."""
    out = io.StringIO()
    options.setdefault("runtime_store", "file")
    options.setdefault("committer", "noop")
    result = api.run(packet, stream=out, **options)
    return result, out.getvalue()


def prompts(packet: Path) -> dict[str, Any]:
    state: dict[str, Any] = api.status(packet)["prompts"]
    return state


def progress_lines(packet: Path) -> list[str]:
    path = packet / ".prompt_runner" / "progress.log"
    return path.read_text().splitlines() if path.exists() else []


def agent_control_cmd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m prompt_runner agent-control ARGS`` with exactly ``env`` added to the test's."""
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", "agent-control", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


Action = Callable[[dict[str, str]], None] | None


class RecordingAgent(SimulatedProvider):
    """The simulated provider, plus a fake agent: before fresh session *n* of prompt
    P runs its script step, ``actions[P][n-1](env)`` runs (real files, real
    ``agent-control`` subprocesses) with the session's provider environment. A
    plain list means prompt ``01``. Every request is recorded."""

    def __init__(self, actions: list[Action] | dict[str, list[Action]] | None = None) -> None:
        self.actions = actions if isinstance(actions, dict) else {"01": actions or []}
        self.requests: list[SessionRequest] = []

    def start(self, request: SessionRequest, sink: EventSink) -> SimulatedSession:
        self.requests.append(request)
        actions = self.actions.get(request.prompt_id, [])
        index = request.session_number - 1
        action = actions[index] if 0 <= index < len(actions) else None
        if action is not None:
            action(dict(request.env))
        return super().start(request, sink)


def install_agent(monkeypatch: pytest.MonkeyPatch, agent: RecordingAgent) -> RecordingAgent:
    """Make every ``simulated`` session of the next runs go through ``agent``."""
    from prompt_runner.providers import registry

    real = registry.get_provider
    monkeypatch.setattr(
        registry, "get_provider", lambda name: agent if name == "simulated" else real(name)
    )
    return agent
