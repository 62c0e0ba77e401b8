"""The request half of the runner's control plane: consuming, deciding and refusing.

:class:`PlaneRequests` is a base of :class:`~.plane.ControlPlane` holding the
methods that take requests from ``requests/`` and decide each exactly once
(``control/decisions.py``; ``stop`` in ``control/stopping.py``, ``wake`` in
``control/waking.py``), plus the usage-wait hooks that consume them while a
wait lasts. The plane's state it reads and writes is declared here and set up
by ``ControlPlane.__init__``; the plane's lock is held by every caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runner.position import Position
from .decisions import Decision, decide_amendment, open_entry, refusal, refuse
from .leftovers import RUN_ENDED
from .plane_files import PromptInfo
from .steering import NEXT_SESSION, Steers
from .stopping import StopOrder, decide_stop
from .store import ControlStore, PendingRequest
from .waking import decide_wake, show_wait

if TYPE_CHECKING:
    from ..providers.base import SessionHandle
    from ..render.text import Console
    from ..state.store import RuntimeStore


SNAPSHOT_HEARTBEAT_S = 1.0
"""Longest time, in seconds, the snapshot goes unwritten while a session or a wait lasts."""

WATCHED_LIST_S = 1.0
"""While the request watch is live, the least time (s) between two of the tick's own
listings of ``requests/``: what the watch reports is decided at once, and the tick
lists anyway this often, for a change the kernel does not report (a network mount
written from another host, a request hard-linked in)."""


class PlaneRequests:
    """Request consumption and the usage-wait hooks of :class:`~.plane.ControlPlane`."""

    # the plane's state (see ControlPlane.__init__)
    state_root: Path
    store: ControlStore
    run_id: str
    console: Console
    runtime: RuntimeStore | None
    prompts: dict[str, PromptInfo]
    position: Position
    known_clauses: tuple[str, ...] | None
    prompt_loader: Callable[[str], Any] | None
    poll_interval_s: float
    steers: Steers
    snapshot: dict[str, Any]
    stop_order: StopOrder | None
    wait: dict[str, Any] | None
    woken: bool
    _clock: Callable[[], float]
    _lock: threading.RLock
    _next_poll: float
    _next_due: float
    _notified: int
    _listed: tuple[float, int]
    _last_snapshot: float
    _dirty: bool
    _handle: SessionHandle | None
    _live: bool
    _between: tuple[str, str | None] | None
    _stage_since_boundary: tuple[str, str] | None

    if TYPE_CHECKING:

        def _guard(self, what: str, action: Callable[[], Any]) -> None: ...

        def _flush(self, now: float, *, force: bool = False) -> None: ...

    # -- usage waits (control/waking.py) ------------------------------------------------

    def waiting(self, prompt_id: str, wait: Mapping[str, Any] | None) -> None:
        """A usage wait of ``prompt_id`` begins (``wait``: what it waits for) or ends
        (``None``): shown in the snapshot (``wait``, ``waiting_until``) at once."""
        with self._lock:
            self.wait, self.woken = (dict(wait) if wait else None), False
            show_wait(self.snapshot, wait)
            self._guard("events", lambda: self._flush(self._clock(), force=True))

    def poll_wake(self, prompt_id: str) -> bool:
        """During a wait (runner thread): consume requests, keep the snapshot fresh;
        ``True`` once a ``wake`` was applied."""
        with self._lock:
            now = self._clock()
            self._guard("requests", lambda: self._consume(now))
            if now - self._last_snapshot >= SNAPSHOT_HEARTBEAT_S:
                self._guard("events", lambda: self._flush(now, force=True))
            return self.woken

    # -- requests ---------------------------------------------------------------------------

    def _consume(self, now: float) -> None:
        self._next_poll = now + self.poll_interval_s
        self._listed = (now, self._notified)  # what the tick's next listing is measured from
        self._next_due = 0.0  # on_event compares its clock with min(next flush, next poll)
        if not self.store.pending_names():
            return
        for item in self.store.pending_requests():
            try:
                entry, effect = self._decide(item)
            except Exception as exc:  # one request's fault must not stall every later one
                entry, effect = self._undecidable(item, exc), None
            self.store.append_log(entry)  # the commit point of the decision
            if effect is not None:
                effect()
            self.store.complete_request(item.name, entry)

    def _undecidable(self, item: PendingRequest, exc: Exception) -> dict[str, Any]:
        """The refusal of a request whose decision raised: it gets its receipt
        and the plane goes on (left pending, it would raise at every tick and
        hold back each request after it for the rest of the run)."""
        payload = item.payload if isinstance(item.payload, dict) else {}
        try:
            entry = open_entry(item.name, payload, run_id=self.run_id, prompt_id=None, attempt=None)
        except Exception:  # the payload itself is what breaks: log the file name alone
            entry = open_entry(item.name, {}, run_id=self.run_id, prompt_id=None, attempt=None)
        reason = (
            f"could not be decided ({type(exc).__name__}: {exc}); this is a bug, please report it"
        )
        return refuse(entry, reason[:500])

    def _refuse_left(self) -> None:
        """At the run's end (after ``runs/current.json`` says so): every request
        still pending is refused and logged (its one receipt), since no session
        of this run can take it any more; one that lands later is the sender's
        to decide (``control/leftovers.py``)."""
        for item in self.store.pending_requests():
            payload = item.payload if isinstance(item.payload, dict) else {}
            entry = open_entry(item.name, payload, run_id=self.run_id, prompt_id=None, attempt=None)
            refuse(entry, RUN_ENDED)
            self.store.append_log(entry)
            self.store.complete_request(item.name, entry)

    def _decide(self, item: PendingRequest) -> Decision:
        payload = item.payload if isinstance(item.payload, dict) else {}
        live = self._live
        entry = open_entry(
            item.name,
            payload,
            run_id=self.run_id,
            prompt_id=self.position.prompt_id if live else None,
            attempt=self.position.attempt if live else None,
        )
        reason = refusal(item, payload, run_id=self.run_id, known_clauses=self.known_clauses)
        if reason is not None:
            return refuse(entry, reason), None
        command, params = entry["command"], entry["params"]
        if command == "set_view":
            return self._decide_view(entry, params)
        if command == "steer":
            return self._decide_steer(entry, params)
        if command == "stop":
            return decide_stop(entry, params, self)
        if command == "wake":
            return decide_wake(entry, params, self)
        return decide_amendment(
            entry,
            str(command),
            params,
            state_root=self.state_root,
            run_id=self.run_id,
            runtime=self.runtime,
            known_clauses=self.known_clauses,
            prompt_loader=self.prompt_loader,
        )

    def _decide_view(self, entry: dict[str, Any], params: Mapping[str, Any]) -> Decision:
        def apply() -> None:
            view = dict(self.snapshot["view"])
            view.update(params)
            self.snapshot["view"] = view
            self.console.view = {**self.console.view, **params}
            self._dirty = True

        entry["outcome"] = "applied"
        entry["reason"] = None
        return entry, apply

    def _decide_steer(self, entry: dict[str, Any], params: Mapping[str, Any]) -> Decision:
        order = self.stop_order
        if order is not None and not order.after_prompt:
            # the session it would reach is being ended and none follows in this run:
            # "applied" would be a receipt for a steer no agent ever reads
            reason = (
                f"the run is stopping (stop request {order.request} was applied): no further "
                "session of this run will read a steer; send it again once the run is resumed"
            )
            return refuse(entry, reason), None
        prompt_id = self.position.prompt_id
        between, stage = self._between, self._stage_since_boundary
        committed = between is not None and stage == (between[0], "committing")
        steer = self.steers.decide(
            entry,
            params,
            live_prompt=prompt_id if self._live and isinstance(prompt_id, str) else None,
            between=between,
            attempt=self.position.attempt,
            max_steers=lambda pid: info.max_steers if (info := self.prompts.get(pid)) else 3,
            stage="committed" if committed else "verified",
        )
        if steer is None:
            return entry, None

        def apply() -> None:
            self.snapshot["steer_count"] = self.steers.add(steer)
            self._dirty = True
            if steer.delivery == NEXT_SESSION:
                mode = self._between[1] if self._between else None
                self.console.say(
                    f"[{steer.prompt_id}] steer for the next session ({mode}): {steer.text.strip()}"
                )
                return
            self.console.say(f"[{steer.prompt_id}] interrupting to steer: {steer.text.strip()}")
            if self._handle is not None:
                self._handle.interrupt()

        return entry, apply
