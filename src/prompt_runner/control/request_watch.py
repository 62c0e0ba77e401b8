"""File notification for ``control/requests/``: a request reaches a silent run at once.

The runner's thread looks at ``requests/`` on its ~100 ms tick and the
provider's thread every ``poll_interval_s`` at event boundaries (the polling
path, which always runs). A :class:`RequestWatch` adds the notification path:
a daemon thread told by the kernel when a request file is renamed into the
directory calls back at once, and the plane decides it then -- so a request
written while the provider says nothing is applied within a millisecond or
two instead of at the next tick.

Two backends, chosen on the watch's thread:

* ``inotify`` (Linux, the ``inotify_simple`` package): the thread is blocked in
  ``poll(2)`` on the inotify descriptor and a wake-up pipe, so it costs no CPU
  while nothing happens -- it wakes when a request lands, when :meth:`RequestWatch.stop`
  writes to the pipe, and once a second to see whether the plane that owns it
  still lives. Only ``IN_MOVED_TO`` and ``IN_CLOSE_WRITE`` of an entry wake it (a
  request renamed in, or written in place and closed): the plane's own removal
  of a decided request does not. If the directory is removed or moved away,
  the watch is re-armed on the path once it exists again (looked at once a
  second), and calls back then.
* ``watchfiles`` (elsewhere, or without ``inotify_simple``): its Rust loop sleeps
  in steps of :data:`STEP_MS` between looks at the kernel's events (about 30
  microseconds of CPU per step on a 2-core VM: ~0.6% of one core while the run
  is silent) and reports a change one to two steps after it happened.

Polling stays the fallback, and needs nothing to switch to it: where
notification is unavailable (neither library, no inotify instance or watch left
-- ``fs.inotify.max_user_instances``/``max_user_watches`` --, a filesystem whose
changes the kernel does not report, such as a network mount written from
another host) the watch simply never calls back, or its thread ends, and the
ticks go on as before. Setting :data:`ENV_NOTIFY` to ``0`` turns the watch off
(polling only). The library's import happens on the watch's own thread, so
the run never waits for it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV_NOTIFY = "PROMPT_RUNNER_CONTROL_NOTIFY"
"""``0`` (or ``off``/``false``/``no``): no file notification, requests are polled only."""

STEP_MS = 5
"""``watchfiles``' step: the longest a change waits before it is looked at (ms)."""

OWNER_CHECK_MS = 1000
"""How often (ms) a blocked inotify watch wakes to see whether its owner lives,
and, while the directory is gone, whether it is back."""

# inotify(7) masks (linux/inotify.h; stable kernel ABI)
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_MASK = _IN_MOVED_TO | _IN_CLOSE_WRITE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED


