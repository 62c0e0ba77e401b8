"""Where one attempt's events and processes are reported while its session runs.

* :class:`AttemptSink` fans each canonical event out to the console, the
  session files, the control plane and the API callback;
* :func:`agent_registrar` and :func:`verify_registrar` register the agent and
  verify-command processes while they run (``runner/orphans.py``), so a later
  run stops them if this runner dies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UserError
from ..planning import PromptPlan
from ..providers.base import SessionHandle
from ..providers.events import Event
from ..render.sinks import SessionFiles, encode_body
from . import orphans
from .context import RunContext


class AttemptSink:
    """Where one attempt's events go: console, session files, control plane, callbacks.

    Each event is JSON-encoded once; the transcript, the JSONL log and the
    control stream share the encoding. :meth:`many` takes a provider read's
    worth of events in one call per layer.
    """

    def __init__(self, ctx: RunContext, prompt_id: str, files: SessionFiles | None) -> None:
        self.ctx = ctx
        self.prompt_id = prompt_id
        self.files = files
        self.encode = files is not None or ctx.control is not None

    def __call__(self, event: Event) -> None:
        ctx = self.ctx
        encoded = encode_body(event) if self.encode else None
        ctx.console.event(self.prompt_id, event)
        if self.files is not None:
            self.files.event(event, encoded)
        if ctx.control is not None:
            ctx.control.on_event(self.prompt_id, event, encoded)
        if ctx.callbacks.on_event is not None:
            ctx.notify("on_event", self.prompt_id, event.to_dict())

    def many(self, events: list[Event]) -> None:
        ctx = self.ctx
        encoded = [encode_body(e) for e in events] if self.encode else None
        ctx.console.events(self.prompt_id, events)
        if self.files is not None and encoded is not None:
            self.files.events(events, encoded)
        if ctx.control is not None and encoded is not None:
            ctx.control.on_events(self.prompt_id, events, encoded)
        if ctx.callbacks.on_event is not None:
            for event in events:
                ctx.notify("on_event", self.prompt_id, event.to_dict())


def agent_registrar(
    ctx: RunContext, prompt_id: str
) -> Callable[[SessionHandle], Callable[[], None] | None] | None:
    """Register each started agent process while it runs (see ``runner/orphans.py``),
    so a later run can stop it if this runner dies. ``None`` for runs without a lock."""
    directory = ctx.agents_dir
    if directory is None:
        return None
    try:
        pp: PromptPlan | None = ctx.plan.prompt(prompt_id)
    except UserError:
        pp = None
    if pp is None or pp.provider != "simulated" or pp.failover:
        # an agent process will start: registering it needs psutil, imported now
        # rather than in the moment between its start and its record
        import psutil  # noqa: F401 -- lazy: see runner/orphans.py's module doc

    def on_start(handle: SessionHandle) -> Callable[[], None] | None:
        pid = getattr(handle, "pid", None)
        if not isinstance(pid, int):
            return None  # an in-process session (simulated): nothing can outlive us
        try:
            path = orphans.register(directory, pid, run_id=ctx.run_id, prompt_id=prompt_id)
        except OSError as exc:
            ctx.console.say(f"warning: could not register agent pid {pid}: {exc}")
            return None
        return lambda: orphans.unregister(path)

    return on_start


def verify_registrar(ctx: RunContext, prompt_id: str) -> Callable[[int], Any] | None:
    """Register each verify command while it runs, as agents are (``runner/orphans.py``),
    so a later run stops it if this runner dies. ``None`` for runs without a lock."""
    directory = ctx.agents_dir
    if directory is None:
        return None
    return orphans.registrar(
        directory,
        run_id=ctx.run_id,
        prompt_id=prompt_id,
        kind=orphans.VERIFY_COMMAND,
        warn=ctx.console.say,
        preload=False,  # most contracts run no command: psutil loads with the first one
    )
