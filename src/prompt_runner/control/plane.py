"""The runner's half of the control plane (SPEC 5): snapshot, events, requests.

One :class:`ControlPlane` lives for one run invocation that keeps state on disk
(an in-memory API run has none). The attempt loop calls it through the
``ControlHooks`` protocol of ``runner/context.py``:

* ``on_event(prompt_id, event)`` -- on the provider's thread, for every
  canonical event. The event is folded into the snapshot and buffered;
  the buffer is written to ``control/events.jsonl`` in one append (and the
  snapshot replaced) at most every ``flush_interval_s`` -- group commit, no
  fsync per event. Requests are looked at here too (an event boundary: never
  mid-event), at most every ``poll_interval_s``.
* ``tick(prompt_id, handle)`` -- on the runner's thread about every 100 ms
  while a session runs, so a request never waits for the model's next token.
* ``boundary(prompt_id, next_mode=...)`` -- after each attempt, saying whether
  another session of the prompt follows (its mode) or none does (``None``).

The snapshot is replaced by the store's kept writer thread
(``ControlStore.write_snapshot(deferred=True)``), so the rename's kernel work
overlaps what the runner does next (judging, git) instead of holding it. The
rule: every snapshot is encoded when it is taken and the newest one handed
over is the one written; :meth:`start` writes the first one itself (as the
run opens), :meth:`finish` waits for the last one (it is on disk before
``finish`` returns, so before the run lock is released); a reader in this
process (``ControlStore.read_snapshot``, ``control.runs.snapshot``) waits for
the newest one; another process sees it as before, a view of the moment that
may lag the runner by the write in progress (it already lagged the events by
up to ``flush_interval_s``).

Pickup is event driven, with polling underneath. A
:class:`~.request_watch.RequestWatch` thread is told by the kernel (inotify,
through ``inotify_simple`` on Linux, ``watchfiles`` elsewhere) when a request
file lands in ``requests/``, and while
a session runs the plane decides it at once (:meth:`ControlPlane._requests_changed`),
exactly as the next tick would have -- so a request reaches a silent
provider's run in milliseconds. The ticks and event boundaries keep listing
``requests/`` as before (``os.listdir`` of an almost always empty directory
costs microseconds); they are the fallback where notification is unavailable
or turned off (``PROMPT_RUNNER_CONTROL_NOTIFY=0``), and the only path between
sessions, where requests wait for the boundary as they always did. The
heavier :meth:`ControlStore.pending_requests` (which also reads the log) only
runs when the listing is non-empty.

Requests are decided exactly once (``control/decisions.py``, dispatched by
``control/plane_requests.py``, which also holds the usage-wait hooks); steers are
kept, delivered and recorded by ``control/steering.py``; the snapshot and the
event lines are shaped by ``control/plane_files.py``. Nothing arriving
through the transport is fatal, and an I/O error of the plane itself is
reported once on the console and the run carries on.

Every event in ``events.jsonl`` carries ``prompt_id`` and ``run_id``; the
stream of an invocation ends with a ``run_finished`` record
(``{"kind": "run_finished", "run_id", "status", "at_ms", "prompt_id": null}``,
``status`` as the run result says it) written by :meth:`finish`.

The plane's state is guarded by one lock: events arrive on provider threads,
ticks on the runner's thread, and the store is not thread safe. One thing is
done without it: :meth:`ControlPlane.on_event` appends the line of an event the
snapshot does not fold (text, thinking, tool results: most of a stream) to the
buffer lock-free. ``list.append`` is atomic, and the buffer is drained from its
front under the lock (:meth:`ControlPlane._flush`), never replaced, so a line
appended during a flush is written by the next one; the snapshot's
``event_count`` counts lines as they are flushed.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runner.position import Position
from ..state._clock import iso_now
from ..state.records import RunStatus
from . import plane_files
from .plane_files import (
    _REFUSED,
    FOLDED,
    PromptInfo,
    _dumps,
    enter_prompt,
    fold,
    ids_suffix,
    with_ids,
)
from .plane_requests import SNAPSHOT_HEARTBEAT_S, WATCHED_LIST_S, PlaneRequests
from .request_watch import RequestWatch, notify_enabled
from .steering import DELIVERY, NEXT_SESSION, Steer, Steers
from .stopping import StopOrder
from .store import ControlStore
from .waking import show_wait

STAGE_SHOWN_AFTER_S = 0.25
"""How long a stage outside a session (verifying, committing) lasts before the
snapshot shows it (:meth:`ControlPlane.enter_stage`)."""

if TYPE_CHECKING:
    from ..providers.base import SessionHandle
    from ..providers.events import Event
    from ..render.text import Console
    from ..state.store import RuntimeStore

__all__ = ["DELIVERY", "NEXT_SESSION", "ControlPlane", "PromptInfo", "Steer"]

_NO_IDS: tuple[str | None, str] = (None, "")


class ControlPlane(PlaneRequests):
    """The control plane of one run (see the module docstring).

    Args:
        state_root: the packet's ``.prompt_runner/``.
        run_id: the run consuming requests.
        packet: the packet's name (snapshot ``packet``).
        console: the run's console; ``set_view`` replaces ``console.view``.
        runtime: the run's runtime store (steer and amendment flags on prompts).
        prompts: prompt id -> :class:`PromptInfo`.
        position: where the attempt loop is, kept live by it
            (``RunContext.position``).
        known_clauses: verifier clause names (amend/relax validation).
        prompt_loader: prompt id -> loaded ``Prompt`` or ``None`` (amend/relax requests).
        flush_interval_s: longest time, in seconds, an event stays buffered.
        poll_interval_s: least time, in seconds, between request look-ups at
            event boundaries (a busy stream never lists the directory per event).
        notify: watch ``requests/`` for new files (``None``: unless
            ``PROMPT_RUNNER_CONTROL_NOTIFY=0``); ``False`` polls only.
    """

    def __init__(
        self,
        state_root: Path,
        *,
        run_id: str,
        packet: str,
        console: Console,
        runtime: RuntimeStore | None = None,
        prompts: Mapping[str, PromptInfo] | None = None,
        position: Position | None = None,
        known_clauses: tuple[str, ...] | None = None,
        prompt_loader: Callable[[str], Any] | None = None,
        flush_interval_s: float = 0.1,
        poll_interval_s: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
        notify: bool | None = None,
    ) -> None:
        self.state_root = Path(state_root)
        self.store = ControlStore(self.state_root)
        self.run_id = run_id
        self.console = console
        self.runtime = runtime
        self.prompts = dict(prompts or {})
        self.position = position if position is not None else Position()
        self.known_clauses = known_clauses
        self.prompt_loader = prompt_loader
        self.flush_interval_s = flush_interval_s
        self.poll_interval_s = poll_interval_s
        self.steers = Steers(self.state_root, run_id, runtime)
        self._clock = clock
        self._lock = threading.RLock()
        self._started = clock()
        self._buffer: list[str] = []  # encoded event lines
        self._events = 0
        self._next_flush = 0.0
        self._next_poll = 0.0
        self._next_due = 0.0  # <= min(_next_flush, _next_poll); 0 after either is set: recompute
        self._notified = 0  # changes the request watch reported
        self._listed: tuple[float, int] = (0.0, -1)  # the last listing: when, _notified then
        self._ids: tuple[str | None, str] = _NO_IDS
        """The prompt id of on_event's last line and its ids_suffix. While it is set,
        the session is live, at no boundary, and the snapshot's prompt is that
        prompt: whatever changes one of these resets it to _NO_IDS."""
        self._at_ms: tuple[object, str] = (None, "")  # an event's at_ms, its line's text
        self._last_snapshot = 0.0
        self._dirty = True
        self._handle: SessionHandle | None = None
        self._live = False
        self._between: tuple[str, str | None] | None = None  # (prompt, next mode) at a boundary
        self._stage_since_boundary: tuple[str, str] | None = None  # (prompt, stage) entered since
        self._warned: set[str] = set()
        self._notify = notify_enabled() if notify is None else notify
        self.request_watch: RequestWatch | None = None
        """The notification path, once :meth:`start` started it (``None``: polling only)."""
        self.stop_order: StopOrder | None = None  # an accepted stop request (runner/stopping.py)
        self.wait: dict[str, Any] | None = None  # a usage wait in progress (control/waking.py)
        self.woken = False  # a wake request was applied to it
        self.snapshot: dict[str, Any] = plane_files.new_snapshot(run_id, packet, console.view)
        show_wait(self.snapshot, None)
        self._stage_shown = threading.Condition(self._lock)
        self._stage_due: float | None = None  # monotonic: when the current stage is written
        self._stage_idle = True  # the stage thread waits with no due time (only then woken)
        self._stage_written = False  # the snapshot on disk shows a stage
        self._stage_thread: threading.Thread | None = None
        self._finished = False

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        """Create the layout, make ``events.jsonl`` this run's stream, write the snapshot.

        A new run archives the previous stream; a resumed run appends to it, and
        the snapshot's ``event_count`` starts from the events it holds (those of
        the run's earlier invocations; ``elapsed_ms`` is this invocation's).

        Raises:
            OSError / ValueError: the control directory cannot be prepared
                (the caller runs without a plane).
        """
        self.store.init()
        self.store.prepare_event_stream(self.run_id)
        # a resumed run appends to its stream: its event_count goes on from there
        self._events = self.store.count_stream_events()
        with self._lock:
            self._guard("steer", self._carry_over)
            self._write_snapshot(self._clock(), deferred=False)
        if self._notify and self.request_watch is None:
            self.request_watch = RequestWatch(self.store.requests_dir, self._requests_changed)
            self.request_watch.start()

    def finish(self, status: str) -> None:
        """Flush events, record how the run ended (``completed``/``failed``/...) and
        close the store's files (they reopen if the plane is used again).

        ``status`` is the run result's status, shown as
        :data:`.plane_files.SHOWN_AT_FINISH` says. Never raises.
        """
        watch, self.request_watch = self.request_watch, None
        if watch is not None:
            watch.stop()  # outside the lock: its callback may be waiting for it
        with self._lock:
            self._finished = True
            self._stage_due = None
            self._stage_shown.notify_all()
            self._live = False
            self._ids = _NO_IDS
            self.snapshot["status"] = plane_files.SHOWN_AT_FINISH.get(status, RunStatus.FAILED)
            closing = plane_files.run_finished_line(self.run_id, status)
            self._guard("finish", lambda: self._flush(self._clock(), force=True, closing=closing))
            self._guard("finish", self.store.close)  # fsyncs the events first

    def _carry_over(self) -> None:
        """A resumed run queues the steers its earlier runner accepted and no session
        read (``Steers.carry_over``), saying so on the console."""
        for steer in self.steers.carry_over(self.store.read_log()):
            self.console.say(
                f"[{steer.prompt_id}] steer accepted before the run was interrupted, for "
                f"the prompt's next session: {steer.text.strip()}"
            )

    def refuse_left(self) -> None:
        """Refuse every request still pending (``RUN_ENDED``, logged, receipted), then
        close the store again; a no-op before :meth:`finish`. Never raises.

        The runner calls it after ``runs/current.json`` records the run's end and
        before it releases the run lock (``runner/finishing.py``): a request
        written before the end was visible is in this sweep, and the sender of one
        written after it sees the run over and decides it itself
        (``control/leftovers.py``), so each gets its one receipt.
        """
        with self._lock:
            if not self._finished:
                return
            self._guard("requests", self._refuse_left)
            self._guard("finish", self.store.close)

    # -- ControlHooks ------------------------------------------------------------------

    def on_event(self, prompt_id: str, event: Event, encoded: str | None = None) -> None:
        """Fold ``event`` into the snapshot, buffer it, maybe flush and look for requests
        (``encoded``: its shared JSON encoding, or ``None`` to encode it here).

        :meth:`on_events` for one event, written out: the simulated provider and
        the API callbacks deliver every event this way. After a prompt's first
        event (:meth:`_first_event`) an event that changes nothing but the stream
        (a kind not in :data:`~.plane_files.FOLDED`: text, thinking, tool
        results...) takes no lock: its line is appended to the buffer, which
        ``list.append`` does atomically and which :meth:`_flush` drains from the
        front without ever replacing it, so no line is lost to a flush on
        another thread; the lock is taken only when a flush or a request
        look-up is due. The line is the shared encoding with the prompt's id
        tail kept from that first event, or the payload encoded by orjson between
        the kind and ``at_ms`` (its text kept while the millisecond lasts) and
        that tail -- the same line, byte for byte, as
        :func:`.plane_files.with_ids` writes.
        """
        ids = self._ids
        if ids[0] != prompt_id:  # the first event since _ids was reset
            with self._lock:
                self._first_event(prompt_id, event, encoded)
                now = self._clock()
                if now >= self._next_due:
                    self._due(now)
            return
        kind = event.kind
        data = event.data
        if encoded is not None:
            if encoded[-1:] == "}" and encoded != "{}":
                line = encoded[:-1] + ids[1]  # with_ids of a shared encoding
            else:
                line = with_ids(encoded, event, prompt_id, self.run_id)
        elif type(data) is dict and "kind" not in data and "at_ms" not in data:
            # plane_files.event_line, inlined (the hottest lines of a one-event stream)
            at, at_ms = self._at_ms, event.at_ms
            if at[0] != at_ms or type(at_ms) is not int:
                at = (at_ms, f'","at_ms":{at_ms}')
                if type(at_ms) is int:  # only an int's text is kept: 1.0 == 1
                    self._at_ms = at  # one tuple: a racing reader sees this one or the last
            try:
                # no options: what needs them (a key that is not a string, a
                # value JSON has no type for) raises, and with_ids encodes it
                body = _dumps(data)
            except _REFUSED:
                line = with_ids(None, event, prompt_id, self.run_id)
            else:
                if len(body) > 2:
                    line = f'{{"kind":"{kind}{at[1]},{body[1:-1].decode()}{ids[1]}'
                else:
                    line = f'{{"kind":"{kind}{at[1]}{ids[1]}'
        else:
            line = with_ids(None, event, prompt_id, self.run_id)
        if kind in FOLDED:
            with self._lock:
                if self._ids[0] != prompt_id:  # reset since it was read: as a first event
                    self._first_event(prompt_id, event, encoded)
                else:
                    fold(self.snapshot, kind, data)
                    self._buffer.append(line)
        else:
            self._buffer.append(line)
        now = self._clock()
        if now >= self._next_due:
            with self._lock:
                self._due(now)

    def _first_event(self, prompt_id: str, event: Event, encoded: str | None) -> None:
        """:meth:`on_event` for the first event since ``_ids`` was reset (the lock is
        held): the session is live again, at no boundary, on ``prompt_id``."""
        self._live = True
        self._between = None
        if prompt_id != self.snapshot["prompt_id"]:
            enter_prompt(self.snapshot, prompt_id, self.prompts.get(prompt_id))
        if event.kind in FOLDED:
            fold(self.snapshot, event.kind, event.data)
        self._buffer.append(with_ids(encoded, event, prompt_id, self.run_id))
        self._ids = (prompt_id, ids_suffix(prompt_id, self.run_id))

    def _due(self, now: float) -> None:
        """Flush and look for requests when their time has come (the lock is held)."""
        if now >= self._next_flush:
            self._guard("events", lambda: self._flush(now))
        if now >= self._next_poll:
            self._guard("requests", lambda: self._consume(now))
        self._next_due = min(self._next_flush, self._next_poll)

    def on_events(
        self, prompt_id: str, events: Sequence[Event], encoded: Sequence[str | None]
    ) -> None:
        """Fold several events into the snapshot and buffer them (one lock, one
        flush check); ``encoded[i]`` is ``events[i]``'s shared encoding or ``None``.

        The hot path of a busy stream: a few dict operations per event; the
        snapshot's derived fields are filled in when it is written.
        """
        with self._lock:
            self._live = True
            self._between = None
            if prompt_id != self.snapshot["prompt_id"]:
                enter_prompt(self.snapshot, prompt_id, self.prompts.get(prompt_id))
                self._ids = _NO_IDS
            buffer = self._buffer
            snap = self.snapshot
            run_id = self.run_id
            suffix = ids_suffix(prompt_id, run_id)
            for event, body in zip(events, encoded, strict=True):
                kind = event.kind
                if kind in FOLDED:
                    fold(snap, kind, event.data)
                if body is not None and body.endswith("}") and body != "{}":
                    buffer.append(body[:-1] + suffix)  # with_ids of a shared encoding
                else:
                    buffer.append(with_ids(body, event, prompt_id, run_id))
            now = self._clock()
            if now >= self._next_due:
                self._due(now)

    def tick(self, prompt_id: str, handle: SessionHandle) -> None:
        """While the provider is silent: look for requests, keep the snapshot fresh.

        The first tick of a session (as it starts) only makes the session known
        and looks for requests; the snapshot waits for the next tick or flush, so
        a session shorter than a tick costs no extra write. While the request
        watch is live, a later tick lists ``requests/`` only when the watch
        reported a change that was not decided then, or :data:`WATCHED_LIST_S`
        after the last listing (what the watch reports is decided as it arrives).
        """
        with self._lock:
            self._live = True
            self._between = None
            first = handle is not self._handle
            self._handle = handle
            if prompt_id != self.snapshot["prompt_id"]:
                enter_prompt(self.snapshot, prompt_id, self.prompts.get(prompt_id))
                self._ids = _NO_IDS
            now = self._clock()
            watch = self.request_watch
            listed_at, notified = self._listed
            if (
                first
                or watch is None
                or not watch.watching
                or notified != self._notified
                or now - listed_at >= WATCHED_LIST_S
            ):
                self._guard("requests", lambda: self._consume(now))
            if self.steers.live:
                self._guard("steer", handle.interrupt)
            if first:
                return
            if self._buffer or now - self._last_snapshot >= SNAPSHOT_HEARTBEAT_S:
                self._guard("events", lambda: self._flush(now, force=True))

    def _requests_changed(self) -> None:
        """The request watch saw ``requests/`` change (its thread): while a session
        runs, decide what arrived now, as the next :meth:`tick` would.

        Outside a session (before its first tick, while the workspace is judged,
        between prompts) nothing happens here: the boundary or the next tick
        decides, as with polling alone, so what a request means never depends on
        how it was noticed.
        """
        with self._lock:
            self._notified += 1  # undecided here, the next tick lists requests/
            handle = self._handle
            if not self._live or handle is None or self._session_over(handle):
                return
            now = self._clock()
            self._guard("requests", lambda: self._consume(now))
            if self.steers.live:
                self._guard("steer", handle.interrupt)
            if self._dirty:
                self._guard("events", lambda: self._flush(now, force=True))

    def _session_over(self, handle: SessionHandle) -> bool:
        try:
            return handle.wait(0) is not None
        except Exception:
            return True

    def settle_requests(self, prompt_id: str | None = None) -> None:
        """After prompt ``prompt_id`` ended (runner thread): decide what is pending
        as its last boundary would have, when a ``stop`` arrived since that
        boundary -- while the prompt was judged or committed, when no session
        ticks -- so a ``stop --after-prompt`` sent during a slow commit hook ends
        the run before the next prompt; or when a ``steer`` did and that boundary
        was this prompt's last (no further session of it follows): the steer is
        refused as the prompt's own, naming the stage it was in (``committed``),
        never delivered to the next prompt's session. A prompt this invocation
        ran no session of (completed before it, or by pre-flight verification)
        has no such boundary: a steer waits for the next prompt's session as
        before. Never raises."""
        with self._lock:
            now = self._clock()
            ended = prompt_id is not None and self._between == (prompt_id, None)
            commands = ("stop", "steer") if ended else ("stop",)
            self._guard("requests", lambda: self._consume(now) if self._pending(commands) else None)

    def _pending(self, commands: tuple[str, ...]) -> bool:
        """Whether a request of one of ``commands`` is pending."""
        if not self.store.pending_names():
            return False
        return any(
            isinstance(item.payload, dict) and item.payload.get("command") in commands
            for item in self.store.pending_requests()
        )

    def boundary(self, prompt_id: str | None, *, next_mode: str | None = None) -> None:
        """After an attempt: no session is live; consume requests, flush, flag the prompt.

        Args:
            next_mode: the mode of the prompt's next session (``repair``,
                ``retry``...), or ``None`` when none follows; a steer read now
                is queued for that session, or refused saying none follows.
        """
        with self._lock:
            self._live = False
            self._ids = _NO_IDS
            self._handle = None
            self.steers.live.clear()  # undeliverable now: the session has ended
            self._between = (prompt_id, next_mode) if prompt_id is not None else None
            self._stage_since_boundary = None
            now = self._clock()
            self._guard("requests", lambda: self._consume(now))
            self._guard("events", lambda: self._flush(now, force=True))
            steers = self.steers
            if prompt_id is not None and prompt_id not in steers.flagged:
                steers.flagged.add(prompt_id)
                if prompt_id not in steers.counts:
                    self._guard("state", lambda: steers.mark_unsteered(prompt_id))

    # -- stages --------------------------------------------------------------------------

    def enter_stage(self, prompt_id: str, name: str) -> dict[str, Any] | None:
        """The runner begins a stage of ``prompt_id`` outside its sessions
        (``verifying``: its contract is judged, its commands run; ``committing``:
        its commit, the repos' commit hooks, the push after it): the snapshot
        shows ``stage`` ``{"name", "prompt_id", "since"}`` (``since``: ISO 8601
        UTC, when it began) once the stage has lasted :data:`STAGE_SHOWN_AFTER_S`
        (written then, once, by a daemon thread; a stage's length is read from
        ``since``, not from rewrites while it lasts). A shorter stage -- most
        verifications and commits -- is never written: two snapshot writes a
        prompt would cost more than the whole stage.

        Returns:
            The stage it replaces (``None``: none), for :meth:`leave_stage`.
            Never raises (a write error is reported once).
        """
        with self._lock:
            snap = self.snapshot
            previous: dict[str, Any] | None = snap.get("stage")
            if prompt_id != snap["prompt_id"]:
                enter_prompt(snap, prompt_id, self.prompts.get(prompt_id))
                self._ids = _NO_IDS
            snap["stage"] = {"name": name, "prompt_id": prompt_id, "since": iso_now(millis=True)}
            self._stage_since_boundary = (prompt_id, name)
            self._dirty = True
            self._show_stage_after(STAGE_SHOWN_AFTER_S)
            return previous

    def leave_stage(self, previous: dict[str, Any] | None) -> None:
        """The stage :meth:`enter_stage` began is over: the snapshot shows
        ``previous`` again (the stage it interrupted, or ``None``). Written now
        when the snapshot on disk shows a stage (one that outlasted
        :data:`STAGE_SHOWN_AFTER_S`); an interrupted stage still going is shown
        again once it has lasted that long. Never raises."""
        with self._lock:
            self.snapshot["stage"] = previous
            self._dirty = True
            self._stage_due = None
            if self._stage_written:
                self._guard("events", lambda: self._flush(self._clock(), force=True))
            elif previous is not None:
                self._show_stage_after(STAGE_SHOWN_AFTER_S)

    def _show_stage_after(self, delay_s: float) -> None:
        """Have the stage thread write the snapshot in ``delay_s`` s if a stage is
        still shown then (hold the lock)."""
        if self._finished:
            return
        self._stage_due = time.monotonic() + delay_s
        if self._stage_thread is None:
            self._stage_thread = threading.Thread(
                target=self._show_stages, name="prompt-runner-stage", daemon=True
            )
            self._stage_thread.start()
        if self._stage_idle:  # else it wakes at its earlier due time and sees this one
            self._stage_shown.notify()

    def _show_stages(self) -> None:
        with self._lock:
            while not self._finished:
                due = self._stage_due
                if due is None:
                    self._stage_idle = True
                    self._stage_shown.wait()
                    self._stage_idle = False
                    continue
                left = due - time.monotonic()
                if left > 0:
                    self._stage_shown.wait(left)
                    continue
                self._stage_due = None
                if self.snapshot.get("stage") is not None:
                    self._guard("events", lambda: self._flush(self._clock(), force=True))

    # -- steering ------------------------------------------------------------------------

    def start_prompt(self, prompt_id: str) -> None:
        """A new invocation of ``prompt_id`` begins (runner thread, before its first
        session): its steer budget (``max_steers``) starts again, as its retry and
        repair budgets do; its ``steer_count`` stays the run's total."""
        with self._lock:
            self.steers.start_invocation(prompt_id)

    def take_steer(self, prompt_id: str) -> Steer | None:
        """Pop the next accepted steer for ``prompt_id`` and record it (runner thread).

        Appends ``interventions/<prompt_id>.jsonl`` and sets ``steered``,
        ``steer_count`` and ``interventions_file`` on the prompt record. A
        write error is reported and the steer still delivered.

        Returns:
            The steer, or ``None`` when none is waiting.
        """
        with self._lock:
            steer = self.steers.pop_live(prompt_id)
            if steer is None:
                return None
            self._handle = None
            lane = self._lane(prompt_id)
            self._guard("interventions", lambda: self.steers.record(steer, lane))
            return steer

    def take_queued_steers(self, prompt_id: str, *, attempt: int | None = None) -> list[Steer]:
        """Pop the steers accepted for ``prompt_id``'s next session and record them
        (runner thread, as that session starts; see :meth:`take_steer`).

        Args:
            attempt: the attempt whose session gets them (the interventions record's).
        """
        with self._lock:
            steers = self.steers.pop_queued(prompt_id)
            lane = self._lane(prompt_id)
            for steer in steers:
                record = functools.partial(
                    self.steers.record, replace(steer, attempt=attempt), lane
                )
                self._guard("interventions", record)
            return steers

    def _lane(self, prompt_id: str) -> str | None:
        """The provider the prompt's session runs on, as the snapshot knows it."""
        info = self.prompts.get(prompt_id)
        lane: str | None = self.snapshot.get("provider") or (info.provider if info else None)
        return lane

    # -- snapshot and events --------------------------------------------------------------

    def _flush(self, now: float, *, force: bool = False, closing: str | None = None) -> None:
        """Write the buffered lines (and ``closing``, a line that is no event: the
        ``run_finished`` record) in one append, counting the events; replace the
        snapshot if anything changed or ``force`` (hold the lock).

        The buffer is drained from its front and never replaced: ``on_event``
        appends to it without the lock, and a line appended while this runs is
        either taken now or left for the next flush.
        """
        buffer = self._buffer
        taken = len(buffer)
        if taken or closing is not None:
            batch = buffer[:taken]
            del buffer[:taken]
            self._events += taken
            if closing is not None:
                batch.append(closing)
            self.store.append_event_lines(batch)
            self._dirty = True
        self._next_flush = now + self.flush_interval_s
        self._next_due = 0.0
        if self._dirty or force:
            self._write_snapshot(now)

    def _write_snapshot(self, now: float, *, deferred: bool = True) -> None:
        snap = self.snapshot
        snap["event_count"] = self._events
        if snap["prompt_id"] is not None:
            snap["attempt"] = self.position.attempt
            snap["mode"] = self.position.mode
            snap["steer_count"] = self.steers.counts.get(snap["prompt_id"], 0)
        snap["updated_at"] = iso_now(millis=True)
        snap["elapsed_ms"] = int((now - self._started) * 1000)
        self.store.write_snapshot(snap, deferred=deferred)
        self._last_snapshot = now
        self._dirty = False
        self._stage_written = snap.get("stage") is not None

    # -- errors ---------------------------------------------------------------------------

    def _guard(self, what: str, action: Callable[[], Any]) -> None:
        """Run ``action``; an error is reported once per kind and never propagates."""
        try:
            action()
        except Exception as exc:
            if what not in self._warned:
                self._warned.add(what)
                self.console.say(f"warning: control plane ({what}): {exc!r}; the run continues")
