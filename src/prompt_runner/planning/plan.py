"""The resolved plan of one packet (``plan --json`` is :meth:`Plan.to_dict`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..notify import NotifyConfig, redact
from ..packet.gc_pause import gc_paused
from ..packet.loader import Packet
from ..packet.models import AgentControlConfig, ExecutionConfig
from ..state.layout import StateLayout
from .launch import launch_argv
from .options import RunOptions
from .prompt_plan import PromptPlan


@dataclass(frozen=True)
class Plan:
    """The resolved plan of one packet.

    Attributes:
        prompts: every prompt of the packet, resolved, in file order.
        selected: the ids selected to run, in execution order.
        notes: human notes about the selection (e.g. ``--continue`` skips).
        render: resolved rendering options.
        runtime_store: ``file|memory|noop``.
        committer: ``git|noop`` (``noop`` when ``--no-commit``).
        max_run_cost_usd: the run's cost budget (option > manifest), ``None`` = none.
        notify: who is told about the run's events (``notify:``), ``None`` = no one.
    """

    packet: Packet
    profile: str | None
    prompts: tuple[PromptPlan, ...]
    selected: tuple[str, ...]
    notes: tuple[str, ...]
    render: dict[str, Any]
    runtime_store: str
    committer: str
    execution: ExecutionConfig
    agent_control: AgentControlConfig
    failure_policy: str
    options: RunOptions
    max_run_cost_usd: float | None = None
    notify: NotifyConfig | None = None

    def prompt(self, prompt_id: str) -> PromptPlan:
        """The plan of prompt ``prompt_id``.

        Raises:
            UserError: no prompt has that id (the packet's unknown-id error).
        """
        found = self._by_id.get(prompt_id)
        if found is None:
            self.packet.prompt(prompt_id)  # raises the unknown-id error
            raise AssertionError("unreachable")
        return found

    @functools.cached_property
    def state(self) -> StateLayout:
        """Where this plan's runtime state lives: ``options.state_dir``, else
        ``$PROMPT_RUNNER_STATE_DIR``, else ``<packet>/.prompt_runner``
        (:meth:`StateLayout.of_packet`, fixed when the plan is resolved)."""
        return StateLayout.of_packet(self.packet.root, self.options.state_dir)

    @functools.cached_property
    def _by_id(self) -> dict[str, PromptPlan]:
        return {p.id: p for p in self.prompts}

    def selected_prompts(self) -> list[PromptPlan]:
        return [self.prompt(i) for i in self.selected]

    def to_dict(self) -> dict[str, Any]:
        with gc_paused():  # megabytes of plain values, no cycles (packet/gc_pause.py)
            return self._to_dict()

    def _prompt_dict(self, p: PromptPlan, selected: frozenset[str]) -> dict[str, Any]:
        """``p.to_dict()`` and, last, its ``argv`` (``None`` unless selected)."""
        doc = p.to_dict(committer=self.committer)
        doc["argv"] = launch_argv(self.packet, p) if p.id in selected else None
        return doc

    def _to_dict(self) -> dict[str, Any]:
        selected = frozenset(self.selected)
        return {
            "schema": "prompt_runner.plan/v1",
            "packet": self.packet.name,
            "root": str(self.packet.root),
            "profile": self.profile,
            "repos": {k: str(v) for k, v in self.packet.repos.items()},
            "default_repo": self.packet.default_repo,
            "runtime_store": self.runtime_store,
            "state_dir": str(self.state.root),
            "committer": self.committer,
            "failure_policy": self.failure_policy,
            "max_run_cost_usd": self.max_run_cost_usd,
            "notify": _notify_dict(self.notify),
            "execution": self.execution.model_dump(),
            "agent_control": self.agent_control.model_dump(),
            "render": dict(self.render),
            "prompt_count": len(self.prompts),
            "selected": list(self.selected),
            "notes": list(self.notes),
            "prompts": [self._prompt_dict(p, selected) for p in self.prompts],
        }


def _notify_dict(config: NotifyConfig | None) -> dict[str, Any] | None:
    """``plan --json``'s ``notify``: the targets redacted, as notifications.jsonl names them."""
    if config is None:
        return None
    return {
        "urls": [redact(url) for url in config.urls],
        "command": list(config.command) if config.command else None,
        "on": sorted(config.on),
        "timeout_s": config.timeout_s,
        "retries": config.retries,
        "file": config.file,
    }
