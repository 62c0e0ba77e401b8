"""The fleet's Temporal workflows: one per fleet, one per member (deterministic code only).

* :class:`FleetWorkflow` (id ``prompt-runner/<fleet>``) starts each member's
  workflow as a child, at most ``concurrency`` at once (an ``asyncio``
  semaphore in workflow code: Temporal keeps it durable), and with
  ``failure_policy: stop`` starts no new child once one failed. Its ``drain``
  signal (``fleet stop``) starts no new one either.
* :class:`WorkspaceWorkflow` (id ``prompt-runner/<fleet>/<workspace>``: one
  live run of a workspace in the whole cluster) runs the member's one
  activity (``prompt-runner.run-member``, :mod:`.activities`) with a
  heartbeat timeout -- a dead worker's attempt times out and is retried on
  another worker -- and a retry policy under which a failed packet or bad
  input is final. It holds what the activity and the client exchange:
  ``steer`` signals (applied by the activity through the member's control
  plane, their outcome signalled back with ``steer_done``), the ``stop``
  signal (after the current prompt), and the hosts that ran it (``claimed``);
  the ``view`` query shows all of it.

This module is loaded inside Temporal's workflow sandbox: standard library and
``temporalio`` only.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError

RUN_MEMBER = "prompt-runner.run-member"
"""The activity's name (``activities.py`` registers it)."""

NON_RETRYABLE = ["PacketFailed", "BadInput", "Stopped"]
"""Activity error types that end the member's workflow: its packet failed (exit 1), its
input is bad (2), it was stopped after its prompt (``fleet stop --after-prompt``)."""


@dataclass
class MemberInput:
    """What a member's workflow needs, and all a worker on another machine gets.

    Attributes:
        fleet: the fleet id; workspace: the member's workspace id.
        manifest: its workspace manifest as data (remotes absolute, no ``source``).
        heartbeat_timeout_s: seconds without a heartbeat before the attempt is lost.
        max_attempts: the activity's retry budget (attempts in all).
    """

    fleet: str
    workspace: str
    manifest: dict[str, Any]
    heartbeat_timeout_s: int = 30
    max_attempts: int = 10


@dataclass
class FleetInput:
    """The fleet workflow's input: ``members`` run on ``task_queue``, at most
    ``concurrency`` at once, ``failure_policy`` continue|stop."""

    fleet: str
    task_queue: str
    concurrency: int
    failure_policy: str
    members: list[MemberInput] = field(default_factory=list)


def member_workflow_id(fleet: str, workspace: str) -> str:
    """``prompt-runner/<fleet>/<workspace>``."""
    return f"prompt-runner/{fleet}/{workspace}"


def fleet_workflow_id(fleet: str) -> str:
    """``prompt-runner/<fleet>``."""
    return f"prompt-runner/{fleet}"


@workflow.defn(name="prompt-runner.workspace")
class WorkspaceWorkflow:
    """One member's run (see the module docstring)."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.steers: list[dict[str, Any]] = []
        self.stop_asked: dict[str, Any] | None = None

    @workflow.run
    async def run(self, member: MemberInput) -> dict[str, Any]:
        result: dict[str, Any] = await workflow.execute_activity(
            RUN_MEMBER,
            member,
            start_to_close_timeout=timedelta(days=30),
            heartbeat_timeout=timedelta(seconds=member.heartbeat_timeout_s),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=1),
                maximum_interval=timedelta(seconds=30),
                maximum_attempts=member.max_attempts,
                non_retryable_error_types=NON_RETRYABLE,
            ),
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        return {**result, "hosts": list(self.hosts)}

    @workflow.signal
    def claimed(self, host: str) -> None:
        """An attempt of the activity began on ``host``."""
        if not self.hosts or self.hosts[-1] != host:
            self.hosts.append(host)

    @workflow.signal
    def steer(self, request: dict[str, Any]) -> None:
        """Queue a steer ``{"id", "text", "author"}`` for the activity to apply."""
        self.steers.append({**request, "outcome": None})

    @workflow.signal
    def steer_done(self, steer_id: str, receipt: dict[str, Any]) -> None:
        """The activity applied steer ``steer_id``: ``{"outcome", "reason", "request", "host"}``."""
        for steer in self.steers:
            if steer["id"] == steer_id:
                steer.update(receipt)

    @workflow.signal
    def stop(self, after_prompt: bool) -> None:
        """Stop the member's run once its current prompt has ended."""
        self.stop_asked = {"after_prompt": after_prompt}

    @workflow.query
    def view(self) -> dict[str, Any]:
        """``{"hosts", "steers", "stop"}``."""
        return {"hosts": list(self.hosts), "steers": list(self.steers), "stop": self.stop_asked}


@workflow.defn(name="prompt-runner.fleet")
class FleetWorkflow:
    """The fleet: its members' workflows as children (see the module docstring)."""

    def __init__(self) -> None:
        self.draining = False
        self.results: dict[str, str] = {}

    @workflow.run
    async def run(self, fleet: FleetInput) -> dict[str, str]:
        slots = asyncio.Semaphore(fleet.concurrency)

        async def one(member: MemberInput) -> None:
            async with slots:
                if self.draining:
                    self.results[member.workspace] = "skipped"
                    return
                self.results[member.workspace] = "running"
                try:
                    await workflow.execute_child_workflow(
                        WorkspaceWorkflow.run,
                        member,
                        id=member_workflow_id(fleet.fleet, member.workspace),
                        task_queue=fleet.task_queue,
                        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
                    )
                    self.results[member.workspace] = "completed"
                except WorkflowAlreadyStartedError:
                    self.results[member.workspace] = "completed before"
                except ChildWorkflowError as exc:
                    cause = exc.cause
                    self.results[member.workspace] = f"failed: {cause or exc}"
                    if fleet.failure_policy == "stop":
                        self.draining = True

        await asyncio.gather(*(one(m) for m in fleet.members))
        return dict(self.results)

    @workflow.signal
    def drain(self) -> None:
        """Start no new member (``fleet stop``)."""
        self.draining = True

    @workflow.query
    def members(self) -> dict[str, str]:
        """Member -> ``running``, ``completed``, ``failed: ...``, ``skipped`` (started ones)."""
        return dict(self.results)
