"""The notifier: events in from the run, deliveries out on a worker thread.

:meth:`Notifier.emit` builds the event's document and puts it on a bounded
queue (:data:`QUEUE_SIZE`); it never blocks and never raises for anything a
target does. One daemon thread, started with the first event, delivers each
document to every target in turn (the URLs, then the command), trying a
failed delivery again up to ``notify.retries`` times with a short backoff,
each attempt bounded by ``notify.timeout``, and records every delivery's
outcome (:mod:`.record`).

:meth:`Notifier.close` (the run's end) waits for the queue to empty for at
most ``notify.timeout`` in all; past it, whatever is still queued or in
flight is recorded ``abandoned``, a command still running is ended, and the
run exits. So a failing or hanging notifier never fails a run and delays its
exit by at most ``notify.timeout`` (plus the ~0.5 s a command's process group
is given to go). A run ended by a signal waits at most
:data:`SIGNALLED_WAIT_S`, and a wait cut short by a signal (a ``stop`` whose
grace ended first SIGTERMs the runner) records what is left ``abandoned``
before the runner exits, naming the signal.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..proc import ProcessGroup
from ..state.layout import StateLayout
from .config import EVENT_KINDS, NotifyConfig
from .document import build
from .record import Recorder
from .secrets import Scrub, redact
from .targets import Attempt, run_command, send_url

QUEUE_SIZE = 256
"""Events waiting for delivery at most; an event beyond it is recorded ``dropped``."""

BACKOFF_S = (0.5, 1.0, 2.0, 4.0)
"""Seconds before each further attempt (the last repeats)."""

SIGNALLED_WAIT_S = 2.0
"""Seconds at most a run ended by a signal (Ctrl-C, SIGTERM) waits for its
deliveries (``notify.timeout`` when that is less): whoever sent it wants the
run gone, and ``stop`` SIGKILLs a runner 5 s after its SIGTERM."""

_STOP = object()


@dataclass(frozen=True)
class _Target:
    kind: str  # "url" | "command"
    spec: str | tuple[str, ...]
    shown: str  # redacted, what the record names


class Notifier:
    """Delivers run events to the configured targets, off the caller's thread.

    Args:
        config: the resolved ``notify:`` (``None``: a disabled notifier).
        record_path: ``notifications.jsonl`` (``None``: deliveries are not recorded).
        packet, packet_root, run_id: filled into every document.
        env: the environment ``{env:NAME}`` and a command read (default: the
            process's, read at send time).
        cwd: a command's working directory (default: ``packet_root``, else the
            current directory).
    """

    def __init__(
        self,
        config: NotifyConfig | None,
        *,
        record_path: Path | None = None,
        packet: str | None = None,
        packet_root: str | Path | None = None,
        run_id: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.config = config
        self.packet = packet
        self.packet_root = str(packet_root) if packet_root is not None else None
        self.run_id = run_id
        self.recorder = Recorder(record_path)
        self._env = env if env is not None else os.environ
        self._cwd = cwd or (Path(packet_root) if packet_root is not None else Path.cwd())
        self._scrub = Scrub()
        self._targets = self._make_targets(config)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_SIZE)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._in_flight: tuple[dict[str, Any], _Target, int, float] | None = None
        self._child: int | None = None
        self._abandoned = False
        self._cut_reason: str | None = None  # why the exit's wait was cut short
        self._closed = False
        self._deadline: float | None = None
        self._stop = threading.Event()  # set when the exit stops waiting: backoffs end

    @classmethod
    def disabled(cls) -> Notifier:
        """A notifier that delivers nothing (no ``notify:`` configured)."""
        return cls(None)

    @property
    def enabled(self) -> bool:
        return self.config is not None and bool(self._targets)

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def missing_env(self) -> list[str]:
        """The ``{env:NAME}`` variables of the URLs that are unset now (names only)."""
        if self.config is None:
            return []
        return [name for name in self.config.env_names() if not self._env.get(name)]

    # -- the caller's side -------------------------------------------------------

    def emit(
        self,
        kind: str,
        *,
        prompt: str | None = None,
        reason: str,
        next_step: str,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Queue event ``kind`` for delivery; returns at once.

        Args:
            kind: one of :data:`~prompt_runner.notify.config.EVENT_KINDS`.
            prompt: the prompt id the event is about (``None``: the run).
            reason: what happened, one sentence.
            next_step: what the reader should do next, one sentence.
            details: kind-specific JSON values.

        Raises:
            ValueError: ``kind`` is not an event kind (a programming error).
        """
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown notification kind {kind!r}")
        config = self.config
        if config is None or not self._targets or not config.wants(kind) or self._closed:
            return
        document = build(
            kind,
            packet=self.packet,
            packet_root=self.packet_root,
            run_id=self.run_id,
            prompt=prompt,
            reason=reason,
            next_step=next_step,
            details=details,
        )
        try:
            self._queue.put_nowait(document)
        except queue.Full:
            for target in self._targets:
                self._record(document, target, "dropped", 0, "the notification queue was full", 0)
            return
        self._start_worker()

    def close(self) -> None:
        """Let queued deliveries finish, waiting at most ``notify.timeout`` in all;
        record what is left ``abandoned`` and end a command still running.

        Called while a ``KeyboardInterrupt`` propagates (Ctrl-C, or a SIGTERM
        the CLI turned into one: the run's ``finally``), it waits at most
        :data:`SIGNALLED_WAIT_S`. An interruption of the wait itself (e.g. a
        ``stop`` whose grace ended while the exit waited) records what is
        left ``abandoned`` at once, naming the signal, ends a command still
        running, and is raised again: a delivery is never lost without its
        line. Idempotent; raises nothing of its own."""
        if self._closed:
            return
        self._closed = True
        thread = self._thread
        if thread is None or self.config is None:
            return
        wait_s = self.config.timeout_s
        ending = sys.exc_info()[1]
        signalled = isinstance(ending, KeyboardInterrupt)  # the run's ``finally`` after a signal
        if signalled:
            wait_s = min(wait_s, SIGNALLED_WAIT_S)
        deadline = time.monotonic() + wait_s
        with self._lock:
            self._deadline = deadline
            if signalled and ending is not None:
                self._cut_reason = (
                    f"the run was ended by {_signal_name(ending)} and its exit waits at most "
                    f"{wait_s:g} s for deliveries"
                )
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_STOP)
        try:
            thread.join(max(0.0, deadline - time.monotonic()))
        except BaseException as exc:  # Ctrl-C, or a SIGTERM turned into one, cut the wait short
            # Not ``thread.is_alive()``: an interrupted join may mark a live
            # thread stopped (CPython 3.11, bpo-45274). What is in flight or
            # queued says what is left; with nothing, nothing is recorded.
            self._abandon(_cut_short(exc))
            raise
        if thread.is_alive():
            self._abandon()

    def summary(self) -> str | None:
        """One line about deliveries that did not succeed, or ``None`` when all did."""
        bad = {k: n for k, n in self.recorder.outcomes.items() if k != "delivered" and n}
        if not bad and not self.recorder.write_errors:
            return None
        parts = [f"{n} {k.replace('_', ' ')}" for k, n in sorted(bad.items())]
        if self.recorder.write_errors:
            parts.append(f"{self.recorder.write_errors} not recorded (the state directory)")
        where = f"; see {self.recorder.path}" if self.recorder.path is not None else ""
        return f"notify: deliveries {', '.join(parts)}{where}"

    # -- the worker --------------------------------------------------------------

    def _start_worker(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="prompt-runner-notify", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=0.2)
            except queue.Empty:
                if self._closed:  # closed while the queue was too full for the stop mark
                    return
                continue
            if item is _STOP:
                return
            for index, target in enumerate(self._targets):
                if not self._deliver(item, target):
                    # The exit stopped waiting before this target was tried:
                    # it and the ones after it are recorded here (nothing of
                    # this document is in flight, so ``_abandon`` did not).
                    for later in self._targets[index:]:
                        self._record(item, later, "abandoned", 0, self._left_reason(), 0)
                    return
                if self._abandoned:  # during this target: ``_abandon`` recorded the rest
                    return

    def _deliver(self, document: dict[str, Any], target: _Target) -> bool:
        """Deliver ``document`` to ``target`` with retries and record the outcome.
        Returns False when the exit stopped waiting before the first attempt
        (nothing recorded); True otherwise (recorded here, or by ``_abandon``
        when it stopped waiting during an attempt or a backoff)."""
        assert self.config is not None
        started = time.monotonic()
        attempts, result = 0, Attempt(False, "not tried")
        for attempt in range(self.config.retries + 1):
            bound = self._bound()
            if bound is not None and attempt:
                delay = BACKOFF_S[min(attempt - 1, len(BACKOFF_S) - 1)]
                bound = None if delay >= bound else bound
                if bound is not None:
                    self._stop.wait(delay)
                    bound = self._bound()
            with self._lock:
                if self._abandoned:
                    return attempts > 0  # in flight: ``_abandon`` recorded it
                if bound is None:
                    break
                self._in_flight = (document, target, attempt + 1, started)
            attempts = attempt + 1
            result = self._attempt(document, target, bound)
            if result.ok:
                break
        with self._lock:
            self._in_flight = None
            if self._abandoned:
                return attempts > 0
        if result.ok:
            outcome = "delivered"
        elif attempts and not result.timed_out:
            outcome = "failed"
        elif attempts:
            outcome = "timed_out"
        else:
            outcome = "abandoned"
            result = Attempt(False, self._left_reason())
        elapsed = int((time.monotonic() - started) * 1000)
        self._record(document, target, outcome, attempts, result.error, elapsed)
        return True

    def _bound(self) -> float | None:
        """Seconds the next attempt may take (``None``: the exit deadline passed)."""
        assert self.config is not None
        deadline = self._deadline
        if deadline is None:
            return self.config.timeout_s
        left = deadline - time.monotonic()
        return min(self.config.timeout_s, left) if left > 0.05 else None

    def _attempt(self, document: dict[str, Any], target: _Target, bound: float) -> Attempt:
        try:
            if target.kind == "url":
                assert isinstance(target.spec, str)
                return send_url(
                    target.spec, document, timeout_s=bound, env=self._env, scrub=self._scrub
                )
            assert isinstance(target.spec, tuple)
            return run_command(
                target.spec,
                document,
                timeout_s=bound,
                env=dict(self._env),
                cwd=self._cwd,
                scrub=self._scrub,
                on_start=self._started_child,
            )
        except Exception as exc:  # a notifier must never take the worker down
            return Attempt(False, self._scrub.clean(f"delivery raised {exc!r}"))

    def _started_child(self, pid: int) -> Callable[[], None]:
        with self._lock:
            self._child = pid

        def forget() -> None:
            with self._lock:
                self._child = None

        return forget

    def _abandon(self, reason: str | None = None) -> None:
        """The exit deadline passed (or its wait was interrupted: ``reason``) with
        deliveries left: record them, end a command."""
        with self._lock:
            self._abandoned = True
            if reason is not None:
                self._cut_reason = reason
            in_flight, self._in_flight = self._in_flight, None
            child = self._child
        self._stop.set()
        if child is not None:
            with contextlib.suppress(Exception):
                ProcessGroup(child, exited=lambda: True).stop(grace_s=0.2)
        if in_flight is not None:
            document, target, attempts, started = in_flight
            elapsed = int((time.monotonic() - started) * 1000)
            self._record(document, target, "abandoned", attempts, self._left_reason(), elapsed)
            rest = self._targets[self._targets.index(target) + 1 :]
            for later in rest:
                self._record(document, later, "abandoned", 0, self._left_reason(), 0)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is _STOP:
                continue
            for target in self._targets:
                self._record(item, target, "abandoned", 0, self._left_reason(), 0)

    def _left_reason(self) -> str:
        assert self.config is not None
        if self._cut_reason is not None:
            return self._cut_reason
        return (
            f"the run ended and its exit waits at most notify.timeout ({self.config.timeout_s:g} s)"
        )

    def _record(
        self,
        document: Mapping[str, Any],
        target: _Target,
        outcome: str,
        attempts: int,
        error: str | None,
        elapsed_ms: int,
    ) -> None:
        self.recorder.write(
            {
                "event": document["id"],
                "kind": document["kind"],
                "run_id": document["run_id"],
                "prompt": document["prompt"],
                "target": target.shown,
                "target_kind": target.kind,
                "outcome": outcome,
                "attempts": attempts,
                "error": self._scrub.clean(error) if error else None,
                "elapsed_ms": elapsed_ms,
            }
        )

    def _make_targets(self, config: NotifyConfig | None) -> list[_Target]:
        if config is None:
            return []
        targets = [_Target("url", url, redact(url, self._scrub)) for url in config.urls]
        if config.command:
            targets.append(_Target("command", config.command, config.command[0]))
        return targets


