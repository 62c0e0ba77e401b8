"""The ``stop`` request: the runner's half of ``prompt-runner stop`` (SPEC 5).

A stop request asks the run to end cleanly, in one of two ways:

* at the next event boundary (the default): the live session is interrupted
  (SIGINT to the agent's group, then TERM and KILL, as a steer interrupts it),
  the prompt is recorded ``interrupted`` and the run ends -- a resume picks
  the prompt up again;
* ``after_prompt``: the current prompt runs to its end (passes and commits,
  or fails) and the run ends before the next one starts -- except while the
  run waits for a usage window (``runner/usage_wait.py``): the prompt cannot
  end before the reset, so the run ends at once, as on a plain stop, and
  keeps the wait for the next run.

The plane decides the request (:func:`decide_stop`) and keeps the accepted
:class:`StopOrder` as ``ControlPlane.stop_order``; the attempt loop reads it
at its boundaries (``runner/stopping.py``) and ends the run. A request written
before this runner process loaded the control plane is refused as stale: it
was meant for an earlier invocation (a ``stop`` whose runner ended first),
and a resumed run of the same run id must not stop on it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from .decisions import Decision, refuse

LOADED_AT = time.time()
"""When this process loaded the runner's half of the plane (seconds since the
epoch): a stop request asked before it was meant for an earlier runner."""


@dataclass(frozen=True, slots=True)
class StopOrder:
    """An accepted stop request.

    Attributes:
        after_prompt: end the run once the current prompt has ended, instead
            of at the next event boundary.
        request: the request's file name (its control-log ``request``).
        author: who asked (free text), or ``None``.
        requested_at: when it was asked (ISO 8601 UTC), as the request says.
    """

    after_prompt: bool
    request: str
    author: str | None
    requested_at: str | None

    def to_dict(self) -> dict[str, Any]:
        """The order as the snapshot's ``stop`` key shows it."""
        return {
            "after_prompt": self.after_prompt,
            "request": self.request,
            "author": self.author,
            "requested_at": self.requested_at,
        }


class _Plane(Protocol):
    """What a stop decision touches of the plane (``ControlPlane``)."""

    stop_order: StopOrder | None
    snapshot: dict[str, Any]

    @property
    def console(self) -> Any: ...


def decide_stop(
    entry: dict[str, Any],
    params: Mapping[str, Any],
    plane: _Plane,
    *,
    runner_started: float | None = None,
) -> Decision:
    """Decide a ``stop`` request that passed validation.

    Args:
        entry: the request's open log entry (``request``, ``author``,
            ``requested_at`` are read from it).
        params: ``{"after_prompt": bool}`` (optional key).
        plane: the plane; the effect sets its ``stop_order`` (an order to
            stop now replaces one to stop after the prompt, not the other way
            round), shows it as the snapshot's ``stop`` and says it.
        runner_started: since when this runner listens, in seconds since the
            epoch (``None``: :data:`LOADED_AT`).

    Returns:
        ``(entry, effect)``; a request asked before ``runner_started`` is
        rejected as stale with no effect.
    """
    started = runner_started if runner_started is not None else LOADED_AT
    asked = _epoch(entry.get("requested_at"))
    if asked is not None and asked < started:
        return refuse(entry, "stale: it was asked before this runner started"), None
    order = StopOrder(
        after_prompt=bool(params.get("after_prompt", False)),
        request=str(entry.get("request") or ""),
        author=entry.get("author"),
        requested_at=entry.get("requested_at"),
    )
    entry["outcome"] = "applied"
    entry["reason"] = None

    def accept() -> None:
        if plane.stop_order is None or not order.after_prompt:
            plane.stop_order = order
        plane.snapshot["stop"] = plane.stop_order.to_dict()
        who = f" by {order.author}" if order.author else ""
        when = "once the current prompt has ended" if order.after_prompt else "now"
        if order.after_prompt and getattr(plane, "wait", None):
            # the prompt cannot end before the window resets: the wait ends now
            when = "now: it is waiting for a usage window (the next run waits for what is left)"
        plane.console.say(f"stop requested{who}: the run ends {when}")

    return entry, accept


def _epoch(stamp: object) -> float | None:
    """An ISO 8601 time (``...Z`` accepted) as seconds since the epoch, or ``None``."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
