"""``status --workspace``: the versioned status document ``prompt_runner.workspace.status/v1``.

Read-only. Every key (what it means, where it comes from)::

    schema          "prompt_runner.workspace.status/v1"
    schema_version  1
    workspace       the workspace id; manifest: its path
    state           running | stopped | completed | failed | unhealthy (below)
    run_id          the current run's id (runs/current.json), or null
    run_status      how the current run stands or ended, as ``status`` says it
                    (its ``last_run.status``): what runs/current.json says
                    (running, completed, failed, halted, interrupted...), except
                    that a run it still calls running (or repairing) while no
                    runner is alive is ``unknown`` (killed, or the machine went
                    down); null before any run
    run_recorded_status  what runs/current.json says where ``run_status`` is
                    ``unknown`` (``running`` or ``repairing``), else null
    containment     {"kind": the manifest's containment, "alive": the runner holds
                    its lock (run.pid names a live process with the recorded start
                    time), "pid": that pid or null, "supervisor": the detached
                    launch's record from <runtime_root>/supervisor/ if one is there}
    last_progress_at  ISO 8601 (UTC) of the newest write to progress.log, state.json
                    or the event stream, or null
    journal_seq     the last seq of the current run's journal, or null
    prompts         {"total", "completed", "by_status": {status: count}} over the packet
                    (progress.log; a prompt state.json leaves running or interrupted
                    counts so -- interrupted when no runner is alive; a prompt
                    progress.log calls ``failed`` counts under state.json's own
                    word for it, e.g. ``verification_failed``, as ``status`` shows it)
    push            the run's last push outcome (``commits.push: after_prompt``;
                    state.json's ``push``: {"status": ok|failed, "at", "prompt_id",
                    "failed": [repo...], "repos": {name: outcome}}), or null before
                    any push
    clones          {name: {"path", "branch", "head", "dirty": count, "ahead": count,
                    "behind": count, "ahead_of", "push", "problem"}} -- ahead/behind
                    count HEAD against ``ahead_of``: the remote-tracking branch of the
                    checked-out branch (its upstream, else ``origin/<branch>``), else,
                    while the work branch was never pushed, the base the manifest
                    expects (``origin/<ref>``); so after a failed push the clone is
                    ahead by the commits the remote lacks. ``push``: that repository's
                    latest outcome from ``push.repos``, or null
    state_dir       the packet's state root

``state``: ``running`` while a live runner holds the lock; otherwise
``unhealthy`` when the current run says ``running`` but no runner is alive
(killed, or the machine went down), ``completed`` when every prompt of the
packet is completed, ``failed`` when it ended ``failed`` or ``halted``, else
``stopped`` (interrupted, stopped, or never started).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

from .. import git
from ..errors import UserError
from ..packet.loader import load_packet
from ..state.atomic import read_json_object
from ..state.current_run import UNFINISHED_RUN, read_current_run
from ..state.lines import read_complete_lines
from ..state.lock import identity_alive, read_pid_file
from ..state.progress import read_progress
from .clones import inspect_clone
from .clones import run as clone_git
from .model import Repository, Workspace

STATUS_SCHEMA = "prompt_runner.workspace.status/v1"


def workspace_status(ws: Workspace) -> dict[str, Any]:
    """The status document of ``ws`` (see the module docstring).

    Raises:
        StateError: a record of truth under the state directory is corrupt.
    """
    layout = ws.layout.state
    ident = read_pid_file(layout.run_pid)
    alive = ident is not None and identity_alive(ident)
    current = read_current_run(layout.current_run) or {}
    run_id = current.get("run_id") if isinstance(current.get("run_id"), str) else None
    recorded_run = current.get("status") if isinstance(current.get("status"), str) else None
    run_status = recorded_run
    if not alive and recorded_run in UNFINISHED_RUN:
        run_status = "unknown"  # as status's last_run says it (api_status.last_run)
    prompts = _prompts(ws, alive)
    meta = read_json_object(layout.state_json) or {}
    push = meta.get("push") if isinstance(meta.get("push"), dict) else None
    repos = push.get("repos") if push is not None else None
    return {
        "schema": STATUS_SCHEMA,
        "schema_version": 1,
        "workspace": ws.id,
        "manifest": str(ws.manifest_path),
        "state": _state(alive, recorded_run, prompts),
        "run_id": run_id,
        "run_status": run_status,
        "run_recorded_status": recorded_run if run_status != recorded_run else None,
        "containment": {
            "kind": ws.containment,
            "alive": alive,
            "pid": ident.pid if alive and ident is not None else None,
            "supervisor": _supervisor(ws),
        },
        "last_progress_at": _last_progress(
            [layout.progress_log, layout.state_json, layout.events, layout.logs_dir]
        ),
        "journal_seq": _journal_seq(layout.journal(run_id)) if run_id else None,
        "prompts": prompts,
        "push": push,
        "clones": {
            name: _clone(r, repos.get(name) if isinstance(repos, dict) else None)
            for name, r in ws.repositories.items()
        },
        "state_dir": str(ws.state_dir),
    }


def _state(alive: bool, run_status: str | None, prompts: dict[str, Any]) -> str:
    if alive:
        return "running"
    if run_status in ("running", "repairing"):
        return "unhealthy"  # before completed: a dead re-run's prompts are not whole
    if prompts["total"] and prompts["completed"] == prompts["total"]:
        return "completed"
    if run_status in ("failed", "halted"):
        return "failed"
    return "stopped"


def _prompts(ws: Workspace, alive: bool) -> dict[str, Any]:
    """Counts over the packet from ``progress.log``, except that a prompt the
    state leaves running/repairing/interrupted (a later run re-ran it) counts
    as ``running`` while a runner is alive and ``interrupted`` when none is,
    as ``status`` shows it."""
    progress = read_progress(ws.layout.state.progress_log)
    ids = _packet_ids(ws)
    statuses = {i: progress[i].status if i in progress else "pending" for i in ids}
    state = read_json_object(ws.layout.state.state_json) or {}
    records = state.get("prompts")
    for i, record in (records if isinstance(records, dict) else {}).items():
        recorded = record.get("status") if isinstance(record, dict) else None
        if i in statuses and recorded in ("running", "repairing", "interrupted"):
            statuses[i] = recorded if alive and recorded != "interrupted" else "interrupted"
        elif statuses.get(i) == "failed" and recorded not in (None, "completed", "pending"):
            # progress.log keeps only "failed"; state.json says which (verification_failed...)
            statuses[i] = str(recorded)
    by_status = Counter(statuses.values())
    return {
        "total": len(ids),
        "completed": by_status.get("completed", 0),
        "by_status": dict(sorted(by_status.items())),
    }


def _packet_ids(ws: Workspace) -> list[str]:
    if not ws.packet_dir.is_dir():
        return []
    try:
        return [p.id for p in load_packet(ws.packet_dir).prompts]
    except UserError:
        return []


def _supervisor(ws: Workspace) -> dict[str, Any] | None:
    """The newest JSON record the detached launch left in ``supervisor/``, if any."""
    directory = ws.layout.supervisor_dir
    if not directory.is_dir():
        return None
    records = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for path in reversed(records):
        try:
            doc = read_json_object(path)
        except UserError:
            continue
        if doc is not None:
            return {"file": str(path), **doc}
    return None


def _last_progress(paths: list[Path]) -> str | None:
    newest = 0.0
    for path in paths:
        try:
            newest = max(newest, path.stat().st_mtime)
            if path.is_dir():
                for child in path.iterdir():
                    newest = max(newest, child.stat().st_mtime)
        except OSError:
            continue
    if not newest:
        return None
    return dt.datetime.fromtimestamp(newest, dt.UTC).isoformat(timespec="seconds")


def _journal_seq(path: Path) -> int | None:
    lines, _torn = read_complete_lines(path)
    for raw in reversed(lines):
        try:
            seq = json.loads(raw).get("seq")
        except (ValueError, RecursionError, AttributeError):
            continue
        if isinstance(seq, int):
            return seq
    return None


def _clone(repo: Repository, push: Any) -> dict[str, Any]:
    state = inspect_clone(repo)
    ahead, behind, ahead_of = state.ahead, state.behind, None
    if state.usable and state.head is not None:
        ahead_of, counts = _against_remote(state.path, state.branch, state.head)
        if counts is not None:
            ahead, behind = counts
        elif state.target is not None:
            ahead_of = (
                f"origin/{repo.ref}"
                if state.target == _sha(state.path, f"refs/remotes/origin/{repo.ref}")
                else repo.ref
            )
    return {
        "path": str(state.path),
        "present": state.present,
        "problem": state.problem,
        "branch": state.branch,
        "head": state.head,
        "dirty": len(state.dirty),
        "ahead": ahead,
        "behind": behind,
        "ahead_of": ahead_of,
        "push": push if isinstance(push, dict) else None,
    }


def _against_remote(
    path: Path, branch: str | None, head: str
) -> tuple[str | None, tuple[int, int] | None]:
    """(the remote-tracking ref's short name, (ahead, behind) of ``head`` against it)
    for the checked-out ``branch`` -- its upstream, else ``origin/<branch>`` -- or
    ``(None, None)`` when it has none (never pushed, or detached)."""
    if branch is None:
        return None, None
    up = git.upstream(path)
    ref, short = (
        (up.ref, up.short)
        if up is not None
        else (
            f"refs/remotes/origin/{branch}",
            f"origin/{branch}",
        )
    )
    if _sha(path, ref) is None:
        return None, None
    res = clone_git(
        path, "rev-list", "--left-right", "--count", f"{head}...{ref}", timeout_ms=60_000
    )
    if not res.ok:
        return None, None
    left, right = res.stdout.split()
    return short, (int(left), int(right))


def _sha(path: Path, ref: str) -> str | None:
    res = clone_git(path, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", timeout_ms=60_000)
    return (res.stdout.strip() or None) if res.ok else None
