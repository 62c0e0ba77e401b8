"""Build what one step of the attempt loop needs, from a dict-built packet.

``step_context(tmp_path, {"01": {...}})`` is a :class:`RunContext` over a real
packet and git repo (``tests/helpers/packets.py``), the real simulated
provider, an in-memory store (or the one given) and a console writing to a
string; ``open_steps(ctx)`` is the prompt's :class:`LoopState`.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from prompt_runner import api
from prompt_runner.committer import Committer, NoopCommitter
from prompt_runner.control.plane import Steer
from prompt_runner.providers.base import SessionHandle
from prompt_runner.providers.events import Event
from prompt_runner.providers.registry import get_provider
from prompt_runner.render.text import Console
from prompt_runner.runner.attempts import open_loop
from prompt_runner.runner.context import RunContext
from prompt_runner.runner.loop_state import LoopState
from prompt_runner.state.memstore import MemoryStore
from prompt_runner.state.store import RuntimeStore
from tests.helpers.packets import make_packet


def step_context(
    tmp_path: Path,
    prompts: dict[str, dict[str, Any]],
    *,
    manifest: dict[str, Any] | None = None,
    store: RuntimeStore | None = None,
    committer: Committer | None = None,
) -> RunContext:
    """A run context for ``prompts`` (see ``make_packet``); ``ctx.console.stream``
    is a ``StringIO`` holding what the runner said."""
    packet = make_packet(tmp_path, prompts, manifest=manifest)
    return RunContext(
        plan=api.plan(packet),
        store=store if store is not None else MemoryStore(),
        committer=committer if committer is not None else NoopCommitter(),
        console=Console(io.StringIO(), styled=False),
        run_id="20260101T000000Z-abcdef",
        provider_factory=get_provider,
    )


def said(ctx: RunContext) -> str:
    """Everything the runner said on the console so far."""
    ctx.console.flush()
    stream = ctx.console.stream
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()


def open_steps(ctx: RunContext, prompt_id: str = "01", **kwargs: Any) -> LoopState:
    """The loop state ``run_prompt`` starts ``prompt_id`` from (``mode`` ``run``)."""
    pp = ctx.plan.prompt(prompt_id)
    body = pp.prompt.body
    fields: dict[str, Any] = {"base": body, "text": body, "mode": "run", "env": {}}
    return open_loop(ctx, pp, **{**fields, **kwargs})


def steer(text: str, delivery: str = "interrupt_and_resume") -> Steer:
    return Steer(text, None, "01", 1, "2026-01-01T00:00:00Z", "req.json", delivery)


class RecordingControl:
    """The control plane's half the attempt loop calls (``ControlHooks``): hands
    out the steers it was given and records the boundaries it is told of."""

    def __init__(
        self, *, live: list[Steer] | None = None, queued: list[Steer] | None = None
    ) -> None:
        self.live = list(live or [])
        self.queued = list(queued or [])
        self.boundaries: list[tuple[str | None, str | None]] = []
        self.events: list[Event] = []

    def on_event(self, prompt_id: str, event: Event, encoded: str | None = None) -> None:
        self.events.append(event)

    def on_events(self, prompt_id: str, events: Any, encoded: Any) -> None:
        self.events.extend(events)

    def tick(self, prompt_id: str, handle: SessionHandle) -> None:
        return None

    def boundary(self, prompt_id: str | None, *, next_mode: str | None = None) -> None:
        self.boundaries.append((prompt_id, next_mode))

    def take_steer(self, prompt_id: str) -> Steer | None:
        return self.live.pop(0) if self.live else None

    def take_queued_steers(self, prompt_id: str, *, attempt: int | None = None) -> list[Steer]:
        queued, self.queued = self.queued, []
        return queued
