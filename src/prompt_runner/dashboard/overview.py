"""One overview row per run, from what the runner wrote (read only, never raises).

A row is built from ``control/snapshot.json`` (the live header), ``runs/
current.json`` (the run's identity, targets and recorded status), ``run.pid``
(is a runner alive: pid plus start time) and the stream's mtime (how long the
run has been quiet). Each file may be missing, damaged or stale, and the row
then says what it can and names the problem in ``notes``:

======================  ===============================================
the files say           ``state``
======================  ===============================================
a live runner           ``running`` (``waiting`` with ``waiting_until``
                        when the snapshot says the run waits, issue #16)
running, no live runner ``down`` -- the runner died; the rest of the row
                        is its last known state
a finished run          its recorded word: ``completed``, ``failed``,
                        ``interrupted``...
nothing yet             ``no run``; a fleet member: ``queued`` (the next
                        ``fleet submit`` starts it), or ``error`` when the
                        fleet's queue says it could not be started (the
                        reason in ``notes``)
======================  ===============================================

A fleet member's row names its fleet (``fleet``: the fleet id, else ``None``).

Times are epoch milliseconds; ``elapsed_ms`` and ``quiet_ms`` (since the
stream was last appended to, ``last_event_ms``) are as of ``now_ms``; the page
keeps them ticking.
"""

from __future__ import annotations

import contextlib
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from ..control.runs import run_is_live
from ..control.store import ControlStore
from ..errors import PromptRunnerError
from ..fleet.queue import QueueState, read_queue
from ..state.current_run import read_current_run
from ..state.records import RunStatus
from .sources import RunSource

ROW_KEYS = (
    "key",
    "name",
    "kind",
    "fleet",
    "state",
    "live",
    "run_id",
    "prompt_id",
    "prompt_name",
    "prompt_index",
    "prompt_total",
    "attempt",
    "mode",
    "provider",
    "model",
    "elapsed_ms",
    "quiet_ms",
    "last_event_ms",
    "tokens",
    "cost_usd",
    "steer_count",
    "event_count",
    "view",
    "waiting_until",
    "pending_requests",
    "updated_at",
    "now_ms",
    "notes",
)
"""Every key of a row, in the order the page shows them."""


def _ms(iso: object) -> int | None:
    """Epoch ms of an ISO 8601 time (``...Z`` allowed), or ``None``."""
    if not isinstance(iso, str) or not iso:
        return None
    try:
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _state(live: bool, recorded: object, snap: dict[str, Any] | None) -> str:
    if live:
        return "waiting" if snap and snap.get("waiting_until") else RunStatus.RUNNING.value
    if recorded == RunStatus.RUNNING:
        return "down"
    return str(recorded) if isinstance(recorded, str) and recorded else "no run"


_QUEUES: dict[Path, tuple[tuple[int, int], QueueState]] = {}
_QUEUES_LOCK = threading.Lock()


