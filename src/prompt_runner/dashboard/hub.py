"""The server's one watcher: file notifications in, overview rows and wake-ups out.

One task waits on ``watchfiles.awatch`` over the state roots of every run
(inotify on Linux: no busy poll of the data files); a change under a root
marks that run changed, and every subscribed page stream is woken to read
what is new from its own offsets. A second task ticks every
:data:`TICK_S` seconds for the one thing no file announces -- a runner that
died (``kill -9`` writes nothing): it re-reads ``run.pid``'s liveness, so a
dead runner's row reads ``down`` within a second. The tick also notices a state
root that appeared (a packet's first run) or vanished, and restarts the
watcher over the new set.

Rows are recomputed off the event loop (small reads: the snapshot, the run
record, ``run.pid``) and sent only when they changed beyond the clock.

Requests the page sent are tracked until their outcome receipt appears
(:meth:`Hub.track`); the receipt's answer is pushed once to every stream of
that run and kept (:meth:`Hub.answer`) for a page that reloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ..control.store import ControlStore
from ..errors import PromptRunnerError
from .actions import Answer, receipt_answer
from .overview import run_row, same_row
from .sources import RunSource

TICK_S = 0.4
"""Seconds between liveness checks (a dead runner reads ``down`` within ~2 ticks)."""

KEPT_ANSWERS = 500
"""Final answers kept per run for pages that reload."""

MAX_PENDING = 1000
"""Requests awaiting a receipt tracked per run (a page asking about more is not)."""

_IGNORED_PARTS = frozenset({"logs", "tmp"})


def now_ms() -> int:
    """Wall-clock epoch milliseconds."""
    return time.time_ns() // 1_000_000


class Subscription:
    """One page stream's inbox: which runs changed, their new rows, receipts.

    The hub fills it; the stream drains it with :meth:`take` after :meth:`wait`.
    Changes coalesce: a slow page gets one wake-up for many writes.
    """

    def __init__(self, keys: Iterable[str] | None) -> None:
        self.keys = frozenset(keys) if keys is not None else None
        self._event = asyncio.Event()
        self.rows: dict[str, dict[str, Any]] = {}
        self.files: set[str] = set()
        self.answers: list[tuple[str, Answer]] = []

    def wants(self, key: str) -> bool:
        """True when this stream shows run ``key``."""
        return self.keys is None or key in self.keys

    def _wake(self) -> None:
        self._event.set()

    async def wait(self, timeout_s: float) -> None:
        """Return once something arrived, or after ``timeout_s``."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), timeout_s)

    def take(self) -> tuple[dict[str, dict[str, Any]], set[str], list[tuple[str, Answer]]]:
        """What arrived since the last call: ``(rows by key, changed keys, answers)``."""
        self._event.clear()
        taken = (self.rows, self.files, self.answers)
        self.rows, self.files, self.answers = {}, set(), []
        return taken


