"""Drive one provider session to its end, enforcing the time bounds.

The runner does not trust a provider to stop on time: while waiting it checks
the run deadline and the idle bound (no event for ``idle_ms``) itself and ends
the session as ``transport_timeout``. Between waits it calls a ``tick`` hook so
the control plane can consume requests while the provider is silent (a steer
interrupts the session through the handle). A provider that raises instead of
returning a value is turned into a ``launch_failed`` or ``unknown`` envelope:
exceptions never escape a session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..providers.base import Provider, SessionHandle, SessionRequest, SessionResult, TimeBounds
from ..providers.events import Event, EventSink
from ..providers.failure import envelope_for

TICK_S = 0.1


@dataclass
class SessionOutcome:
    """A finished session plus what the runner observed of it."""

    result: SessionResult
    session_id: str | None
    file_events: int
    tool_count: int


class _Watch:
    """Counts events and remembers when the last one arrived."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.last = time.monotonic()
        self.file_events = 0
        self.tool_count = 0
        self.session_id: str | None = None
        self.lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self.lock:
            self.last = time.monotonic()
            if event.kind == "file_change":
                self.file_events += 1
            elif event.kind == "tool_use":
                self.tool_count += 1
            elif event.kind == "session_started":
                self.session_id = str(event.data.get("session_id") or "") or None
        self.sink(event)

    def many(self, events: list[Event]) -> None:
        """Several events at once (a provider's reader delivers a pipe read's worth)."""
        with self.lock:
            self.last = time.monotonic()
            for event in events:
                kind = event.kind
                if kind == "file_change":
                    self.file_events += 1
                elif kind == "tool_use":
                    self.tool_count += 1
                elif kind == "session_started":
                    self.session_id = str(event.data.get("session_id") or "") or None
        many = getattr(self.sink, "many", None)
        if many is not None:
            many(events)
        else:
            for event in events:
                self.sink(event)


def run_session(
    provider: Provider,
    request: SessionRequest,
    sink: EventSink,
    *,
    resume_session_id: str | None = None,
    resume_message: str = "",
    tick: Callable[[SessionHandle], None] | None = None,
    on_start: Callable[[SessionHandle], Callable[[], None] | None] | None = None,
) -> SessionOutcome:
    """Start (or resume) a session and wait for it, enforcing ``request.bounds``.

    Args:
        provider: the provider to use.
        request: the session request.
        sink: receives every canonical event.
        resume_session_id: resume this exact session instead of starting fresh.
        resume_message: the message sent on resume.
        tick: called with the live handle as the session starts, then about
            every 100 ms (control plane).
        on_start: called once the session started, with its handle; may return
            a callable that is called when the session is over (however it ends).

    Returns:
        The outcome; never raises for provider failures.
    """
    watch = _Watch(sink)
    started = time.monotonic()
    try:
        if resume_session_id is not None:
            handle = provider.resume(request, resume_session_id, resume_message, watch)
        else:
            handle = provider.start(request, watch)
    except FileNotFoundError as exc:
        failure = envelope_for("launch_failed", f"could not start the provider: {exc}")
        return SessionOutcome(SessionResult(ok=False, failure=failure), None, 0, 0)
    except Exception as exc:
        failure = envelope_for("unknown", f"the provider failed to start: {exc!r}")
        return SessionOutcome(SessionResult(ok=False, failure=failure), None, 0, 0)

    bounds = request.bounds
    deadline = started + bounds.run_deadline_ms / 1000.0
    on_end = on_start(handle) if on_start is not None else None
    try:
        result = _wait(handle, watch, started, deadline, bounds, tick)
    except BaseException:
        # Ctrl-C, SIGTERM or a bug above us: never leave the agent running.
        handle.terminate()
        raise
    finally:
        if on_end is not None:
            on_end()
    session_id = result.session_id or handle.session_id or watch.session_id
    return SessionOutcome(result, session_id, watch.file_events, watch.tool_count)


def _wait(
    handle: SessionHandle,
    watch: _Watch,
    started: float,
    deadline: float,
    bounds: TimeBounds,
    tick: Callable[[SessionHandle], None] | None,
) -> SessionResult:
    result: SessionResult | None = None
    timeout_reason: str | None = None
    if tick is not None:
        tick(handle)  # at once: the control plane knows the live session from its start
    while result is None:
        result = handle.wait(TICK_S)
        if result is not None:
            break
        now = time.monotonic()
        if now >= deadline:
            timeout_reason = f"the session exceeded its run deadline ({bounds.run_deadline_ms} ms)"
        elif now - watch.last >= bounds.idle_ms / 1000.0:
            timeout_reason = f"no output for {bounds.idle_ms} ms (idle bound)"
        if timeout_reason is not None:
            handle.terminate()
            result = SessionResult(
                ok=False,
                session_id=handle.session_id or watch.session_id,
                failure=envelope_for("transport_timeout", timeout_reason),
                duration_ms=int((now - started) * 1000),
            )
            break
        if tick is not None:
            tick(handle)
    return result