def _queue(path: Path) -> QueueState | None:
    """The fleet queue at ``path`` folded, re-read only when its size or mtime moved
    (every member's row asks each tick); ``None`` when it cannot be read."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return QueueState()  # never submitted
    except OSError:
        return None
    stamp = (st.st_size, st.st_mtime_ns)
    with _QUEUES_LOCK:
        cached = _QUEUES.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        state = read_queue(path)
    except (PromptRunnerError, OSError):
        return None
    with _QUEUES_LOCK:
        _QUEUES[path] = (stamp, state)
    return state


def _fleet_state(source: RunSource, notes: list[str]) -> str:
    """A fleet member with no run: ``queued``, or ``error`` (the queue's reason in ``notes``)."""
    assert source.fleet is not None
    queue = _queue(source.fleet.queue)
    if queue is None:
        notes.append(f"{source.fleet.queue}: the fleet's queue cannot be read")
        return "queued"
    entry = queue.members.get(source.member or source.key)
    if entry is not None and entry.state == "error":
        reason = (entry.last or {}).get("reason")
        notes.append(f"the fleet could not start it: {reason or 'no reason recorded'}")
        return "error"
    return "queued"


def _read_run(
    source: RunSource, notes: list[str]
) -> tuple[ControlStore, dict[str, Any] | None, dict[str, Any] | None, bool]:
    """``(store, snapshot, current run, live)`` of ``source``; what cannot be read
    is named in ``notes``, and a snapshot of another run is dropped."""
    store = ControlStore(source.layout.root)
    snap = store.read_snapshot()  # None when missing or damaged (a view, rewritten)
    if snap is None and store.snapshot_path.exists():
        notes.append("snapshot.json is damaged; showing the run's record")
    current: dict[str, Any] | None = None
    try:
        current = read_current_run(source.layout.current_run)
    except PromptRunnerError as exc:
        notes.append(str(exc))
    live = run_is_live(source.layout.root)
    if snap is not None and current is not None and snap.get("run_id") != current.get("run_id"):
        # a new run has started (or the snapshot is a leftover): trust the record
        snap = snap if live and snap.get("status") == RunStatus.RUNNING else None
    return store, snap, current, live


def _position(prompt_id: object, current: dict[str, Any]) -> tuple[int | None, int | None]:
    """``(1-based index of prompt_id among the run's targets, their count)``."""
    targets = current.get("targets")
    targets = [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []
    index = targets.index(prompt_id) + 1 if prompt_id in targets else None
    return index, len(targets) or None


def _elapsed(s: dict[str, Any], current: dict[str, Any], live: bool, now_ms: int) -> int:
    """The run's elapsed ms: counted from its start while live, else as last recorded."""
    started = _ms(s.get("started_at")) or _ms(current.get("started_at"))
    if live and started is not None:
        return max(0, now_ms - started)
    return _int(s.get("elapsed_ms"))


def _last_event_ms(source: RunSource) -> int | None:
    """When ``events.jsonl`` was last written (epoch ms), ``None`` when it is not there."""
    with contextlib.suppress(OSError):
        return int(os.stat(source.layout.events).st_mtime * 1000)
    return None


def run_row(source: RunSource, now_ms: int) -> dict[str, Any]:
    """The overview row of ``source`` as of ``now_ms`` (keys: :data:`ROW_KEYS`).

    Never raises: a damaged file is named in ``notes`` and left out.
    """
    notes: list[str] = []
    store, snap, current, live = _read_run(source, notes)
    # runs/current.json is the run's record of how it ended; the snapshot is a view of it
    recorded = (current or {}).get("status") or (snap or {}).get("status")
    s, run = snap or {}, current or {}
    prompt_id = s.get("prompt_id")
    index, total = _position(prompt_id, run)
    elapsed = _elapsed(s, run, live, now_ms)
    last_event = _last_event_ms(source)
    raw_tokens = s.get("tokens")
    tokens: dict[str, Any] = raw_tokens if isinstance(raw_tokens, dict) else {}
    cost = s.get("cost_usd")
    state = _state(live, recorded, snap)
    if state == "no run" and source.fleet is not None:
        state = _fleet_state(source, notes)
    row: dict[str, Any] = {
        "key": source.key,
        "name": source.name,
        "kind": source.kind,
        "fleet": source.fleet.id if source.fleet is not None else None,
        "state": state,
        "live": live,
        "run_id": s.get("run_id") or run.get("run_id"),
        "prompt_id": prompt_id,
        "prompt_name": s.get("prompt_name"),
        "prompt_index": index,
        "prompt_total": total,
        "attempt": s.get("attempt"),
        "mode": s.get("mode"),
        "provider": s.get("provider"),
        "model": s.get("model"),
        "elapsed_ms": elapsed,
        "quiet_ms": None if last_event is None else max(0, now_ms - last_event),
        "last_event_ms": last_event,
        "tokens": {k: _int(v) for k, v in tokens.items()},
        "cost_usd": float(cost) if isinstance(cost, int | float) else 0.0,
        "steer_count": _int(s.get("steer_count")),
        "event_count": _int(s.get("event_count")),
        "view": s.get("view") if isinstance(s.get("view"), dict) else {},
        "waiting_until": s.get("waiting_until"),
        "pending_requests": len(store.pending_names()),
        "updated_at": s.get("updated_at"),
        "now_ms": now_ms,
        "notes": notes,
    }
    return row


def same_row(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    """True when ``a`` and ``b`` differ only in what the clock changes (the page
    ticks those itself, so no update is sent for them alone)."""
    if a is None:
        return False
    ticking = ("now_ms", "elapsed_ms", "quiet_ms")
    return all(a.get(k) == b.get(k) for k in ROW_KEYS if k not in ticking)