class Hub:
    """Watches the runs' files for the server's lifetime (:meth:`run`)."""

    def __init__(self, sources: Iterable[RunSource], *, tick_s: float = TICK_S) -> None:
        self.sources = {s.key: s for s in sources}
        self.tick_s = tick_s
        self.rows: dict[str, dict[str, Any]] = {}
        self._subs: set[Subscription] = set()
        self._pending: dict[str, set[str]] = {key: set() for key in self.sources}
        self._answers: dict[str, OrderedDict[str, Answer]] = {
            key: OrderedDict() for key in self.sources
        }
        self._roots: dict[Path, str] = {}
        self._rewatch = asyncio.Event()
        self.notifications = 0
        """File notification batches received (for tests and the bench)."""

    # -- subscribers ----------------------------------------------------------------

    def subscribe(self, keys: Iterable[str] | None = None) -> Subscription:
        """A new inbox for the runs ``keys`` (``None``: every run)."""
        sub = Subscription(keys)
        self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop filling ``sub``."""
        self._subs.discard(sub)

    # -- requests awaiting receipts -----------------------------------------------------

    def track(self, key: str, request: str) -> None:
        """Watch for the outcome receipt of ``request`` (a request the page sent)."""
        pending = self._pending[key]
        if request in pending or len(pending) < MAX_PENDING:
            pending.add(request)
        self._files_changed({key})

    def answer(self, key: str, request: str) -> Answer | None:
        """The final answer of ``request`` once its receipt arrived, else ``None``."""
        return self._answers[key].get(request)

    def _settle(self, key: str) -> list[Answer]:
        """Answers of the tracked requests of ``key`` whose receipts now exist."""
        pending = self._pending[key]
        if not pending:
            return []
        store = ControlStore(self.sources[key].layout.root)
        settled: list[Answer] = []
        for name in sorted(pending):
            try:
                receipt = store.read_outcome(name)
            except (PromptRunnerError, ValueError, OSError):
                continue  # a receipt being written, or a damaged one: look again later
            if receipt is None:
                continue
            answer = receipt_answer({**receipt, "request": name})
            settled.append(answer)
        return settled

    # -- the two tasks ------------------------------------------------------------------

    async def run(self) -> None:
        """Watch and tick until cancelled."""
        await self.refresh(self.sources)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch)
            tg.start_soon(self._tick)

    async def refresh(self, keys: Iterable[str], *, files: bool = False) -> None:
        """Re-read the rows (and receipts) of ``keys`` and tell the subscribers."""
        wanted = [k for k in keys if k in self.sources]
        if not wanted:
            return
        computed = await anyio.to_thread.run_sync(self._compute, wanted)
        for key, (row, answers) in computed.items():
            changed = not same_row(self.rows.get(key), row)
            self.rows[key] = row
            for answer in answers:
                self._pending[key].discard(answer["request"])
                kept = self._answers[key]
                kept[answer["request"]] = answer
                while len(kept) > KEPT_ANSWERS:
                    kept.popitem(last=False)
            for sub in list(self._subs):
                if not sub.wants(key):
                    continue
                if changed:
                    sub.rows[key] = row
                if files:
                    sub.files.add(key)
                sub.answers.extend((key, a) for a in answers)
                if changed or files or answers:
                    sub._wake()

    def _compute(self, keys: list[str]) -> dict[str, tuple[dict[str, Any], list[Answer]]]:
        now = now_ms()
        return {key: (run_row(self.sources[key], now), self._settle(key)) for key in keys}

    def _files_changed(self, keys: set[str]) -> None:
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to wake
            asyncio.get_running_loop().create_task(self.refresh(keys, files=True))

    def _existing_roots(self) -> dict[Path, str]:
        return {s.layout.root: k for k, s in self.sources.items() if s.layout.root.is_dir()}

    def _key_of(self, path: str) -> str | None:
        p = Path(path)
        for root, key in self._roots.items():
            if p == root or root in p.parents:
                rel = p.relative_to(root).parts
                if rel and rel[0] in _IGNORED_PARTS:
                    return None
                if len(rel) > 1 and rel[1] in _IGNORED_PARTS:
                    return None  # control/tmp: requests being written
                return key
        return None

    async def _watch(self) -> None:
        from watchfiles import awatch  # lazy: imported by the dashboard's server only

        while True:
            self._roots = self._existing_roots()
            self._rewatch.clear()
            if not self._roots:
                await self._rewatch.wait()
                continue
            try:
                async for changes in awatch(
                    *self._roots,
                    debounce=50,
                    step=5,
                    stop_event=self._rewatch,
                    recursive=True,
                    watch_filter=None,
                    ignore_permission_denied=True,
                ):
                    self.notifications += 1
                    keys = {k for _, path in changes if (k := self._key_of(path)) is not None}
                    if keys:
                        await self.refresh(keys, files=True)
            except Exception:  # a root deleted under the watcher, a watch limit: retry
                await asyncio.sleep(self.tick_s)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            if set(self._existing_roots()) != set(self._roots):
                self._rewatch.set()
                await self.refresh(self.sources, files=True)
            else:
                await self.refresh(self.sources)
