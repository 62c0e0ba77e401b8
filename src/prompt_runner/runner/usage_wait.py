"""Waiting for a usage window to reset: durable, visible, and ended early by ``control wake``.

A run waits in two cases, both decided from :class:`~..providers.usage.UsageWindow`
values, never from a provider's words:

* **usage_limit** -- a session was refused because a window is exhausted and
  its reset is known and within ``recovery.usage_limit.max_wait``
  (:func:`~.recovery.usage_limited` decides ``wait``); and, before any later
  session on that provider, while such a refusal's reset is still ahead (a
  run restarted after ``kill -9`` waits only for what is left).
* **pace** -- ``recovery.usage_limit.pace_above`` is set and the provider's
  last known utilization of a window is at or above it, with the reset within
  ``max_wait``: the session would be cut off, so it starts after the reset.

:class:`~.usage_book.UsageBook` (``ctx.usage``) holds the last known windows
per provider for the run (loaded once from ``state.json``'s ``usage_windows``,
saved back when they change). :func:`wait_for` does the wait:

1. the wait is recorded before the runner sleeps -- the prompt's record and
   ``state.json`` get ``usage_wait`` (and ``state.json`` ``waiting_until``), the
   control snapshot ``wait`` / ``waiting_until``, the event stream
   ``usage_wait_started``, the notifier ``usage_wait_started``;
2. the runner sleeps in short steps, looking at the control plane between them
   (``control wake PACKET`` ends the wait at once; ``stop`` ends the run, with
   ``--after-prompt`` too: the prompt cannot end before the window resets, so
   the wait is not sat out for it -- the record stays for the next run);
3. the records are cleared, ``usage_wait_ended`` is emitted and notified, and the
   window waited for is forgotten (it has reset).

A wait spends no retry, resume or repair budget.

A run resumed after its runner died mid-wait (``kill -9``, a reboot) continues
the wait ``state.json`` recorded (same prompt, provider, window and reset): its
records carry ``first_started_at`` (when the recorded wait began) and its event
data ``resumed: true``. ``usage_wait_started`` is notified again only when
``notifications.jsonl`` has no delivered ``usage_wait_started`` of the run and
prompt since the recorded wait began -- then with ``resumed: true`` in its
``details`` -- so a hook tells one wait from two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from ..errors import StorageError
from ..packet.models import UsageLimitConfig
from ..providers.events import Event
from ..providers.usage import UsageWindow, iso_utc, parse_iso
from ..state.jsonl import read_records
from ..state.layout import StateLayout
from .attempt_sink import AttemptSink
from .context import RunContext
from .stopping import check_stop
from .usage_book import META_WINDOWS, UsageBook

WAKE_POLL_S = 0.2
"""Longest sleep between two looks at the control plane during a wait (seconds)."""

META_WAIT = "usage_wait"
META_UNTIL = "waiting_until"
"""``state.json`` run-meta keys: the wait in progress and its end (ISO UTC)."""

WaitKind = Literal["usage_limit", "pace"]


def usage_book(ctx: RunContext) -> UsageBook:
    """The run's :class:`UsageBook`, loaded from the state root on first use."""
    ctx.usage.load(ctx.store.root)
    return ctx.usage


def observe(ctx: RunContext, windows: Iterable[UsageWindow]) -> None:
    """Record what a session reported; ``state.json`` is updated when it changed."""
    book = usage_book(ctx)
    if book.observe(windows):
        ctx.store.set_run_meta({META_WINDOWS: book.to_dict()})


@dataclass(frozen=True)
class Wait:
    """A wait to do.

    Attributes:
        kind: ``usage_limit`` (a refusal) or ``pace``.
        prompt_id: the prompt whose next session waits.
        window: the window waited for (its provider, kind and reset).
        until: when the wait ends (the reset plus the margin), aware UTC.
        reason: one human line.
    """

    kind: WaitKind
    prompt_id: str
    window: UsageWindow
    until: datetime
    reason: str

    def info(self, started_at: datetime) -> dict[str, Any]:
        """The wait as recorded (snapshot ``wait``, ``state.json`` ``usage_wait``)."""
        window = self.window
        return {
            "kind": self.kind,
            "prompt_id": self.prompt_id,
            "provider": window.provider,
            "window": window.kind,
            "resets_at": iso_utc(window.resets_at) if window.resets_at else None,
            "waiting_until": iso_utc(self.until),
            "started_at": iso_utc(started_at),
            "reason": self.reason,
        }


