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

Pickup is polling, not a file watcher, on purpose: the runner already wakes
every 100 ms to enforce time bounds, and ``os.listdir`` of an (almost always
empty) ``requests/`` costs microseconds, so a request is seen within one tick
(well under the 250 ms p99 target) with no extra thread, no inotify watch
limit to run out of and nothing to fall back from. The heavier
:meth:`ControlStore.pending_requests` (which also reads the log) only runs
when the listing is non-empty. ``watchfiles`` is used on the reading side
(``control events|log --follow``), where a client would otherwise sleep.

Exactly-once: each request is decided, logged (the commit point), then its
effect applied, then receipted -- so a request whose log line or receipt cannot
be written has no effect and stays pending (see ``control/store.py``).
Nothing arriving through the transport is fatal: bad requests are refused
with a reason, and an I/O error of the plane itself is reported once on the
console and the run carries on.

Steering: an accepted steer is queued and the live session interrupted
(``handle.interrupt()``); the attempt loop then calls :meth:`take_steer` and
resumes the same provider session with the steer as its next message. A steer
read at a boundary -- it arrived while the prompt's last session was being
verified -- goes to the prompt's next session when one follows (a repair, a
retry, a resume): the attempt loop takes it with :meth:`take_queued_steers`
and puts it into that session's prompt (delivery ``next_session``). When no
session follows, it is refused with that reason. A steer is not an attempt
and spends no retry or repair budget; its own budget is ``recovery.max_steers``
per prompt per run.

Every event in ``events.jsonl`` carries ``prompt_id`` and ``run_id``; the
stream of an invocation ends with a ``run_finished`` record
(``{"kind": "run_finished", "run_id", "status", "at_ms", "prompt_id": null}``,
``status`` as the run result says it) written by :meth:`finish`.

The plane's state is guarded by one lock: events arrive on provider threads,
ticks on the runner's thread, and the store is not thread safe.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..state._clock import iso_now
from ..state.records import RunStatus
from .requests import VIEW_SETTINGS, validate_request
from .store import ControlStore, PendingRequest

if TYPE_CHECKING:
    from ..providers.base import SessionHandle
    from ..providers.events import Event
    from ..render.text import Console
    from ..runner.context import RunContext
    from ..state.store import RuntimeStore

SHOWN_AT_FINISH: dict[str, RunStatus] = {
    RunStatus.COMPLETED: RunStatus.COMPLETED,
    RunStatus.NOTHING: RunStatus.COMPLETED,
    RunStatus.INTERRUPTED: RunStatus.UNKNOWN,
    RunStatus.DRY_RUN: RunStatus.UNKNOWN,
}
"""The snapshot's status for how the run ended; any other end (``failed``,
``halted``) is shown ``failed``."""
DELIVERY = "interrupt_and_resume"
NEXT_SESSION = "next_session"
_FOLDED = frozenset({"tool_use", "usage", "session_started"})
SNAPSHOT_HEARTBEAT_S = 1.0


@dataclass(frozen=True)
class Steer:
    """An accepted steer waiting to be delivered into the session.

    Attributes:
        text: what the operator said.
        author: who said it (free text) or ``None``.
        prompt_id, attempt: where it was accepted.
        at: ISO 8601 time it was accepted.
        request: the request file name it came from.
        delivery: ``interrupt_and_resume`` (into the live session) or
            ``next_session`` (into the prompt of the prompt's next session).
    """

    text: str
    author: str | None
    prompt_id: str
    attempt: int | None
    at: str
    request: str
    delivery: str = DELIVERY


@dataclass(frozen=True)
class PromptInfo:
    """What the snapshot shows about a prompt before its session says more."""

    name: str
    provider: str
    model: str | None
    max_steers: int
    file: Path | None = None