def _cut_short(exc: BaseException) -> str:
    """Why a delivery is ``abandoned`` when ``exc`` interrupted the exit's wait."""
    return f"the run's exit was ended by {_signal_name(exc)} while it waited for this delivery"


def _signal_name(exc: BaseException) -> str:
    """``SIGTERM`` (``cli.running.SignalInterrupt``'s ``signum``), ``SIGINT`` (a
    plain ``KeyboardInterrupt``), else the exception's type name."""
    signum = getattr(exc, "signum", None)
    if isinstance(signum, int):
        try:
            return signal.Signals(signum).name
        except ValueError:
            return f"signal {signum}"
    return "SIGINT" if isinstance(exc, KeyboardInterrupt) else type(exc).__name__


def open_notifier(
    config: NotifyConfig | None,
    *,
    state_root: Path | None,
    packet: str | None = None,
    packet_root: str | Path | None = None,
    run_id: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Notifier:
    """A :class:`Notifier` recording into ``<state_root>/notifications.jsonl``
    (``state_root=None``: not recorded). Close it (or use it as a context
    manager) when done: closing waits at most ``config.timeout_s``."""
    record = StateLayout(state_root).notifications if state_root is not None else None
    return Notifier(
        config,
        record_path=record,
        packet=packet,
        packet_root=packet_root,
        run_id=run_id,
        env=env,
    )
