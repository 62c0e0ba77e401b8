"""The Temporal engine's client side: ``fleet submit|status|stop`` and ``control steer --fleet``.

* :func:`submit` starts the fleet's workflow ``prompt-runner/<fleet>``; it
  starts each member's workflow ``prompt-runner/<fleet>/<workspace>``. While
  it runs, submitting again starts nothing (the id is taken); once it has
  ended, a new submission starts a new fleet run, in which a member whose
  workflow completed is not run again and a failed or stopped one is.
* :func:`status` reads each member's workflow: its status, the running
  activity's last heartbeat (the member's row as its worker sees it, the
  worker's identity, the attempt), the ``claimed`` signals in its history
  (every host that ran it), the result or the failure's details. No worker
  needs to be up to read it.
* :func:`stop`: the fleet's workflow is drained (no new member starts) and
  each running member is cancelled -- its worker stops the runner -- or, with
  ``after_prompt``, sent the ``stop`` signal.
* :func:`steer`: the member's workflow gets a ``steer`` signal; the worker
  running it applies it through the local control plane and signals the
  receipt back, which this reads from the ``view`` query.

Every one connects through :func:`~.connect.connect`, as ``fleet worker`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from ...errors import UserError
from ..local import FleetStopResult, MemberOutcome, SubmitResult
from ..model import Fleet, Member
from ..status import FleetStatus, MemberRow
from ..steering import FleetSteerReceipt
from .connect import connect
from .workflows import (
    FleetInput,
    FleetWorkflow,
    MemberInput,
    WorkspaceWorkflow,
    fleet_workflow_id,
    member_workflow_id,
)

T = TypeVar("T")

CLOSED = {
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "stopped",
    WorkflowExecutionStatus.TERMINATED: "stopped",
    WorkflowExecutionStatus.TIMED_OUT: "failed",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "running",
}


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def _client(fleet: Fleet) -> Client:
    return await connect(fleet.temporal, base=fleet.manifest_path.parent, file=fleet.manifest_path)


def member_manifest(member: Member) -> dict[str, Any]:
    """The member's workspace manifest as data for a worker on another machine:
    remotes absolute (as resolved here), no ``source`` (a path on this machine)."""
    ws = member.workspace
    if member.manifest_text is not None:
        doc: dict[str, Any] = yaml.safe_load(member.manifest_text)
    else:
        doc = ws.manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
    for name, repo in doc["repositories"].items():
        repo["remote"] = ws.repositories[name].remote
        repo.pop("source", None)
    doc.pop("operator", None)
    return doc


def fleet_input(fleet: Fleet) -> FleetInput:
    """The fleet workflow's input."""
    t = fleet.temporal
    return FleetInput(
        fleet=fleet.id,
        task_queue=t.task_queue,
        concurrency=fleet.concurrency,
        failure_policy=fleet.failure_policy,
        members=[
            MemberInput(
                fleet=fleet.id,
                workspace=m.id,
                manifest=member_manifest(m),
                heartbeat_timeout_s=t.heartbeat_timeout_s,
                max_attempts=t.max_attempts,
            )
            for m in fleet.members
        ],
    )


def submit(fleet: Fleet) -> SubmitResult:
    """Start the fleet's workflow (see the module docstring).

    Raises:
        InfrastructureError: the service cannot be reached.
    """

    async def go() -> bool:
        client = await _client(fleet)
        try:
            await client.start_workflow(
                FleetWorkflow.run,
                fleet_input(fleet),
                id=fleet_workflow_id(fleet.id),
                task_queue=fleet.temporal.task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            )
        except WorkflowAlreadyStartedError:
            return False
        return True

    started = _run(go())
    members = tuple(
        MemberOutcome(m.id, "submitted" if started else "running", "started" if started else "none")
        for m in fleet.members
    )
    return SubmitResult(fleet.id, fleet.engine, "submitted", None, not started, None, members)


def status(fleet: Fleet) -> FleetStatus:
    """One row per member from its workflow (see the module docstring)."""

    async def go() -> list[MemberRow]:
        client = await _client(fleet)
        return list(await asyncio.gather(*(_row(client, fleet, m) for m in fleet.members)))

    return FleetStatus(fleet.id, str(fleet.manifest_path), fleet.engine, tuple(_run(go())))


async def _row(client: Client, fleet: Fleet, member: Member) -> MemberRow:
    handle = client.get_workflow_handle(member_workflow_id(fleet.id, member.id))
    try:
        desc = await handle.describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return _made(member.id, {}, state="queued")
        raise
    hosts = await _hosts(client, handle)
    if desc.status == WorkflowExecutionStatus.RUNNING:
        pending = list(desc.raw_description.pending_activities)
        if not pending:
            return _made(member.id, {}, state="queued", hosts=hosts)
        act = pending[0]
        details: dict[str, Any] = {}
        if act.heartbeat_details.payloads:
            decoded = await client.data_converter.decode(act.heartbeat_details.payloads)
            details = decoded[0] if decoded and isinstance(decoded[0], dict) else {}
        beat = dict(details.get("row") or {})
        state = "running" if details else "queued"
        if act.last_failure.message and not details:
            beat["reason"] = act.last_failure.message
        host = act.last_worker_identity or details.get("host")
        return _made(member.id, beat, state=state, starts=act.attempt, host=host, hosts=hosts)
    out: dict[str, Any] = {}
    reason = None
    try:
        out = await handle.result()
    except WorkflowFailureError as exc:
        out, reason = _failure(exc)
    except Exception as exc:  # cancelled or terminated: no result to read
        reason = str(exc)
    state = CLOSED.get(desc.status, "failed") if desc.status is not None else "failed"
    row = dict(out.get("row") or {})
    if out.get("state") == "stopped":
        state = "stopped"
    return _made(
        member.id,
        row,
        state=state,
        starts=out.get("attempt"),
        host=out.get("host") or (hosts[-1] if hosts else None),
        hosts=hosts,
        reason=reason or out.get("reason"),
    )


