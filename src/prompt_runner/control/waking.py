"""The ``wake`` request and the wait it ends: the runner's half of ``control wake``.

While the run waits for a usage window to reset (``runner/usage_wait.py``), the
plane shows the wait in the snapshot -- ``waiting_until`` (ISO 8601 UTC) and
``wait`` (kind, prompt, provider, window, reset, reason) -- and the waiting
loop asks the plane, between short sleeps, whether a ``wake`` was applied.

A ``wake`` is decided like every request (logged, then receipted): applied
while a wait is in progress (the wait ends at once and the prompt's next
session starts), refused with a reason otherwise -- a wake never waits for a
wait that has not begun.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .decisions import Decision, refuse

NOT_WAITING = "the run is not waiting for a usage window"


class _Plane(Protocol):
    """What a wake decision touches of the plane (``ControlPlane``)."""

    wait: dict[str, Any] | None
    woken: bool

    @property
    def console(self) -> Any: ...


def decide_wake(entry: dict[str, Any], params: Mapping[str, Any], plane: _Plane) -> Decision:
    """Decide a ``wake`` request that passed validation.

    Returns:
        ``(entry, effect)``: applied while the plane shows a wait (the effect
        sets ``plane.woken`` and says so); refused with :data:`NOT_WAITING`
        otherwise.
    """
    wait = plane.wait
    if wait is None:
        return refuse(entry, NOT_WAITING), None
    entry["outcome"] = "applied"
    entry["reason"] = None
    entry["waiting_until"] = wait.get("waiting_until")

    def wake() -> None:
        plane.woken = True
        who = f" by {entry['author']}" if entry.get("author") else ""
        plane.console.say(
            f"[{wait.get('prompt_id')}] woken{who}: the wait for {wait.get('provider')} "
            f"{wait.get('window')} (until {wait.get('waiting_until')}) ends now"
        )

    return entry, wake


def show_wait(snapshot: dict[str, Any], wait: Mapping[str, Any] | None) -> None:
    """Put ``wait`` (``None``: no wait) in the snapshot as ``wait`` and ``waiting_until``."""
    snapshot["wait"] = dict(wait) if wait is not None else None
    snapshot["waiting_until"] = wait.get("waiting_until") if wait is not None else None