def wait_until(window: UsageWindow, limit: UsageLimitConfig, now: datetime) -> datetime | None:
    """When a wait for ``window`` would end (reset + margin, never before ``now``), or
    ``None`` when waiting is off, the reset is unknown, or it is beyond ``max_wait``."""
    ahead = window.seconds_to_reset(now)
    if not limit.wait or ahead is None or ahead * 1000 > limit.max_wait:
        return None
    assert window.resets_at is not None
    return max(window.resets_at, now) + timedelta(milliseconds=limit.margin)


def gate(
    ctx: RunContext, prompt_id: str, provider: str, limit: UsageLimitConfig, now: datetime
) -> Wait | None:
    """The wait due before a session of ``prompt_id`` on ``provider``, if any.

    A known exhausted window still ahead (within ``max_wait``) comes first --
    what a runner killed mid-wait left -- then pacing (``pace_above``): the
    highest window at or above it whose reset is ahead and within ``max_wait``.
    """
    windows = usage_book(ctx).of(provider)
    for window in windows:
        until = wait_until(window, limit, now) if window.exhausted else None
        if until is not None and window.resets_at is not None and window.resets_at > now:
            reason = f"{window.label()} is exhausted; it {window.reset_text()}"
            return Wait("usage_limit", prompt_id, window, until, reason)
    if limit.pace_above is None:
        return None
    due = [
        (window, until)
        for window in windows
        if window.utilization is not None
        and window.utilization >= limit.pace_above
        and window.resets_at is not None
        and window.resets_at > now
        and (until := wait_until(window, limit, now)) is not None
    ]
    if not due:
        return None
    window, until = max(due, key=lambda pair: pair[1])
    assert window.utilization is not None
    reason = (
        f"pacing: {window.label()} is {window.utilization:.0%} used "
        f"(pace_above {limit.pace_above:g}); it {window.reset_text()}"
    )
    return Wait("pace", prompt_id, window, until, reason)


@dataclass(frozen=True)
class Waited:
    """How a wait ended: ``waited_ms`` of sleep, ``woken`` by ``control wake``."""

    waited_ms: int
    woken: bool


def wait_for(ctx: RunContext, wait: Wait) -> Waited:
    """Do ``wait`` (see the module docstring): record it, sleep in steps looking at
    the control plane, clear it.

    Raises:
        RunStopped: a ``stop`` request arrived during the wait (its record stays,
            so the next run waits only for what is left).
    """
    started = datetime.now(UTC)
    info = wait.info(started)
    book = usage_book(ctx)
    earlier = _continued(book.take_recorded_wait(), info)
    if earlier is not None:
        info["first_started_at"] = earlier
    book.observe([wait.window])
    _record(ctx, wait.prompt_id, info, book)
    sink = AttemptSink(ctx, wait.prompt_id, None)
    sink(Event("usage_wait_started", _event_data(info)))
    if earlier is None or not _started_delivered(ctx, wait.prompt_id, earlier):
        _notify(ctx, "usage_wait_started", wait, info)
    waiting = getattr(ctx.control, "waiting", None)
    if waiting is not None:
        waiting(wait.prompt_id, info)
    woken = False
    slept = 0.0
    total = max(0.0, (wait.until - started).total_seconds())
    try:
        while True:
            left = min((wait.until - datetime.now(UTC)).total_seconds(), total - slept)
            if left <= 0:
                break
            # any stop ends a wait, ``after_prompt`` too: the prompt cannot end
            # before the window resets (the record stays for the next run)
            check_stop(ctx, between_prompts=True)
            if _woken(ctx, wait.prompt_id):
                woken = True
                break
            step = min(WAKE_POLL_S, left)
            ctx.sleep(step)
            slept += step
    finally:
        if waiting is not None:
            waiting(wait.prompt_id, None)
    waited_ms = int((datetime.now(UTC) - started).total_seconds() * 1000)
    book.forget(wait.window)
    _record(ctx, wait.prompt_id, None, book)
    ended = {**_event_data(info), "waited_ms": waited_ms, "woken": woken}
    sink(Event("usage_wait_ended", ended))
    _notify(ctx, "usage_wait_ended", wait, ended)
    return Waited(waited_ms, woken)


