"""Running the opened run under its control plane, and recording how it ended.

:func:`execute_run` starts the control plane, runs the executor (the prompts
in order, or one repair), and whatever happens calls :func:`finish_run`:
``state.json`` is rewritten, the control snapshot gets the run's end, and last
``runs/current.json`` the end status and ``finished_at``. A run cut short
(Ctrl-C, SIGTERM, a crash) is ``interrupted`` and the prompt it was in is
recorded so (``lifecycle.record_interruption``); so is a run a control-plane
``stop`` ended (``runner/stopping.py``), which returns that result instead of
raising.
"""

from __future__ import annotations

from collections.abc import Callable

from ..control.run_plane import finish_plane, refuse_left, start_plane
from ..errors import StorageError
from ..state._clock import iso_now
from ..state.records import PromptStatus, RunStatus, exit_code_for
from .context import RunContext
from .lifecycle import record_interruption
from .result import RunResult
from .stopping import RunStopped, as_stopped

Executor = Callable[[RunContext], RunResult]
"""What runs inside an opened run: ``engine.run_plan`` or a repair's executor."""


def execute_run(ctx: RunContext, executor: Executor) -> RunResult:
    """Run ``executor`` on ``ctx`` under the control plane, then finish the run.

    Says the result's closing line and calls ``on_run_completed`` with
    ``result.to_dict()``.

    Raises:
        BaseException: what ``executor`` raised, after the run was finished; a
            ``KeyboardInterrupt`` carries the run so far as ``.run_result``
            (:func:`interrupted_result`, for ``run --json``).
        StorageError: the end could not be recorded (only when nothing failed before).
    """
    ctx.control = start_plane(ctx)
    status: str = RunStatus.INTERRUPTED
    failed = False
    try:
        result = executor(ctx)
        status = result.status
    except RunStopped as stop:  # a control-plane stop: a result, not an error
        record_interruption(ctx)
        result = as_stopped(interrupted_result(ctx), stop)
        status = result.status
    except BaseException as exc:
        failed = True
        record_interruption(ctx)
        if isinstance(exc, KeyboardInterrupt):
            # What the run did before the signal, for `run --json`'s one document.
            exc.run_result = interrupted_result(ctx)  # type: ignore[attr-defined]
        raise
    finally:
        finish_run(ctx, status, failed=failed)
    ctx.console.say(result.message)
    ctx.notify("on_run_completed", result.to_dict())
    return result


def finish_run(ctx: RunContext, status: str, *, failed: bool) -> None:
    """Record the run's end: the console's gathered lines are written, then
    ``state.json`` (a waiting summary), the control snapshot ``status`` (its
    events made durable), and last ``runs/current.json`` ``status`` and
    ``finished_at``; last of all, the requests still pending are refused
    (``ControlPlane.refuse_left``).

    ``runs/current.json`` is the record of truth every reader of the run's end
    goes by (``status``, ``watch``, the dashboard, ``run --remaining``), so it is
    written last: when it says the run ended, ``state.json`` and the snapshot
    say so too. Until then the runner still holds ``run.pid``, so a reader that
    sees the snapshot's end first sees a live run finishing; a kill between the
    two leaves a dead run recorded ``running`` (read ``unknown``), which
    ``run --remaining`` closes (``locks.close_dead_run``) -- never an ended run
    whose snapshot still says ``running``.

    Raises:
        StorageError: ``state.json`` or ``current.json`` could not be written
            and ``failed`` is False (else the first fault -- a full disk fails
            every write -- is the one reported). When ``state.json`` could not
            be, ``current.json`` does not record the end (nor, raised, the
            snapshot: the control plane is left unfinished); when
            ``current.json`` could not be, the snapshot already records it.
    """
    ctx.console.flush()  # event lines still gathered when a session was cut short
    try:
        _record_end(ctx, status, failed=failed)
    finally:
        # Only now, with the end visible to senders and run.pid still held: a
        # request written before it is in this sweep; one written after it is
        # decided by its sender (control/leftovers.py). Never raises.
        refuse_left(ctx.control)


def _record_end(ctx: RunContext, status: str, *, failed: bool) -> None:
    """``state.json``, the snapshot, then ``runs/current.json`` (see :func:`finish_run`)."""
    try:
        # state.json first: a kill before current.json is written must not
        # leave a run that reads ended with its summary behind the prompt logs
        ctx.store.flush_summary()
    except StorageError:
        if not failed:
            raise
        finish_plane(ctx.control, status)
        return
    finish_plane(ctx.control, status)  # never raises
    try:
        current = dict(ctx.store.read_current_run() or {})
        current.update({"status": status, "finished_at": iso_now()})
        ctx.store.write_current_run(current)
    except StorageError:
        if not failed:
            raise


def interrupted_result(ctx: RunContext) -> RunResult:
    """The run so far, after Ctrl-C or SIGTERM: each selected prompt's recorded
    status as a :class:`PromptStatus`, as a run that ends on its own gives them
    (``interrupted`` for the one that was running; not yet started ones left
    out; a word no PromptStatus has is kept as written). Never raises: an
    unreadable record is left out."""
    prompts: dict[str, str] = {}
    known = {status.value: status for status in PromptStatus}
    for prompt_id in ctx.plan.selected:
        try:
            recorded = ctx.store.load_prompt(prompt_id).get("status")
        except Exception:
            continue
        if isinstance(recorded, str) and recorded != PromptStatus.PENDING:
            prompts[prompt_id] = known.get(recorded, recorded)
    ended = (PromptStatus.COMPLETED, PromptStatus.INTERRUPTED)
    return RunResult(
        ctx.run_id,
        RunStatus.INTERRUPTED,
        exit_code_for(RunStatus.INTERRUPTED),
        prompts=prompts,
        failures=[i for i, v in prompts.items() if v not in ended],
        message="Run interrupted.",
    )
