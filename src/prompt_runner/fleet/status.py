"""``fleet status``: one row per member (``prompt_runner.fleet.status/v1``).

A row (:class:`MemberRow`), every key with what it means and where it comes from::

    workspace         the member's workspace id
    state             queued (never started) | running | completed | failed | stopped
                      | unhealthy (its run says running, no runner lives) | error
                      (the fleet could not start it: ``reason`` says why) | skipped
                      (never started: the last submission was stopped or
                      ``failure_policy: stop`` tripped; ``reason`` says which)
    prompt            the prompt the live run is on (control snapshot), else null
    completed, total  prompts completed / in the packet (progress.log)
    attempts          sessions run over all its prompts (the prompt records)
    starts            times the fleet started its run (queue.jsonl; Temporal: the
                      activity's attempts)
    cost_usd          what its sessions reported they cost, summed (null: none reported)
    host              the machine its run was last started on (local: this host; Temporal:
                      the worker identity)
    hosts             every machine that ran it, oldest first (Temporal; local: [host])
    last_progress_at  ISO 8601 UTC of the newest write to its progress, state or events
    run_id            its current run id, or null
    reason            why it failed, could not start or was skipped, else null

Reading the local engine's rows writes nothing; Temporal rows come from the
workflows (``fleet/temporal/status.py``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StateError, UserError
from ..state.atomic import read_json_object
from ..state.current_run import read_current_run
from ..state.layout import StateLayout
from ..state.lock import identity_alive, read_pid_file
from ..state.progress import read_progress
from ..state.prompt_log import fold_prompt_log
from ..workspace import Workspace
from ..workspace.status import workspace_status
from .model import Fleet, Member
from .queue import QueueState, host_name, read_queue

STATUS_SCHEMA = "prompt_runner.fleet.status/v1"


@dataclass(frozen=True)
class MemberRow:
    """One member's row (see the module docstring for each key)."""

    workspace: str
    state: str
    prompt: str | None
    completed: int
    total: int
    attempts: int
    starts: int
    cost_usd: float | None
    host: str | None
    last_progress_at: str | None
    run_id: str | None = None
    reason: str | None = None
    hosts: tuple[str, ...] = field(default=())

    @property
    def progress(self) -> str:
        """``k/n``: prompts completed of the packet's."""
        return f"{self.completed}/{self.total}"

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["hosts"] = list(self.hosts)
        return doc


@dataclass(frozen=True)
class FleetStatus:
    """``fleet status``: the fleet's rows and its submission.

    Attributes:
        fleet: the fleet id; manifest: its path; engine: local|temporal.
        rows: one :class:`MemberRow` per member, in manifest order.
        submission: the local engine's last submission number (0: never), else ``None``.
        driving: the pid of the live local ``fleet submit``, else ``None``.
    """

    fleet: str
    manifest: str
    engine: str
    rows: tuple[MemberRow, ...]
    submission: int | None = None
    driving: int | None = None

    def counts(self) -> dict[str, int]:
        """State -> number of members in it."""
        out: dict[str, int] = {}
        for row in self.rows:
            out[row.state] = out.get(row.state, 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": STATUS_SCHEMA,
            "schema_version": 1,
            "fleet": self.fleet,
            "manifest": self.manifest,
            "engine": self.engine,
            "submission": self.submission,
            "driving": self.driving,
            "counts": self.counts(),
            "rows": [r.to_dict() for r in self.rows],
        }


def local_status(fleet: Fleet, *, driving: int | None = None) -> FleetStatus:
    """The rows of a local-engine fleet, read from each workspace and the queue."""
    queue = read_queue(fleet.layout.queue)
    rows = tuple(member_row(m, queue) for m in fleet.members)
    return FleetStatus(
        fleet.id,
        str(fleet.manifest_path),
        fleet.engine,
        rows,
        submission=queue.submission,
        driving=driving,
    )


