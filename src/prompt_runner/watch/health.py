"""What a bounded watch judges: the run's state, its progress, and the violations.

:func:`run_facts` reads, without writing or locking anything, what the state
root says about the run beyond the raw facts of :mod:`.facts`:

* ``state`` -- ``running`` while a live process holds ``run.pid`` (pid plus
  start time, so a recycled pid never counts); else what ``runs/current.json``
  recorded (``completed``, ``failed``, ``halted``, ``interrupted``, ...);
  ``unknown`` when it still says ``running`` but no runner is alive (a
  ``kill -9``); ``not_started`` when there is no run.
* ``last_progress_at`` -- the newest change to a file that only moves when the
  run does something: the session logs and the repos (:mod:`.facts`' walk),
  the prompt logs, ``progress.log``, the run's journal and the control event
  stream; never ``control/snapshot.json`` or ``state.json``, which a live
  runner rewrites as a heartbeat. The run's ``started_at`` counts too, so a
  run that just started is not stale.
* ``waiting_until`` -- a live run waiting for a known usage-limit reset
  (H-usage's key in the control snapshot, else in ``state.json``). Waiting is
  progress: while ``now < waiting_until`` the age is 0, and after it the age
  runs from ``waiting_until``, so a run that fails to wake goes stale one
  progress timeout after its reset.
* ``stage`` -- what a live runner does outside a session (the control
  snapshot's ``stage``, :func:`.facts.live_stage`): ``{"name": "verifying" |
  "committing", "prompt_id", "since"}`` while its contract is verified or its
  work committed, else ``None`` -- also whenever no runner is alive, as a
  killed runner's snapshot keeps the stage it was in. Shown, not judged: it
  says why a run makes no progress for a while (a slow test suite, a slow
  commit hook), and ``since`` how long that has lasted.
* ``push`` -- the last push outcome the runner recorded (``state.json``'s
  ``push``, :mod:`prompt_runner.runner.push`), shown in every sample.
* ``supervisor`` -- a detached run's supervisor record (``start``): its
  containment and whether its process identity is alive, shown in every sample.

:func:`violations` judges one sample against :class:`Requirements`:

* ``runtime_unhealthy`` (always checked), with a ``reason``:
  ``state_unreadable`` (a record of truth is corrupt: ``runs/current.json``,
  a prompt log or ``progress.log``, :mod:`.records`), ``runner_gone`` (state
  ``unknown``), ``run_failed`` (recorded ``failed`` or ``halted``),
  ``repo_unreadable`` (git could not read a repo);
* ``not_running`` (``require_running``): the state is not ``running``;
* ``progress_stale`` (``require_progress``, while running): no progress for
  longer than the limit, with ``progress_age_s`` and ``progress_limit_s``.

A push failure is reported, not judged: the next prompt's push sends the
commits again, and the local commits are never lost.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import StateError
from ..state.atomic import read_json
from ..state.current_run import read_current_run
from ..state.layout import StateLayout
from ..state.lock import PidIdentity, identity_alive
from .facts import live_stage, newest_mtime
from .records import RecordsCheck

DEFAULT_PROGRESS_TIMEOUT_S = 3600.0
"""``--progress-timeout`` when ``--require-progress`` is given alone (the reference's 60 min)."""

FAILED_STATES = frozenset({"failed", "halted"})
"""Recorded run statuses that make a finished run unhealthy."""

_TAIL_BYTES = 16384


@dataclass(frozen=True)
class Requirements:
    """What a bounded watch requires of every sample.

    Attributes:
        require_running: the run must be ``running`` (a live runner holds it).
        require_progress: while running, something must have changed within
            ``progress_timeout_s`` seconds.
        progress_timeout_s: the progress limit, seconds.
    """

    require_running: bool = False
    require_progress: bool = False
    progress_timeout_s: float = DEFAULT_PROGRESS_TIMEOUT_S

    def to_dict(self) -> dict[str, Any]:
        """The report's ``requirements``."""
        return {
            "require_running": self.require_running,
            "require_progress": self.require_progress,
            "progress_timeout_s": self.progress_timeout_s,
        }


def epoch_of(value: Any) -> float | None:
    """An ISO 8601 time (``...Z`` or with an offset) as epoch seconds, else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def iso_of(epoch: float | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC with milliseconds (``None`` stays ``None``)."""
    if epoch is None:
        return None
    text = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def run_state(alive: bool, recorded: str | None) -> str:
    """The run's state from its liveness and ``runs/current.json``'s ``status``."""
    if alive:
        return "running"
    if recorded is None:
        return "not_started"
    if recorded == "running":
        return "unknown"
    return recorded


def run_facts(
    state: StateLayout,
    *,
    alive: bool,
    now: float,
    record: Path | None = None,
    records: RecordsCheck | None = None,
) -> dict[str, Any]:
    """What the state root says about the run (see the module docstring).

    Read after the liveness check (``alive``), so a run that finishes between
    the two reads as running once more, never as gone.

    Args:
        state: the run's state root.
        alive: whether a live runner holds ``run.pid``.
        now: the sample time, epoch seconds.
        record: a detached run's supervisor record (``start``'s
            ``record.json``), if one may exist.
        records: the watch's check of the prompt logs and ``progress.log``
            (:class:`.records.RecordsCheck`: each line read once per watch);
            default: a new one, which reads them whole.

    Returns:
        ``{"run_id", "recorded_status", "state", "started_at", "journal_seq",
        "waiting_until", "stage", "push", "supervisor", "state_error",
        "state_progress"}``: ``stage`` is the live runner's
        (:func:`.facts.live_stage`), ``None`` when ``alive`` is false;
        ``state_progress`` is the newest mtime (epoch s) of the state files
        that change only on progress, or ``None``; ``state_error`` the
        sentence of a corrupt record of truth -- ``runs/current.json``, a
        prompt log or ``progress.log``, as ``status`` and ``run`` refuse it
        (a torn last line, a live runner's append in flight, is none) --, or
        ``None``; ``supervisor``
        what the supervisor record says (:func:`supervisor_facts`), or ``None``.
    """
    error: str | None = None
    try:
        current = read_current_run(state.current_run) or {}
    except StateError as exc:
        current, error = {}, str(exc)
    if error is None:
        error = (records or RecordsCheck()).error(state)
    run_id = current.get("run_id") if isinstance(current.get("run_id"), str) else None
    recorded = current.get("status") if isinstance(current.get("status"), str) else None
    summary = _lenient_json(state.state_json)
    journal = state.journal(run_id) if run_id else None
    waiting = stage = None
    if alive:  # a dead runner's snapshot says what it did when it died: no wait, no stage
        snapshot = _lenient_json(state.snapshot)
        waiting = snapshot.get("waiting_until") or summary.get("waiting_until")
        stage = live_stage(snapshot)
    mtimes = [
        newest_mtime([state.prompts_dir]),
        *(_mtime(p) for p in (state.progress_log, state.events, journal) if p is not None),
    ]
    known = [m for m in mtimes if m is not None]
    return {
        "run_id": run_id,
        "recorded_status": recorded,
        "state": run_state(alive, recorded),
        "started_at": current.get("started_at"),
        "journal_seq": _last_seq(journal) if journal is not None else None,
        "waiting_until": waiting if epoch_of(waiting) is not None else None,
        "stage": stage,
        "push": summary.get("push") if isinstance(summary.get("push"), dict) else None,
        "supervisor": supervisor_facts(record) if record is not None else None,
        "state_error": error,
        "state_progress": max(known) if known else None,
    }


def supervisor_facts(record: Path) -> dict[str, Any] | None:
    """A detached run's supervisor record, as a sample shows it: ``{"containment",
    "unit", "pid", "alive", "live_at", "stopped_at"}`` (``alive``: its pid and
    start time name a live process), or ``None`` without a readable record.

    Shown, not judged: the runner a supervisor starts holds ``run.pid`` itself,
    with the same identity, and that is what liveness is read from.
    """
    doc = _lenient_json(record)
    pid, start = doc.get("pid"), doc.get("start_time")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return None
    ident = PidIdentity(pid, start if isinstance(start, int) else None)
    return {
        "containment": doc.get("containment"),
        "unit": doc.get("unit"),
        "pid": pid,
        "alive": identity_alive(ident),
        "live_at": doc.get("live_at"),
        "stopped_at": doc.get("stopped_at"),
    }


def progress_age(
    *, newest: list[float | None], started_at: Any, waiting_until: Any, now: float
) -> tuple[float | None, float | None]:
    """``(last progress, age)`` in epoch seconds and seconds, ``(None, None)`` when
    nothing was measurable. A wait in progress counts as progress up to
    ``waiting_until`` (see the module docstring)."""
    known = [m for m in (*newest, epoch_of(started_at)) if m is not None]
    if not known:
        return None, None
    last = max(known)
    until = epoch_of(waiting_until)
    if until is not None:
        last = max(last, min(now, until))
    return last, max(0.0, now - last)


def violations(sample: dict[str, Any], req: Requirements) -> list[dict[str, Any]]:
    """Every way ``sample`` (a ``prompt_runner.watch.sample/v1`` document without
    its verdict) fails ``req``, in a stable order; ``[]`` when it is healthy."""
    found: list[dict[str, Any]] = []
    state = sample["state"]
    if sample.get("state_error"):
        found.append(_unhealthy("state_unreadable", sample["state_error"]))
    if state == "unknown":
        found.append(
            _unhealthy(
                "runner_gone",
                f"run {sample.get('run_id')} is recorded running but no live process "
                "holds its run.pid (the runner died or was killed)",
            )
        )
    elif state in FAILED_STATES:
        found.append(_unhealthy("run_failed", f"run {sample.get('run_id')} ended {state}"))
    broken = [f"{r['name']} ({r['error']})" for r in sample.get("repo_details", []) if r["error"]]
    if broken:
        found.append(_unhealthy("repo_unreadable", "git cannot read " + ", ".join(broken)))
    if req.require_running and state != "running":
        found.append({"code": "not_running", "state": state})
    if req.require_progress and state == "running":
        age = sample.get("progress_age_s")
        if age is None or age > req.progress_timeout_s:
            found.append(
                {
                    "code": "progress_stale",
                    "progress_age_s": age,
                    "progress_limit_s": req.progress_timeout_s,
                    "last_progress_at": sample.get("last_progress_at"),
                }
            )
    return found


def describe(violation: dict[str, Any]) -> str:
    """One violation as a clause: ``not_running (state unknown)``."""
    code = violation["code"]
    if code == "runtime_unhealthy":
        return f"runtime_unhealthy ({violation['reason']}: {violation['detail']})"
    if code == "not_running":
        return f"not_running (state {violation['state']})"
    if code == "progress_stale":
        age = violation["progress_age_s"]
        shown = "nothing measurable" if age is None else f"no progress for {age:.0f}s"
        return f"progress_stale ({shown}, limit {violation['progress_limit_s']:g}s)"
    return str(code)


def _unhealthy(reason: str, detail: str) -> dict[str, Any]:
    return {"code": "runtime_unhealthy", "reason": reason, "detail": detail}


def _lenient_json(path: Path) -> dict[str, Any]:
    """A cache document (``state.json``, the snapshot), or ``{}`` when it is missing,
    being replaced or damaged: a cache is never evidence of anything."""
    try:
        doc = read_json(path)
    except (StateError, OSError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _last_seq(path: Path) -> int | None:
    """The ``seq`` of the journal's last complete record (its tail only), or ``None``."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    lines = tail.split(b"\n")
    if size > _TAIL_BYTES:
        lines = lines[1:]  # the first piece may start mid-line
    for line in reversed(lines):
        if not line.strip():
            continue
        try:
            seq = json.loads(line).get("seq")
        except (ValueError, RecursionError, AttributeError):
            continue  # a torn last line: the one before it is the last record
        return seq if isinstance(seq, int) else None
    return None
