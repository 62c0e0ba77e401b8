"""The ``prompt-runner.run-member`` activity: :func:`.member.run_member` under Temporal.

A synchronous activity (it runs in the worker's thread pool, one thread per
slot): it heartbeats through :func:`temporalio.activity.heartbeat`, sees a
cancellation through :func:`temporalio.activity.is_cancelled` (delivered with
a heartbeat's answer), and talks to its own workflow -- ``claimed``,
``steer_done`` signals, the ``view`` query -- through the worker's client on
the worker's event loop (:class:`WorkflowMailbox`).

Outcomes become Temporal's: ``completed`` is the result; ``failed`` (exit 1),
``bad_input`` (exit 2) and ``stopped`` (``fleet stop --after-prompt``: the
workflow must not read completed, so a later submission runs it again) are
non-retryable ``ApplicationError``\\ s (types ``PacketFailed``, ``BadInput``,
``Stopped``) carrying the outcome -- reason, the member's row, the host;
``infrastructure`` (exit 3, a signal, git) and ``superseded`` are retryable;
``cancelled`` is Temporal's ``CancelledError``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError, CancelledError

from ...state.fleet_layout import WorkerLayout
from . import member, member_setup
from .workflows import RUN_MEMBER, MemberInput, WorkspaceWorkflow

ERROR_TYPES = {
    "failed": "PacketFailed",
    "bad_input": "BadInput",
    "infrastructure": "Infrastructure",
    "superseded": "Superseded",
    "stopped": "Stopped",
}
QUERY_TIMEOUT_S = 30.0


class WorkflowMailbox:
    """The member's workflow through the worker's client (see the module docstring).

    Nothing here blocks the activity's thread (its heartbeats must go on): a
    signal is sent on ``loop`` and not waited for; :meth:`view` returns the
    newest answer to the ``view`` query and asks again once that one is in.
    A query can wait seconds -- the workflow's task may be sticky to a worker
    that has just died -- so its answer is a tick or two late, never in the way.
    """

    def __init__(self, client: Client, workflow_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.handle = client.get_workflow_handle(workflow_id)
        self.loop = loop
        self.latest: Mapping[str, Any] = {}
        self.asking: concurrent.futures.Future[Any] | None = None

    def _send(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def claimed(self, host: str) -> None:
        self._send(self.handle.signal(WorkspaceWorkflow.claimed, host))

    def view(self) -> Mapping[str, Any]:
        if self.asking is not None and self.asking.done():
            with contextlib.suppress(Exception):  # a failed query: ask again
                self.latest = self.asking.result() or {}
            self.asking = None
        if self.asking is None:
            self.asking = self._send(
                asyncio.wait_for(self.handle.query(WorkspaceWorkflow.view), QUERY_TIMEOUT_S)
            )
        return self.latest

    def steer_done(self, steer_id: str, receipt: Mapping[str, Any]) -> None:
        self._send(self.handle.signal(WorkspaceWorkflow.steer_done, args=[steer_id, dict(receipt)]))


class MemberActivities:
    """The activity, bound to one worker: its identity, root, client and loop.

    Args:
        identity: the worker's identity (the host ``fleet status`` shows).
        layout: where its members' workspaces live.
        client: the worker's Temporal client; loop: the loop it runs on.
        tick_s: seconds between heartbeats.
        say: the worker's log lines.
    """

    def __init__(
        self,
        identity: str,
        layout: WorkerLayout,
        client: Client,
        loop: asyncio.AbstractEventLoop,
        *,
        tick_s: float = member.TICK_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.identity = identity
        self.layout = layout
        self.client = client
        self.loop = loop
        self.tick_s = tick_s
        self.say = say or (lambda _line: None)

    @activity.defn(name=RUN_MEMBER)
    def run_member(self, spec: MemberInput) -> dict[str, Any]:
        info = activity.info()
        attempt = member_setup.Attempt(
            spec.fleet, spec.workspace, spec.manifest, self.identity, self.layout
        )
        self.say(f"{spec.workspace}: attempt {info.attempt} on {self.identity}")
        out = member.run_member(
            attempt,
            mailbox=WorkflowMailbox(self.client, info.workflow_id or "", self.loop),
            beat=activity.heartbeat,
            cancelled=activity.is_cancelled,
            tick_s=self.tick_s,
            say=self.say,
        )
        return outcome_result(out, attempt=info.attempt)


def outcome_result(out: dict[str, Any], *, attempt: int) -> dict[str, Any]:
    """The activity's result for ``out``, or the Temporal error it raises (module docstring)."""
    out = {**out, "attempt": attempt}
    state = out["state"]
    if state == "completed":
        return out
    if state == "cancelled":
        raise CancelledError(out["reason"] or "cancelled")
    raise ApplicationError(
        f"{out['row'].get('workspace', '?')}: {out['reason'] or state}",
        out,
        type=ERROR_TYPES[state],
        non_retryable=state in ("failed", "bad_input", "stopped"),
    )
