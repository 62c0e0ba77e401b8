"""File notification for ``control/requests/``: a request reaches a silent run at once.

The runner's thread looks at ``requests/`` on its ~100 ms tick and the
provider's thread every ``poll_interval_s`` at event boundaries (the polling
path, which always runs). A :class:`RequestWatch` adds the notification path:
a daemon thread waiting in ``watchfiles``' Rust backend on the directory
(inotify on Linux, the platform's notification elsewhere) calls back as soon as a
request file is renamed into it, and the plane decides it then -- so a
request written while the provider says nothing is applied within a few
milliseconds instead of at the next tick.

Polling stays the fallback, and needs nothing to switch to it: where
notification is unavailable (``watchfiles`` missing, the inotify watch limit
reached, a filesystem whose changes the kernel does not report, such as a
network mount written from another host) the watch simply never calls back,
or its thread ends, and the ticks go on as before. Setting
:data:`ENV_NOTIFY` to ``0`` turns the watch off (polling only).

Cost: ``watchfiles`` sleeps in steps of :data:`STEP_MS` between looks at the
kernel's events (its Rust loop; about 30 microseconds of CPU per step on a
2-core VM: ~0.6% of one core while the run is silent), and reports a change
one to two steps after it happened. Its import (~35 ms) happens on the
watch's own thread, so the run never waits for it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

ENV_NOTIFY = "PROMPT_RUNNER_CONTROL_NOTIFY"
"""``0`` (or ``off``/``false``/``no``): no file notification, requests are polled only."""

STEP_MS = 5
"""``watchfiles``' step: the longest a change waits before it is looked at (ms)."""


def notify_enabled(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether :data:`ENV_NOTIFY` allows file notification (it does unless set to a no)."""
    value = (environ if environ is not None else os.environ).get(ENV_NOTIFY, "")
    return value.strip().lower() not in ("0", "off", "false", "no")


class RequestWatch:
    """Call ``on_change`` from a daemon thread whenever an entry of ``directory``
    appears, changes or goes.

    Args:
        directory: the directory to watch (``control/requests/``); it must exist.
        on_change: called with no arguments, never concurrently with itself;
            an exception it raises is swallowed (the next change calls again).
            A bound method is held weakly: once its object is gone (a plane
            dropped without :meth:`stop`), the thread ends within a second.
        step_ms: see :data:`STEP_MS`.

    :meth:`start` returns at once; the thread imports ``watchfiles`` and starts
    watching in the background. :attr:`watching` says whether notification
    is live (``False`` before it is, after :meth:`stop`, and for good when it
    could not start or failed: polling alone then brings requests in).
    """

    def __init__(
        self, directory: Path, on_change: Callable[[], None], *, step_ms: int = STEP_MS
    ) -> None:
        self.directory = Path(directory)
        self._on_change: Callable[[], Callable[[], None] | None] = (
            weakref.WeakMethod(on_change)
            if hasattr(on_change, "__self__")
            else lambda: on_change
        )
        self.step_ms = step_ms
        self.failure: str | None = None
        """Why notification is off (``watchfiles`` missing, the watch failed), or ``None``."""
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._watching = False
        self._thread: threading.Thread | None = None

    @property
    def watching(self) -> bool:
        """True while the kernel's notifications for the directory are being read."""
        return self._watching and not self._stop.is_set()

    def start(self) -> None:
        """Start the watch thread (once; a second call does nothing)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, name="prompt-runner-requests", daemon=True
        )
        self._thread.start()

    def wait_ready(self, timeout_s: float) -> bool:
        """Block until the watch is live or has given up (tests, benches); returns
        :attr:`watching`."""
        self._ready.wait(timeout_s)
        return self.watching

    def stop(self, timeout_s: float = 1.0) -> None:
        """Stop watching; waits up to ``timeout_s`` for the thread (it ends within
        one step). Idempotent."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _run(self) -> None:
        try:
            # lazy: ~35 ms, on this thread, only in a run's plane. The Rust backend
            # directly (documented by watchfiles): its creation says when the kernel
            # watch is live, which the ``watch()`` generator does not.
            from watchfiles._rust_notify import RustNotify

            notify = RustNotify([str(self.directory)], False, False, 0, False, True)
        except Exception as exc:  # no watchfiles, no inotify watch left, no directory
            self.failure = f"{type(exc).__name__}: {exc}"
            self._ready.set()
            return
        try:
            with notify:
                self._watching = True
                self._ready.set()
                self._changed()  # a request renamed in before the watch was live
                while not self._stop.is_set() and self._on_change() is not None:
                    # debounce = step: one step after a change unless more arrive;
                    # a timeout each second to see whether the callback's owner lives
                    got = notify.watch(self.step_ms, self.step_ms, 1000, self._stop)
                    if isinstance(got, set):
                        self._changed()
        except Exception as exc:  # the watch failed (the directory went): polling goes on
            self.failure = f"{type(exc).__name__}: {exc}"
        finally:
            self._watching = False
            self._ready.set()

    def _changed(self) -> None:
        callback = self._on_change()
        if callback is not None:
            with contextlib.suppress(Exception):  # the plane reports its own faults
                callback()
