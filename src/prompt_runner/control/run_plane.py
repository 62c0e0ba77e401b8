"""A run's control plane, started from its :class:`~prompt_runner.runner.context.RunContext`.

``api`` calls :func:`start_plane` as a run opens and :func:`finish_plane` as
it ends, then :func:`refuse_left` once the end is recorded; a run without
disk state (an in-memory API run) has no plane.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..verifier import contract_keys
from .decisions import PacketPrompts
from .plane import ControlPlane, PromptInfo

if TYPE_CHECKING:
    from ..runner.context import RunContext


def start_plane(ctx: RunContext) -> ControlPlane | None:
    """Create and start the plane of ``ctx``'s run, or ``None`` for a run without disk state.

    A control directory that cannot be prepared is reported on the console and
    the run goes on without a plane (the transport is never fatal).
    """
    root = ctx.store.root
    if root is None:
        return None
    plan = ctx.plan
    prompts = {
        pp.id: PromptInfo(
            name=pp.prompt.name,
            provider=pp.provider,
            model=pp.model,
            max_steers=pp.recovery.max_steers,
            file=pp.prompt.file,
        )
        for pp in (plan.prompt(i) for i in plan.selected)
    }
    plane = ControlPlane(
        Path(root),
        run_id=ctx.run_id,
        packet=plan.packet.root.name,
        console=ctx.console,
        runtime=ctx.store,
        prompts=prompts,
        position=ctx.position,
        known_clauses=contract_keys(),
        prompt_loader=PacketPrompts(plan.packet),
    )
    try:
        plane.start()
    except (OSError, ValueError) as exc:
        ctx.console.say(f"warning: the control plane is off for this run: {exc}")
        return None
    return plane


def finish_plane(plane: object, status: str) -> None:
    """Record the run's end status in the snapshot (no-op for ``None``)."""
    if isinstance(plane, ControlPlane):
        plane.finish(status)


def refuse_left(plane: object) -> None:
    """Refuse the requests still pending as the run ends (no-op for ``None``);
    called once ``runs/current.json`` records the end (:meth:`ControlPlane.refuse_left`)."""
    if isinstance(plane, ControlPlane):
        plane.refuse_left()