_SAME_WAIT = ("kind", "prompt_id", "provider", "window", "resets_at")
"""What makes a recorded wait the one a resumed run continues."""


def _continued(recorded: Mapping[str, Any] | None, info: Mapping[str, Any]) -> str | None:
    """When the wait ``recorded`` (what ``state.json`` held as this runner began)
    began, if ``info`` continues it (same prompt, provider, window and reset);
    else ``None``."""
    if not isinstance(recorded, Mapping) or any(recorded.get(k) != info[k] for k in _SAME_WAIT):
        return None
    first = recorded.get("first_started_at") or recorded.get("started_at")
    return first if isinstance(first, str) else None


def _started_delivered(ctx: RunContext, prompt_id: str, since: str) -> bool:
    """``notifications.jsonl`` has a delivered ``usage_wait_started`` of this run
    and ``prompt_id`` at or after ``since`` (the continued wait's first start)."""
    root = ctx.store.root
    run_id = getattr(ctx.notifier, "run_id", None)
    begun = parse_iso(since)
    if root is None or begun is None:
        return False
    try:
        lines = read_records(StateLayout(root).notifications, strict=False)
    except StorageError:  # an unreadable record proves no delivery: notify again
        return False
    for line in lines:
        if (
            line.get("kind") == "usage_wait_started"
            and line.get("outcome") == "delivered"
            and line.get("prompt") == prompt_id
            and line.get("run_id") == run_id
            and (at := parse_iso(line.get("at"))) is not None
            and at >= begun
        ):
            return True
    return False


def _woken(ctx: RunContext, prompt_id: str) -> bool:
    poll = getattr(ctx.control, "poll_wake", None)
    return bool(poll(prompt_id)) if poll is not None else False


def _record(
    ctx: RunContext, prompt_id: str, info: Mapping[str, Any] | None, book: UsageBook
) -> None:
    """Write the wait (``None``: its end) to the prompt's record and ``state.json`` now."""
    ctx.store.update_prompt(prompt_id, {META_WAIT: dict(info) if info else None})
    ctx.store.set_run_meta(
        {
            META_WAIT: dict(info) if info else None,
            META_UNTIL: info["waiting_until"] if info else None,
            META_WINDOWS: book.to_dict(),
        }
    )
    ctx.store.flush_summary()


def _event_data(info: Mapping[str, Any]) -> dict[str, Any]:
    """The wait events' data: the wait's ``kind`` as ``wait`` (an event's own
    ``kind`` is the event kind)."""
    keys = ("provider", "window", "resets_at", "waiting_until", "reason")
    data = {"wait": info["kind"], **{k: info[k] for k in keys}}
    if info.get("first_started_at"):
        data["resumed"] = True
        data["first_started_at"] = info["first_started_at"]
    return data


def _notify(ctx: RunContext, kind: str, wait: Wait, details: Mapping[str, Any]) -> None:
    """Tell ``ctx.notifier`` (``notify:``; delivery is off the run's path)."""
    until = details.get("waiting_until")
    if kind == "usage_wait_started":
        next_step = (
            f"nothing to do: the run resumes by itself at {until}; "
            "`prompt-runner control wake PACKET` ends the wait now"
        )
    else:
        next_step = "nothing to do: the run goes on"
    ctx.notifier.emit(
        kind, prompt=wait.prompt_id, reason=wait.reason, next_step=next_step, details=dict(details)
    )
