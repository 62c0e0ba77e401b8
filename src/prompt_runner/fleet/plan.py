"""``fleet plan``: what ``fleet submit`` would run where, read-only (nothing is written).

For each member: its workspace, its state here, what submit would do with it
and where it would run. Local engine: ``start`` (prepared first: a clone is
missing), ``resume`` (it ran before and is unfinished: ``run --remaining``),
``follow`` (a run of it is live), ``none`` (completed), ``refuse`` (prepare
would refuse it: ``problems``). Temporal engine: the member's workflow id on
the fleet's task queue (nothing is asked of the service: the workers decide
where, on their own disks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import PromptRunnerError
from ..workspace.plan import plan as plan_workspace
from .model import Fleet, Member
from .status import member_row

PLAN_SCHEMA = "prompt_runner.fleet.plan/v1"


@dataclass(frozen=True)
class MemberPlan:
    """One member: ``workspace``, ``origin`` (its key in the fleet manifest),
    ``manifest``, ``state`` and ``progress`` (``k/n``) here, ``action`` (see the
    module docstring), ``where`` (``local`` or its workflow id), ``problems``."""

    workspace: str
    origin: str
    manifest: str
    state: str
    progress: str
    action: str
    where: str
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        doc = dict(self.__dict__)
        doc["problems"] = list(self.problems)
        return doc


@dataclass(frozen=True)
class FleetPlan:
    """What ``fleet submit`` would do (see the module docstring).

    Attributes:
        fleet, manifest, engine, concurrency, failure_policy: from the manifest.
        service: the Temporal ``address``, ``namespace`` and ``task_queue``
            (``None`` for the local engine).
        members: one :class:`MemberPlan` each, in manifest order.
    """

    fleet: str
    manifest: str
    engine: str
    concurrency: int
    failure_policy: str
    service: dict[str, str] | None
    members: tuple[MemberPlan, ...]

    @property
    def ok(self) -> bool:
        """No member would be refused."""
        return not any(m.problems for m in self.members)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": PLAN_SCHEMA,
            "fleet": self.fleet,
            "manifest": self.manifest,
            "engine": self.engine,
            "concurrency": self.concurrency,
            "failure_policy": self.failure_policy,
            "service": self.service,
            "ok": self.ok,
            "members": [m.to_dict() for m in self.members],
        }


def plan_fleet(fleet: Fleet) -> FleetPlan:
    """The plan of ``fleet`` (reads what exists on this machine; writes nothing)."""
    service = None
    if fleet.engine == "temporal":
        t = fleet.temporal
        service = {"address": t.address, "namespace": t.namespace, "task_queue": t.task_queue}
    return FleetPlan(
        fleet=fleet.id,
        manifest=str(fleet.manifest_path),
        engine=fleet.engine,
        concurrency=fleet.concurrency,
        failure_policy=fleet.failure_policy,
        service=service,
        members=tuple(_member(fleet, m) for m in fleet.members),
    )


def _member(fleet: Fleet, member: Member) -> MemberPlan:
    ws = member.workspace
    if fleet.engine == "temporal":
        return MemberPlan(
            member.id,
            member.origin,
            str(ws.manifest_path),
            "unknown here",
            "?",
            "workflow",
            fleet.workflow_id(member.id),
        )
    try:
        row = member_row(member)
        state, progress = row.state, row.progress
    except PromptRunnerError as exc:
        state, progress = "error", "?"
        problems: tuple[str, ...] = (str(exc),)
    else:
        problems = ()
    needs_prepare = any(not r.clone.is_dir() for r in ws.repositories.values())
    if needs_prepare:
        problems += plan_workspace(ws).problems
    if problems:
        action = "refuse"
    elif state == "running":
        action = "follow"
    elif state == "completed":
        action = "none"
    elif needs_prepare or state == "queued":
        action = "start"
    else:
        action = "resume"
    return MemberPlan(
        member.id, member.origin, str(ws.manifest_path), state, progress, action, "local", problems
    )
