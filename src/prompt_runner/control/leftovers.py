"""A request that lands as its run ends: the sender decides it (SPEC 5).

Every request gets exactly one outcome receipt. The runner refuses what is
still pending as its run ends (:data:`RUN_ENDED`), in
``ControlPlane.refuse_left``, called by ``runner/finishing.py`` only *after*
``runs/current.json`` says the run ended, and while the runner still holds the
run lock. A sender chose its request's run while ``runs/current.json`` said
that run was going; once the file is written it looks again
(:func:`settle_if_ended`):

* still going (or another run going): the runner's last sweep is still to
  come -- it lists ``requests/`` after it writes the end -- or the run going
  now decides it; the request is queued;
* ended: the sweep may have listed ``requests/`` before this file landed. The
  sender then takes the run lock itself (waiting, at most
  :data:`SETTLE_WAIT_S`, for the finishing runner to let it go) and, as the
  lock's holder, is the consumer: it refuses its own request with the same
  reason unless it was decided already (``ControlStore.pending_requests``
  acknowledges a request already logged or receipted and does not return
  it), so no request is decided twice and none is left.

One of the two always sees the request: the sender's look follows its rename,
and the runner's sweep follows its write of the end.

Standard library and the light ``control``/``state`` modules at import
(``control steer`` and ``view`` are on the CLI's hot path); what deciding
needs loads only when a request is left.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import StateError
from ..state.current_run import UNFINISHED_RUN
from .runs import current_run

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control steer`)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .store import ControlStore

RUN_ENDED = "the run ended before a session could take it"
"""Why a request still pending when the run finishes is refused."""

SETTLE_WAIT_S = 30.0
"""Longest time, in seconds, a sender whose request landed as the run ended waits
for the finishing runner to release the run lock (git's maintenance and the last
records come after the end is written); past it the request stays queued and
the next run of the packet refuses it."""

_POLL_S = 0.02


def going(doc: Mapping[str, Any] | None) -> str | None:
    """The run id of a ``runs/current.json`` document that says its run is still
    going (``running``, a repair's ``repairing``), else ``None``."""
    if doc is None or doc.get("status") not in UNFINISHED_RUN:
        return None
    run_id = doc.get("run_id")
    return run_id if isinstance(run_id, str) else None


def settle_if_ended(store: ControlStore, name: str, seen: str | None) -> dict[str, Any] | None:
    """After request ``name`` was written: its receipt when the run ``seen`` going as
    the request was built has ended since (see the module docstring), else ``None``
    (queued: a run still going decides it, or -- ``seen`` ``None`` -- it waits for
    the next run). Never raises: a fault here leaves the request queued.
    """
    if seen is None:
        return None
    root = store.state_root
    try:
        if going(current_run(root)) is not None:
            return None  # the runner's last sweep is still to come, or a new run takes it
        return _decide_left(store, name, seen)
    except (OSError, StateError, ValueError):
        return None


def _decide_left(store: ControlStore, name: str, run_id: str) -> dict[str, Any] | None:
    """Take the run lock and refuse request ``name`` as :data:`RUN_ENDED`, unless
    it was decided already; its receipt (``None``: the lock did not come, or a
    run going now holds it and decides the request)."""
    # lazy: only a request that landed as its run ended needs the lock and the
    # consumer's modules; control steer's start-up loads neither
    from ..errors import InfrastructureError, LockHeldError
    from ..state.layout import StateLayout
    from ..state.lock import RunLock

    root = store.state_root
    lock = RunLock(StateLayout(root).run_pid)
    deadline = time.monotonic() + SETTLE_WAIT_S
    while True:
        try:
            lock.acquire()
            break
        except LockHeldError:
            if going(current_run(root)) is not None:
                return None  # a run going now holds the lock: its plane decides it
            if time.monotonic() >= deadline:
                return None
            time.sleep(_POLL_S)
        except InfrastructureError:
            return None
    try:
        return _refuse_own(Path(root), name, run_id)
    finally:
        lock.release()


def _refuse_own(root: Path, name: str, run_id: str) -> dict[str, Any] | None:
    """As the run lock's holder: refuse ``name`` if it is still pending (log line,
    then receipt, the consumer's protocol of ``control/store.py``); its receipt."""
    from .decisions import open_entry, refuse  # lazy: see _decide_left
    from .store import ControlStore

    with ControlStore(root) as consumer:
        for item in consumer.pending_requests():  # acknowledges what was decided already
            if item.name != name:
                continue
            payload = item.payload if isinstance(item.payload, dict) else {}
            entry = open_entry(name, payload, run_id=run_id, prompt_id=None, attempt=None)
            refuse(entry, RUN_ENDED)
            consumer.append_log(entry)
            consumer.complete_request(name, entry)
        return consumer.read_outcome(name)
