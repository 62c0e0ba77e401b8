"""Ending a run on a control-plane ``stop`` request (``control/stopping.py``).

The plane keeps the accepted order as ``ctx.control.stop_order``; the attempt
loop looks at it at its boundaries, on the runner's thread:

==============================  ==============================================
where                           what a stop order does there
==============================  ==============================================
the session tick (~100 ms)      a stop *now* interrupts the live session
                                (:func:`interrupt_for_stop`)
the session has ended           a stop *now* ends the run (:func:`check_stop`)
an attempt ended, another       a stop *now* ends the run before that session
session of the prompt follows
before the next prompt starts   any stop ends the run (``after_prompt`` too)
==============================  ==============================================

Ending the run is raising :class:`RunStopped`: the prompt in flight is then
recorded ``interrupted`` (``lifecycle.record_interruption``, as for Ctrl-C)
and resumable, and ``finishing.execute_run`` turns it into the run's result
(``interrupted``) instead of letting it escape. A stop *now* that arrives
while the prompt's last session is being verified lets that prompt finish
(commit included) and ends the run before the next one.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any

from ..providers.base import SessionHandle
from ..render.sinks import SessionFiles
from ..state.records import RunStatus, exit_code_for
from .context import RunContext
from .result import RunResult

STOP_SIGNAL = signal.SIGTERM
"""The signal whose exit code a stopped run reports (128 + 15): a requested stop
ends the run as a polite SIGTERM would."""


class RunStopped(KeyboardInterrupt):
    """The run ends on a stop request (a ``KeyboardInterrupt``, so every path that
    cleans up after Ctrl-C cleans up after it too).

    Attributes:
        order: the plane's ``StopOrder``.
        signum: :data:`STOP_SIGNAL` (what the CLI's exit code says, if it escapes).
    """

    def __init__(self, order: Any) -> None:
        super().__init__("stop requested")
        self.order = order
        self.signum = int(STOP_SIGNAL)


def stop_order(ctx: RunContext) -> Any:
    """The accepted stop order of ``ctx``'s run, or ``None`` (no plane, no request)."""
    return getattr(ctx.control, "stop_order", None)


def interrupt_for_stop(ctx: RunContext, handle: SessionHandle) -> None:
    """Session tick: a stop *now* interrupts the live session (the handle's
    interrupt escalates and does nothing a second time)."""
    order = stop_order(ctx)
    if order is not None and not order.after_prompt:
        handle.interrupt()


def settle_requests(ctx: RunContext, prompt_id: str) -> None:
    """Before the next prompt: have the plane decide what arrived while the last
    one, ``prompt_id``, was judged or committed (``ControlPlane.settle_requests``:
    a stop, or a steer meant for it; no plane: nothing)."""
    settle = getattr(ctx.control, "settle_requests", None)
    if settle is not None:
        settle(prompt_id)


def check_stop(
    ctx: RunContext, *, between_prompts: bool = False, files: SessionFiles | None = None
) -> None:
    """Raise :class:`RunStopped` when the run must end here.

    Args:
        between_prompts: no prompt is in flight (before the next one starts):
            an ``after_prompt`` order ends the run too.
        files: the attempt's session files, noted (``STOP``) and closed first:
            the attempt is not finished the usual way.

    Raises:
        RunStopped: a stop order applies here.
    """
    order = stop_order(ctx)
    if order is None or (order.after_prompt and not between_prompts):
        return
    if files is not None:
        with contextlib.suppress(Exception):  # the stop goes on whatever the disk says
            files.note("STOP requested: the session was interrupted")
        with contextlib.suppress(Exception):
            files.close()
    raise RunStopped(order)


def as_stopped(result: RunResult, stop: RunStopped) -> RunResult:
    """``result`` (the run so far, ``interrupted``) as a stop request ended it:
    exit 128 + :data:`STOP_SIGNAL`, and a closing line saying how to resume."""
    who = f" by {stop.order.author}" if getattr(stop.order, "author", None) else ""
    result.exit_code = exit_code_for(RunStatus.INTERRUPTED, signum=stop.signum)
    result.message = f"Run stopped on request{who}; `run --remaining` (or `start`) resumes it."
    return result