class ControlPlane:
    """The control plane of one run (see the module docstring).

    Args:
        state_root: the packet's ``.prompt_runner/``.
        run_id: the run consuming requests.
        packet: the packet's name (snapshot ``packet``).
        console: the run's console; ``set_view`` replaces ``console.view``.
        runtime: the run's runtime store (steer and amendment flags on prompts).
        prompts: prompt id -> :class:`PromptInfo`.
        state_view: the live ``{"prompt_id", "attempt", "mode"}`` the attempt
            loop keeps (``RunContext.state_view``).
        known_clauses: verifier clause names (amend/relax validation).
        prompt_loader: prompt id -> loaded ``Prompt`` or ``None`` (amend/relax requests).
        flush_interval_s: longest time, in seconds, an event stays buffered.
        poll_interval_s: least time, in seconds, between request look-ups at
            event boundaries (a busy stream never lists the directory per event).
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
        state_view: dict[str, Any] | None = None,
        known_clauses: tuple[str, ...] | None = None,
        prompt_loader: Callable[[str], Any] | None = None,
        flush_interval_s: float = 0.1,
        poll_interval_s: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.state_root = Path(state_root)
        self.store = ControlStore(self.state_root)
        self.run_id = run_id
        self.console = console
        self.runtime = runtime
        self.prompts = dict(prompts or {})
        self.state_view = state_view if state_view is not None else {}
        self.known_clauses = known_clauses
        self.prompt_loader = prompt_loader
        self.flush_interval_s = flush_interval_s
        self.poll_interval_s = poll_interval_s
        self._clock = clock
        self._lock = threading.RLock()
        self._started = clock()
        self._buffer: list[str] = []  # encoded event lines
        self._events = 0
        self._next_flush = 0.0
        self._next_poll = 0.0
        self._last_snapshot = 0.0
        self._dirty = True
        self._handle: SessionHandle | None = None
        self._live = False
        self._steers: list[Steer] = []
        self._queued: list[Steer] = []  # for the prompt's next session
        self._between: tuple[str, str | None] | None = None  # (prompt, next mode) at a boundary
        self._steer_counts: dict[str, int] = {}
        self._flagged: set[str] = set()
        self._warned: set[str] = set()
        view = {k: console.view[k] for k in VIEW_SETTINGS if k in console.view}
        self.snapshot: dict[str, Any] = {
            "run_id": run_id,
            "packet": packet,
            "status": RunStatus.RUNNING,
            "prompt_id": None,
            "prompt_name": None,
            "attempt": None,
            "mode": None,
            "provider": None,
            "model": None,
            "started_at": iso_now(millis=True),
            "updated_at": None,
            "elapsed_ms": 0,
            "tool_count": 0,
            "tokens": {"input": 0, "output": 0, "cached": 0},
            "cost_usd": 0.0,
            "event_count": 0,
            "steer_count": 0,
            "view": view,
        }

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        """Create the layout, make ``events.jsonl`` this run's stream, write the snapshot.

        A new run archives the previous stream; a resumed run appends to it.

        Raises:
            OSError / ValueError: the control directory cannot be prepared
                (the caller runs without a plane).
        """
        self.store.init()
        self.store.prepare_event_stream(self.run_id)
        with self._lock:
            self._write_snapshot(self._clock())

    def finish(self, status: str) -> None:
        """Flush events and record how the run ended (``completed``/``failed``/...).

        ``status`` is the run result's status, shown as :data:`SHOWN_AT_FINISH`
        says. Never raises.
        """
        shown = SHOWN_AT_FINISH.get(status, RunStatus.FAILED)
        with self._lock:
            self._live = False
            self.snapshot["status"] = shown
            self._buffer.append(
                _dumps_event(
                    {
                        "kind": "run_finished",
                        "run_id": self.run_id,
                        "status": status,
                        "at_ms": int(time.time() * 1000),
                        "prompt_id": None,
                    }
                )
            )
            self._guard("finish", lambda: self._flush(self._clock(), force=True))
            self._guard("finish", self.store.sync_events)

    # -- ControlHooks ------------------------------------------------------------------

    def on_event(self, prompt_id: str, event: Event, encoded: str | None = None) -> None:
        """Fold ``event`` into the snapshot, buffer it, maybe flush and look for requests
        (``encoded``: its shared JSON encoding, or ``None`` to encode it here)."""
        self.on_events(prompt_id, [event], [encoded])

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
                self._enter(prompt_id)
            self._events += len(events)
            buffer = self._buffer
            for event, body in zip(events, encoded, strict=True):
                kind = event.kind
                if kind in _FOLDED:
                    self._fold(kind, event.data)
                buffer.append(_with_ids(body, event, prompt_id, self.run_id))
            now = self._clock()
            if now >= self._next_flush:
                self._guard("events", lambda: self._flush(now))
            if now >= self._next_poll:
                self._guard("requests", lambda: self._consume(now))

    def tick(self, prompt_id: str, handle: SessionHandle) -> None:
        """While the provider is silent: look for requests, keep the snapshot fresh."""
        with self._lock:
            self._live = True
            self._between = None
            self._handle = handle
            self._enter(prompt_id)
            now = self._clock()
            self._guard("requests", lambda: self._consume(now))
            if self._steers:
                self._guard("steer", handle.interrupt)
            if self._buffer or now - self._last_snapshot >= SNAPSHOT_HEARTBEAT_S:
                self._guard("events", lambda: self._flush(now, force=True))

    def boundary(self, prompt_id: str | None, *, next_mode: str | None = None) -> None:
        """After an attempt: no session is live; consume requests, flush, flag the prompt.

        Args:
            next_mode: the mode of the prompt's next session (``repair``,
                ``retry``...), or ``None`` when none follows; a steer read now
                is queued for that session, or refused saying none follows.
        """
        with self._lock:
            self._live = False
            self._handle = None
            self._steers.clear()  # undeliverable now: the session has ended
            self._between = (prompt_id, next_mode) if prompt_id is not None else None
            now = self._clock()
            self._guard("requests", lambda: self._consume(now))
            self._guard("events", lambda: self._flush(now, force=True))
            if prompt_id is not None and prompt_id not in self._flagged:
                self._flagged.add(prompt_id)
                if prompt_id not in self._steer_counts:
                    self._guard("state", lambda: self._mark_unsteered(prompt_id))

    # -- steering ------------------------------------------------------------------------

    def take_steer(self, prompt_id: str) -> Steer | None:
        """Pop the next accepted steer for ``prompt_id`` and record it (runner thread).

        Appends ``interventions/<prompt_id>.jsonl`` and sets ``steered``,
        ``steer_count`` and ``interventions_file`` on the prompt record. A
        write error is reported and the steer still delivered.

        Returns:
            The steer, or ``None`` when none is waiting.
        """
        with self._lock:
            if not self._steers or self._steers[0].prompt_id != prompt_id:
                self._steers.clear()
                return None
            steer = self._steers.pop(0)
            self._handle = None
            info = self.prompts.get(prompt_id)
            lane = self.snapshot.get("provider") or (info.provider if info else None)
            self._guard("interventions", lambda: self._record_steer(steer, lane))
            return steer

    def take_queued_steers(self, prompt_id: str, *, attempt: int | None = None) -> list[Steer]:
        """Pop the steers accepted for ``prompt_id``'s next session and record them
        (runner thread, as that session starts; see :meth:`take_steer`).

        Args:
            attempt: the attempt whose session gets them (the interventions record's).
        """
        with self._lock:
            steers = [s for s in self._queued if s.prompt_id == prompt_id]
            self._queued.clear()
            info = self.prompts.get(prompt_id)
            lane = self.snapshot.get("provider") or (info.provider if info else None)
            for steer in steers:
                record = functools.partial(
                    self._record_steer, replace(steer, attempt=attempt), lane
                )
                self._guard("interventions", record)
            return steers

    def _record_steer(self, steer: Steer, lane: str | None) -> None:
        path = self.state_root / "interventions" / f"{steer.prompt_id}.jsonl"
        record = {
            "text": steer.text,
            "prompt": steer.prompt_id,
            "attempt": steer.attempt,
            "author": steer.author,
            "lane": lane,
            "delivery": steer.delivery,
            "at": steer.at,
            "run_id": self.run_id,
            "request": steer.request,
        }
        from .amendments import append_record_line

        append_record_line(path, record)
        if self.runtime is not None:
            self.runtime.update_prompt(
                steer.prompt_id,
                {
                    "steered": True,
                    "steer_count": self._steer_counts.get(steer.prompt_id, 0),
                    "interventions_file": str(path),
                },
            )

    def _mark_unsteered(self, prompt_id: str) -> None:
        if self.runtime is None:
            return
        record = self.runtime.load_prompt(prompt_id)
        if "steered" not in record:
            self.runtime.update_prompt(prompt_id, {"steered": False})

    # -- snapshot and events --------------------------------------------------------------

    def _enter(self, prompt_id: str) -> None:
        snap = self.snapshot
        if snap["prompt_id"] != prompt_id:
            info = self.prompts.get(prompt_id)
            snap["prompt_id"] = prompt_id
            snap["prompt_name"] = info.name if info else None
            snap["provider"] = info.provider if info else None
            snap["model"] = info.model if info else None

    def _fold(self, kind: str, data: Mapping[str, Any]) -> None:
        snap = self.snapshot
        if kind == "tool_use":
            snap["tool_count"] += 1
        elif kind == "usage":
            tokens = snap["tokens"]
            tokens["input"] += _int(data.get("input_tokens"))
            tokens["output"] += _int(data.get("output_tokens"))
            tokens["cached"] += _int(data.get("cached_tokens"))
            cost = data.get("cost_usd")
            if isinstance(cost, int | float):
                snap["cost_usd"] = round(snap["cost_usd"] + cost, 6)
        elif kind == "session_started":
            if data.get("provider"):
                snap["provider"] = data["provider"]
            if data.get("model"):
                snap["model"] = data["model"]

    def _flush(self, now: float, *, force: bool = False) -> None:
        if self._buffer:
            batch, self._buffer = self._buffer, []
            self.store.append_event_lines(batch)
            self._dirty = True
        self._next_flush = now + self.flush_interval_s
        if self._dirty or force:
            self._write_snapshot(now)

    def _write_snapshot(self, now: float) -> None:
        snap = self.snapshot
        snap["event_count"] = self._events
        if snap["prompt_id"] is not None:
            snap["attempt"] = self.state_view.get("attempt")
            snap["mode"] = self.state_view.get("mode")
            snap["steer_count"] = self._steer_counts.get(snap["prompt_id"], 0)
        snap["updated_at"] = iso_now(millis=True)
        snap["elapsed_ms"] = int((now - self._started) * 1000)
        self.store.write_snapshot(snap)
        self._last_snapshot = now
        self._dirty = False

    # -- requests ---------------------------------------------------------------------------

    def _consume(self, now: float) -> None:
        self._next_poll = now + self.poll_interval_s
        if not self.store.pending_names():
            return
        for item in self.store.pending_requests():
            entry, effect = self._decide(item)
            self.store.append_log(entry)  # the commit point of the decision
            if effect is not None:
                effect()
            self.store.complete_request(item.name, entry)

    def _decide(self, item: PendingRequest) -> tuple[dict[str, Any], Callable[[], None] | None]:
        payload = item.payload if isinstance(item.payload, dict) else {}
        command = payload.get("command")
        raw_params = payload.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        author = payload.get("author")
        entry: dict[str, Any] = {
            "schema_version": 1,
            "request": item.name,
            "id": payload.get("id"),
            "command": command if isinstance(command, str) else None,
            "params": params,
            "author": author if isinstance(author, str) else None,
            "run_id": self.run_id,
            "requested_run_id": payload.get("run_id"),
            "prompt_id": self.state_view.get("prompt_id") if self._live else None,
            "attempt": self.state_view.get("attempt") if self._live else None,
            "requested_at": payload.get("requested_at"),
            "at": iso_now(millis=True),
        }
        if not item.ok:
            detail = f": {item.detail}" if item.detail else ""
            return _refuse(entry, f"{item.error}{detail}"), None
        ok, reason = validate_request(
            payload, current_run_id=self.run_id, known_clauses=self.known_clauses
        )
        if not ok:
            return _refuse(entry, reason), None
        if command == "set_view":
            return self._decide_view(entry, params)
        if command == "steer":
            return self._decide_steer(entry, params)
        return self._decide_amendment(entry, str(command), params)

    def _decide_view(
        self, entry: dict[str, Any], params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Callable[[], None]]:
        def apply() -> None:
            view = dict(self.snapshot["view"])
            view.update(params)
            self.snapshot["view"] = view
            self.console.view = {**self.console.view, **params}
            self._dirty = True

        entry["outcome"] = "applied"
        entry["reason"] = None
        return entry, apply

    def _decide_steer(
        self, entry: dict[str, Any], params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Callable[[], None] | None]:
        prompt_id = self.state_view.get("prompt_id")
        delivery = DELIVERY
        if not self._live or not isinstance(prompt_id, str):
            between = self._between
            if between is None or between[0] is None:
                return _refuse(entry, "no prompt is running"), None
            prompt_id, next_mode = between
            if next_mode is None:
                return _refuse(
                    entry,
                    f"prompt {prompt_id}'s last session had ended (it was being verified) and "
                    "no further session of it follows: there is nothing left to steer",
                ), None
            delivery = NEXT_SESSION
            entry["prompt_id"] = prompt_id
            entry["attempt"] = self.state_view.get("attempt")
        assert isinstance(prompt_id, str)
        info = self.prompts.get(prompt_id)
        limit = info.max_steers if info else 3
        used = self._used_steers(prompt_id)
        if used >= limit:
            return _refuse(
                entry, f"steer budget spent: {used} of max_steers {limit} used on {prompt_id}"
            ), None
        entry["params"] = {**params, "delivery": delivery}
        entry["outcome"] = "applied"
        entry["reason"] = None
        steer = Steer(
            text=str(params["text"]),
            author=entry["author"],
            prompt_id=prompt_id,
            attempt=entry["attempt"],
            at=entry["at"],
            request=entry["request"],
            delivery=delivery,
        )
        target = prompt_id

        def apply() -> None:
            self._steer_counts[target] = used + 1
            self.snapshot["steer_count"] = used + 1
            self._dirty = True
            if delivery == NEXT_SESSION:
                self._queued.append(steer)
                mode = self._between[1] if self._between else None
                self.console.say(
                    f"[{target}] steer for the next session ({mode}): {steer.text.strip()}"
                )
                return
            self._steers.append(steer)
            self.console.say(f"[{target}] interrupting to steer: {steer.text.strip()}")
            if self._handle is not None:
                self._handle.interrupt()

        return entry, apply

    def _used_steers(self, prompt_id: str) -> int:
        if prompt_id not in self._steer_counts:
            count = 0
            if self.runtime is not None:
                record = self.runtime.load_prompt(prompt_id)
                if record.get("run_id") == self.run_id:
                    count = _int(record.get("steer_count"))
            self._steer_counts[prompt_id] = count
        return self._steer_counts[prompt_id]

    def _decide_amendment(
        self, entry: dict[str, Any], command: str, params: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Callable[[], None] | None]:
        from ..errors import UserError
        from .amendments import append_record, make_record, phase_of
        from .requests import validate_amendment
        from .verifying import target

        clean = validate_amendment(command, params, known_clauses=self.known_clauses)
        prompt_id = clean["prompt_id"]
        prompt = self._prompt_model(prompt_id)
        if prompt is None:
            return _refuse(entry, f"unknown prompt {prompt_id}"), None
        record_doc = self.runtime.load_prompt(prompt_id) if self.runtime is not None else {}
        # Decided on the runner's thread, so never while this run verifies:
        # the amendment applies to the prompt's next verification or is deferred.
        applies_to, phase = target(
            self.state_root, prompt_id, run_id=self.run_id, record=record_doc, persist=False
        )
        try:
            record = make_record(
                prompt,
                command,
                clean,
                state_root=self.state_root,
                author=entry["author"],
                phase=phase or phase_of(record_doc),
                run_id=self.run_id,
                applies_to=applies_to,
            )
        except UserError as exc:
            return _refuse(entry, str(exc)), None
        if record.get("persist"):
            record["persist"] = False
            record["persist_refused"] = "persist edits the packet: use `control amend --persist`"
        entry.update(
            {
                "outcome": "applied",
                "reason": None,
                "phase": record["phase"],
                "applies_to": applies_to,
            }
        )
        return entry, lambda: _ignore(append_record(self.state_root, record))

    def _prompt_model(self, prompt_id: str) -> Any:
        loader = self.prompt_loader
        return loader(prompt_id) if loader is not None else None

    # -- errors ---------------------------------------------------------------------------

    def _guard(self, what: str, action: Callable[[], Any]) -> None:
        """Run ``action``; an error is reported once per kind and never propagates."""
        try:
            action()
        except Exception as exc:
            if what not in self._warned:
                self._warned.add(what)
                self.console.say(f"warning: control plane ({what}): {exc!r}; the run continues")


def _refuse(entry: dict[str, Any], reason: str) -> dict[str, Any]:
    entry["outcome"] = "rejected"
    entry["reason"] = reason
    return entry


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _ignore(_: object) -> None:
    return None


def start_plane(ctx: RunContext) -> ControlPlane | None:
    """Create and start the plane of ``ctx``'s run, or ``None`` for a run without disk state.

    A control directory that cannot be prepared is reported on the console and
    the run goes on without a plane (the transport is never fatal).
    """
    root = ctx.store.root
    if root is None:
        return None
    from ..verifier import contract_keys

    plan = ctx.plan
    prompts = {
        pp.id: PromptInfo(
            name=pp.prompt.name,
            provider=pp.provider,
            model=pp.model,
            max_steers=pp.recovery.max_steers,
            file=pp.prompt.file,
        )
        for pp in (plan.prompt(i) for i in plan.selected)
    }
    plane = ControlPlane(
        Path(root),
        run_id=ctx.run_id,
        packet=plan.packet.root.name,
        console=ctx.console,
        runtime=ctx.store,
        prompts=prompts,
        state_view=ctx.state_view,
        known_clauses=contract_keys(),
        prompt_loader=lambda pid: plan.packet.prompt(pid) if pid in plan.packet.ids() else None,
    )
    try:
        plane.start()
    except (OSError, ValueError) as exc:
        ctx.console.say(f"warning: the control plane is off for this run: {exc}")
        return None
    return plane


def finish_plane(plane: object, status: str) -> None:
    """Record the run's end status in the snapshot (no-op for ``None``)."""
    if isinstance(plane, ControlPlane):
        plane.finish(status)


_PROMPT_ID_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _with_ids(encoded: str | None, event: Event, prompt_id: str, run_id: str) -> str:
    """The event's JSON object line with ``prompt_id`` and ``run_id`` added, reusing ``encoded``.

    ``encoded`` is the runner's one encoding of ``event.to_dict()`` (a JSON
    object); without it the event is encoded here.
    """
    if encoded is None:
        from ..render.sinks import encode_body  # the runner's one encoder (orjson)

        encoded = encode_body(event)
        try:
            encoded.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (odd file names): escape them
            encoded = None
    if encoded is None or not encoded.endswith("}") or encoded == "{}":
        record = event.to_dict()
        record["prompt_id"] = prompt_id
        record["run_id"] = run_id
        return _dumps_event(record)
    key = (prompt_id, run_id)
    suffix = _IDS_SUFFIX.get(key)
    if suffix is None:
        suffix = _IDS_SUFFIX[key] = (
            f',"prompt_id":{_PROMPT_ID_ENCODER.encode(prompt_id)}'
            f',"run_id":{_PROMPT_ID_ENCODER.encode(run_id)}}}'
        )
    return encoded[:-1] + suffix


_IDS_SUFFIX: dict[tuple[str, str], str] = {}
"""Per (prompt id, run id), the encoded ``,"prompt_id":...,"run_id":...}`` tail."""


def _dumps_event(record: dict[str, Any]) -> str:
    from .store import _dumps

    return _dumps(record)
