"""``fleet watch --for D --every D``: the bounded watch over every member, one report.

Each tick samples every member with the bounded watch's own sample
(:func:`prompt_runner.watch.bounded.take_sample`, judged by
:mod:`prompt_runner.watch.health`) and appends one fleet sample -- all the
members' samples -- to ``<fleet root>/acceptance/watch-<stamp>.jsonl``,
fsynced before it is shown. A member not started yet (no clone, or no run
recorded) is ``queued`` and healthy. ``--require-running`` is the fleet's:
while some member is unfinished, at least one must be running;
``--require-progress`` applies to each running member. With ``engine:
temporal`` the members run on workers: each one's sample is made from its
``fleet status`` row (its workflow: state, last progress) and judged by the
same rules (:func:`row_sample`). The first unhealthy
sample ends the watch, a whole interval of healthy ones passes it; the
report replaces ``watch-<stamp>.report.json`` atomically either way.

A fleet sample (``schema: prompt_runner.fleet.watch.sample/v1``)::

    {"schema", "seq", "at", "elapsed_s", "fleet", "states": {state: count},
     "running": N, "members": {workspace: its watch sample or {"state": "queued"}},
     "healthy", "violations": [{"workspace": W | null, "code", ...}]}

The report (``schema: prompt_runner.fleet.watch.report/v1``)::

    {"schema", "passed", "ended" (completed|unhealthy|interrupted), "fleet",
     "for_s", "every_s", "requirements", "started_at", "finished_at",
     "elapsed_s", "sample_count", "violations", "failed_sample", "evidence",
     "report", "members": {workspace: its state in the last sample}, "last_sample"}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..state.atomic import write_json_atomic
from ..state.jsonl import JsonlWriter
from ..state.layout import StateLayout
from ..watch import health
from ..watch.bounded import claim_stamp, take_sample
from ..watch.health import Requirements
from .model import Fleet, Member
from .status import MemberRow

SAMPLE_SCHEMA = "prompt_runner.fleet.watch.sample/v1"
REPORT_SCHEMA = "prompt_runner.fleet.watch.report/v1"

FINISHED = frozenset({"completed"})
Emit = Callable[[dict[str, Any]], None]
Rows = Callable[[], tuple[MemberRow, ...]]


def member_sample(
    member: Member, req: Requirements, *, seq: int, elapsed_s: float, now: float
) -> dict[str, Any]:
    """One member's judged sample (``queued`` and healthy before it has run)."""
    ws = member.workspace
    state = ws.layout.state
    if not ws.packet_dir.is_dir() or not state.current_run.exists():
        return {"workspace": member.id, "state": "queued", "healthy": True, "violations": []}
    doc = take_sample(ws.packet_dir, state, req, seq=seq, elapsed_s=elapsed_s, now=now)
    return {"workspace": member.id, **doc}


def row_sample(row: MemberRow, req: Requirements, *, now: float) -> dict[str, Any]:
    """A member's judged sample from its status row (the Temporal engine: the member
    runs on a worker, its row comes from its workflow), judged by the same rules."""
    last = health.epoch_of(row.last_progress_at)
    doc: dict[str, Any] = {
        "workspace": row.workspace,
        "state": row.state,
        "run_id": row.run_id,
        "host": row.host,
        "prompt": row.prompt,
        "progress": row.progress,
        "last_progress_at": row.last_progress_at,
        "progress_age_s": None if last is None else round(max(0.0, now - last), 3),
    }
    doc["violations"] = [] if row.state == "queued" else health.violations(doc, req)
    doc["healthy"] = not doc["violations"]
    return doc


def fleet_sample(
    fleet: Fleet,
    req: Requirements,
    *,
    seq: int,
    elapsed_s: float,
    now: float,
    rows: Rows | None = None,
) -> dict[str, Any]:
    """Every member sampled and the fleet judged (see the module docstring); with
    ``rows`` (the Temporal engine) each member's sample is made from its status row."""
    each = replace(req, require_running=False)
    if rows is not None:
        members = {r.workspace: row_sample(r, each, now=now) for r in rows()}
    else:
        members = {
            m.id: member_sample(m, each, seq=seq, elapsed_s=elapsed_s, now=now)
            for m in fleet.members
        }
    states: dict[str, int] = {}
    for doc in members.values():
        states[doc["state"]] = states.get(doc["state"], 0) + 1
    found = [{"workspace": w, **v} for w, doc in members.items() for v in doc["violations"]]
    running = states.get("running", 0)
    unfinished = any(doc["state"] not in FINISHED for doc in members.values())
    if req.require_running and unfinished and not running:
        found.append({"workspace": None, "code": "not_running", "state": "no member is running"})
    return {
        "schema": SAMPLE_SCHEMA,
        "seq": seq,
        "at": health.iso_of(now),
        "elapsed_s": round(elapsed_s, 3),
        "fleet": fleet.id,
        "states": dict(sorted(states.items())),
        "running": running,
        "members": members,
        "healthy": not found,
        "violations": found,
    }


def watch_fleet(
    fleet: Fleet,
    *,
    for_s: float,
    every_s: float,
    requirements: Requirements | None = None,
    emit: Emit | None = None,
    rows: Rows | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Watch every member of ``fleet`` for ``for_s`` seconds, a sample every ``every_s``.

    Returns:
        The report document (see the module docstring), as written.

    Raises:
        StorageError: the evidence cannot be written.
        KeyboardInterrupt: re-raised after the report (``ended: interrupted``).
    """
    req = requirements or Requirements()
    started_wall = wall()
    # the fleet root is named as a state root is: acceptance/watch-<stamp>
    samples_path, report_path = claim_stamp(StateLayout(fleet.layout.root), started_wall)
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "passed": False,
        "ended": "interrupted",
        "fleet": fleet.id,
        "for_s": for_s,
        "every_s": every_s,
        "requirements": req.to_dict(),
        "started_at": health.iso_of(started_wall),
        "finished_at": None,
        "elapsed_s": 0.0,
        "sample_count": 0,
        "violations": [],
        "failed_sample": None,
        "evidence": str(samples_path),
        "report": str(report_path),
        "members": {},
        "last_sample": None,
    }
    start = clock()
    try:
        with JsonlWriter(samples_path) as writer:
            end, due, seq = start + for_s, start, 0
            while True:
                final = due >= end
                seq += 1
                elapsed = clock() - start
                doc = fleet_sample(fleet, req, seq=seq, elapsed_s=elapsed, now=wall(), rows=rows)
                writer.append(doc)
                report.update(
                    sample_count=seq,
                    elapsed_s=round(elapsed, 3),
                    last_sample=doc,
                    members={w: m["state"] for w, m in doc["members"].items()},
                )
                if emit is not None:
                    emit(doc)
                if not doc["healthy"]:
                    report.update(
                        ended="unhealthy", violations=doc["violations"], failed_sample=seq
                    )
                    break
                if final:
                    report.update(passed=True, ended="completed")
                    break
                due = min(max(due + every_s, clock()), end)
                sleep(max(0.0, due - clock()))
    finally:
        report["finished_at"] = health.iso_of(wall())
        write_json_atomic(report_path, report)
    return report