def _failure(exc: WorkflowFailureError) -> tuple[dict[str, Any], str]:
    """The activity's outcome carried by a failed member workflow, and its message."""
    cause: BaseException | None = exc.cause
    while cause is not None:
        details = getattr(cause, "details", None)
        if details and isinstance(details[0], dict):
            return dict(details[0]), str(getattr(cause, "message", cause))
        cause = getattr(cause, "cause", None)
    return {}, str(exc.cause or exc)


async def _hosts(client: Client, handle: Any) -> tuple[str, ...]:
    """Every host a ``claimed`` signal named, oldest first (repeats folded)."""
    hosts: list[str] = []
    async for event in handle.fetch_history_events():
        if event.event_type != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
            continue
        attrs = event.workflow_execution_signaled_event_attributes
        if attrs.signal_name != "claimed" or not attrs.input.payloads:
            continue
        (host,) = await client.data_converter.decode(attrs.input.payloads)
        if isinstance(host, str) and (not hosts or hosts[-1] != host):
            hosts.append(host)
    return tuple(hosts)


def _made(
    workspace: str,
    row: dict[str, Any],
    *,
    state: str,
    starts: int | None = None,
    host: str | None = None,
    hosts: tuple[str, ...] = (),
    reason: str | None = None,
) -> MemberRow:
    return MemberRow(
        workspace=workspace,
        state=state,
        prompt=row.get("prompt") if state == "running" else None,
        completed=int(row.get("completed") or 0),
        total=int(row.get("total") or 0),
        attempts=int(row.get("attempts") or 0),
        starts=int(starts or 0),
        cost_usd=row.get("cost_usd"),
        host=host,
        last_progress_at=row.get("last_progress_at"),
        run_id=row.get("run_id"),
        reason=reason if reason is not None else row.get("reason"),
        hosts=hosts,
    )


def stop(fleet: Fleet, *, after_prompt: bool, author: str | None) -> FleetStopResult:
    """Drain the fleet's workflow and stop each running member (see the module docstring)."""

    async def go() -> dict[str, dict[str, Any]]:
        client = await _client(fleet)
        parent = client.get_workflow_handle(fleet_workflow_id(fleet.id))
        with contextlib.suppress(RPCError):  # no fleet run, or it has ended: nothing to drain
            await parent.signal(FleetWorkflow.drain)
        done: dict[str, dict[str, Any]] = {}
        for m in fleet.members:
            wid = member_workflow_id(fleet.id, m.id)
            handle = client.get_workflow_handle(wid)
            try:
                desc = await handle.describe()
            except RPCError:
                continue
            if desc.status != WorkflowExecutionStatus.RUNNING:
                continue
            if after_prompt:
                await handle.signal(WorkspaceWorkflow.stop, True)
                done[m.id] = {"workflow": wid, "summary": "asked to stop after its prompt"}
            else:
                await handle.cancel()
                done[m.id] = {"workflow": wid, "summary": "cancelled: its worker stops the run"}
        return done

    members = _run(go())
    return FleetStopResult(fleet.id, None, after_prompt, members, True)


def steer(
    fleet: Fleet, workspace: str, text: str, *, author: str | None, wait_s: float
) -> FleetSteerReceipt:
    """Signal the steer to the member's workflow and wait for its receipt.

    Raises:
        UserError: the member is not running.
    """
    wid = member_workflow_id(fleet.id, workspace)
    sid = uuid.uuid4().hex

    async def go() -> FleetSteerReceipt:
        client = await _client(fleet)
        handle = client.get_workflow_handle(wid)
        try:
            desc = await handle.describe()
        except RPCError:
            desc = None
        if desc is None or desc.status != WorkflowExecutionStatus.RUNNING:
            raise UserError(
                f"member {workspace!r} of fleet {fleet.id!r} is not running (workflow {wid})",
                key="--workspace",
                fix="steer a member while `fleet status` shows it running",
            )
        await handle.signal(WorkspaceWorkflow.steer, {"id": sid, "text": text, "author": author})
        deadline = time.monotonic() + wait_s
        while True:
            view = await handle.query(WorkspaceWorkflow.view)
            for item in view.get("steers", []):
                if item.get("id") == sid and item.get("outcome") is not None:
                    return FleetSteerReceipt(
                        fleet.id,
                        workspace,
                        item.get("request"),
                        item.get("host"),
                        str(item["outcome"]),
                        item.get("reason"),
                    )
            if time.monotonic() >= deadline:
                return FleetSteerReceipt(fleet.id, workspace, None, None, "pending")
            await asyncio.sleep(0.3)

    return _run(go())