def notify_enabled(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether :data:`ENV_NOTIFY` allows file notification (it does unless set to a no)."""
    value = (environ if environ is not None else os.environ).get(ENV_NOTIFY, "")
    return value.strip().lower() not in ("0", "off", "false", "no")


def _inotify_class() -> Any:
    """``inotify_simple.INotify``, or ``None`` off Linux or without the package."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # lazy: only a run's plane watches, on the watch's own thread (ctypes, ~5 ms)
        from inotify_simple import INotify  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return None
    return INotify


class RequestWatch:
    """Call ``on_change`` from a daemon thread whenever a request lands in ``directory``.

    Args:
        directory: the directory to watch (``control/requests/``); it must exist.
        on_change: called with no arguments, never concurrently with itself;
            an exception it raises is swallowed (the next change calls again).
            A bound method is held weakly: once its object is gone (a plane
            dropped without :meth:`stop`), the thread ends within a second.
        step_ms: see :data:`STEP_MS` (the ``watchfiles`` backend only).
        backend: ``"inotify"``, ``"watchfiles"`` or ``None`` (the first one that
            is available: ``inotify`` on Linux with ``inotify_simple``).

    :meth:`start` returns at once; the thread imports its library and starts
    watching in the background. :attr:`watching` says whether notification
    is live (``False`` before it is, after :meth:`stop`, while the directory is
    gone, and for good when it could not start: polling alone then brings
    requests in); :attr:`backend` which backend runs, :attr:`failure` why none does.
    """

    def __init__(
        self,
        directory: Path,
        on_change: Callable[[], None],
        *,
        step_ms: int = STEP_MS,
        backend: str | None = None,
    ) -> None:
        if backend not in (None, "inotify", "watchfiles"):
            raise ValueError(f"unknown backend {backend!r}: inotify, watchfiles or None")
        self.directory = Path(directory)
        self._on_change: Callable[[], Callable[[], None] | None] = (
            weakref.WeakMethod(on_change) if hasattr(on_change, "__self__") else lambda: on_change
        )
        self.step_ms = step_ms
        self.backend: str | None = backend
        """The backend in use once the thread chose it (``None`` before)."""
        self.failure: str | None = None
        """Why notification is off (no library, no inotify watch left, the watch
        failed), or ``None``."""
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._watching = False
        self._thread: threading.Thread | None = None
        self._pipe_lock = threading.Lock()
        self._wake_w: int | None = None  # the wake-up pipe's write end (inotify)

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
        """Stop watching; waits up to ``timeout_s`` for the thread (the inotify
        thread is woken through its pipe at once, watchfiles' within one step).
        Idempotent."""
        self._stop.set()
        with self._pipe_lock:
            if self._wake_w is not None:
                with contextlib.suppress(OSError):  # full: a wake-up is pending anyway
                    os.write(self._wake_w, b"x")
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _run(self) -> None:
        try:
            inotify = _inotify_class() if self.backend in (None, "inotify") else None
            if inotify is not None:
                self.backend = "inotify"
                self._run_inotify(inotify)
            elif self.backend == "inotify":
                self.failure = "inotify_simple is not available on this platform"
            else:
                self.backend = "watchfiles"
                self._run_watchfiles()
        finally:
            self._watching = False
            self._ready.set()

    # -- inotify ------------------------------------------------------------------------

    def _run_inotify(self, inotify_class: Any) -> None:
        try:
            notify = inotify_class(nonblocking=True)
        except OSError as exc:  # EMFILE: fs.inotify.max_user_instances reached
            self.failure = f"no inotify instance: {exc}"
            return
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        with self._pipe_lock:
            self._wake_w = wake_w
        try:
            with notify:
                self._loop_inotify(notify, wake_r)
        except OSError as exc:  # the descriptor failed: polling goes on
            self.failure = f"{type(exc).__name__}: {exc}"
        finally:
            with self._pipe_lock:
                self._wake_w = None
                os.close(wake_w)
            os.close(wake_r)

    def _arm(self, notify: Any) -> int | None:
        """Watch the directory; its watch descriptor, or ``None`` while it does not
        exist. Raises OSError for any other failure (the watch limit)."""
        try:
            wd: int = notify.add_watch(self.directory, _MASK)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None
            if exc.errno == errno.ENOSPC:
                raise OSError(
                    exc.errno, "the inotify watch limit is reached (fs.inotify.max_user_watches)"
                ) from None
            raise
        return wd

    def _loop_inotify(self, notify: Any, wake_r: int) -> None:
        poller = select.poll()
        poller.register(notify.fileno(), select.POLLIN)
        poller.register(wake_r, select.POLLIN)
        wd = self._arm(notify)
        if wd is None:  # it must exist at start
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(self.directory))
        self._watching = True
        self._ready.set()
        self._changed()  # a request renamed in before the watch was live
        while not self._stop.is_set() and self._on_change() is not None:
            if wd is None:  # the directory went: is it back?
                wd = self._arm(notify)
                if wd is not None:
                    self._watching = True
                    self._changed()  # what landed while nothing watched
            ready = poller.poll(OWNER_CHECK_MS)
            if not ready or self._stop.is_set():
                continue
            changed = False
            for event in notify.read(timeout=0):
                if event.wd == wd and event.mask & _GONE:
                    if event.mask & _IN_MOVE_SELF:
                        with contextlib.suppress(OSError):
                            notify.rm_watch(wd)  # it follows the inode, not the path
                    wd = None
                    self._watching = False
                elif event.mask & (_IN_MOVED_TO | _IN_CLOSE_WRITE | _IN_Q_OVERFLOW):
                    changed = True
            if changed:
                self._changed()

    # -- watchfiles ---------------------------------------------------------------------

    def _run_watchfiles(self) -> None:
        try:
            # lazy: ~35 ms, on this thread, only in a run's plane. The Rust backend
            # directly (documented by watchfiles): its creation says when the kernel
            # watch is live, which the ``watch()`` generator does not.
            from watchfiles._rust_notify import RustNotify

            notify = RustNotify([str(self.directory)], False, False, 0, False, True)
        except Exception as exc:  # no watchfiles, no inotify watch left, no directory
            self.failure = f"{type(exc).__name__}: {exc}"
            return
        try:
            with notify:
                self._watching = True
                self._ready.set()
                self._changed()  # a request renamed in before the watch was live
                while not self._stop.is_set() and self._on_change() is not None:
                    # debounce = step: one step after a change unless more arrive;
                    # a timeout each second to see whether the callback's owner lives
                    got = notify.watch(self.step_ms, self.step_ms, OWNER_CHECK_MS, self._stop)
                    if isinstance(got, set):
                        self._changed()
        except Exception as exc:  # the watch failed (the directory went): polling goes on
            self.failure = f"{type(exc).__name__}: {exc}"

    def _changed(self) -> None:
        callback = self._on_change()
        if callback is not None:
            with contextlib.suppress(Exception):  # the plane reports its own faults
                callback()