def member_row(member: Member, queue: QueueState | None = None) -> MemberRow:
    """One member's row from its workspace's state (and the local queue, if given)."""
    ws = member.workspace
    entry = queue.members.get(member.id) if queue is not None else None
    doc = workspace_status(ws)
    prompts = doc["prompts"]
    state = str(doc["state"])
    if state == "stopped" and doc["run_id"] is None and not prompts["completed"]:
        state = "queued"
    reason = None
    if entry is not None and entry.state == "error" and state in ("queued", "stopped"):
        state = "error"
        last = entry.last or {}
        reason = str(last.get("reason")) if last.get("reason") else None
    prior = entry.last if entry is not None else None
    if (
        state == "queued"
        and prior is not None
        and queue is not None
        and prior.get("submission") == queue.submission
    ):
        # never run: what the last submission did with it, in its submit's words
        if prior.get("event") == "skipped":
            state = "skipped"
        elif prior.get("event") == "finished" and prior.get("state") == "stopped":
            state = "stopped"
        if state != "queued" and prior.get("reason"):
            reason = str(prior.get("reason"))
    attempts, cost = sessions(ws.layout.state)
    host = entry.host if entry is not None and entry.host else None
    if host is None and state not in ("queued", "skipped"):
        host = host_name()
    return MemberRow(
        workspace=member.id,
        state=state,
        prompt=running_prompt(ws.layout.state) if state == "running" else None,
        completed=int(prompts["completed"]),
        total=int(prompts["total"]),
        attempts=attempts,
        starts=entry.starts if entry is not None else 0,
        cost_usd=cost,
        host=host,
        last_progress_at=doc["last_progress_at"],
        run_id=doc["run_id"],
        reason=reason,
        hosts=(host,) if host else (),
    )


def running_row(ws: Workspace, ids: tuple[str, ...]) -> MemberRow:
    """The row of ``ws`` while a runner of it runs here, read without git or the packet
    (a Temporal worker's heartbeat): ``ids`` are the packet's prompt ids, read once."""
    layout = ws.layout.state
    progress = read_progress(layout.progress_log)
    done = sum(1 for i in ids if i in progress and progress[i].status == "completed")
    attempts, cost = sessions(layout)
    try:
        current = read_current_run(layout.current_run) or {}
    except UserError:
        current = {}
    newest = 0.0
    for path in (layout.progress_log, layout.state_json, layout.events):
        with contextlib.suppress(OSError):
            newest = max(newest, path.stat().st_mtime)
    ident = read_pid_file(layout.run_pid)
    alive = ident is not None and identity_alive(ident)
    return MemberRow(
        workspace=ws.id,
        state="running" if alive else "stopped",
        prompt=running_prompt(layout) if alive else None,
        completed=done,
        total=len(ids),
        attempts=attempts,
        starts=0,
        cost_usd=cost,
        host=None,
        last_progress_at=(
            dt.datetime.fromtimestamp(newest, dt.UTC).isoformat(timespec="seconds")
            if newest
            else None
        ),
        run_id=current.get("run_id") if isinstance(current.get("run_id"), str) else None,
    )


def sessions(state: StateLayout) -> tuple[int, float | None]:
    """``(attempts, cost_usd)`` over every prompt record under ``state`` (a damaged
    record is counted as none: status never fails on it)."""
    attempts, cost, priced = 0, 0.0, False
    directory = state.prompts_dir
    if not directory.is_dir():
        return 0, None
    for path in sorted(directory.glob("*.jsonl")):
        try:
            record, _ = fold_prompt_log(path)
        except (StateError, UserError, OSError):
            continue
        for attempt in record.get("attempts", []):
            attempts += 1
            spent = attempt.get("cost_usd")
            if isinstance(spent, int | float) and not isinstance(spent, bool):
                cost += float(spent)
                priced = True
    return attempts, round(cost, 6) if priced else None


def running_prompt(state: StateLayout) -> str | None:
    """The prompt id the control snapshot shows, else ``None``."""
    try:
        snap = read_json_object(state.snapshot)
    except UserError:
        return None
    if not snap:
        return None
    prompt = snap.get("prompt_id")
    return prompt if isinstance(prompt, str) else None


def driver_pid(path: Path) -> int | None:
    """The pid of the live ``fleet submit`` holding ``path``, else ``None``."""
    ident = read_pid_file(path)
    return ident.pid if ident is not None and identity_alive(ident) else None
