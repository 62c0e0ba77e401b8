"""Begin and finish one attempt: its record in the store, its files, its snapshot.

:func:`begin_attempt` starts the attempt's record (``running``), opens its
transcript and event files, takes the workspace's "before" snapshot and builds
the session's request (with the steers queued for it). :func:`finish_attempt`
writes the attempt's outcome to its record and its transcript, and tells the
control plane whether another session of the prompt follows.
"""

from __future__ import annotations

from dataclasses import replace

from ..control import verifying
from ..render.sinks import SessionFiles
from ..state._clock import file_stamp, iso_now
from ..state.records import AttemptStatus
from . import workspace
from .attempt_sink import AttemptSink
from .baseline import prompt_baseline
from .context import RunContext
from .leftovers import clear_after_session
from .loop_state import NEXT_MODES, Attempt, Decided, LoopState, Verdict
from .repair import resume_message, with_steers
from .request import build_request
from .session import SessionOutcome
from .steering import announce_steers, queued_steers
from .stopping import check_stop


def begin_attempt(ctx: RunContext, loop: LoopState, number: int) -> Attempt:
    """Start attempt ``number`` of ``loop.pp`` in ``loop.mode``.

    A fresh session (any mode but ``resume``) counts one more session and
    starts a new resume chain. The first attempt's snapshot becomes the
    prompt's ``changed_paths_only`` baseline.

    Returns:
        The begun :class:`Attempt` (its record is ``running``).

    Raises:
        StorageError: the record or the session files could not be written.
    """
    pp, mode = loop.pp, loop.mode
    if mode != "resume":
        loop.session_number += 1
        loop.budgets.resumes_in_chain = 0
    if loop.before_session is not None:
        loop.before_session(mode)
    clear_after_session(ctx, pp.id)  # the session may write: its leftovers are unbounded
    steers = queued_steers(ctx, pp.id, number)  # sent while the last one was judged
    text = with_steers(loop.text, steers) if steers and mode != "resume" else loop.text
    request = build_request(ctx, pp, text, loop.session_number, loop.env)
    message = request.prompt_text
    if mode == "resume":
        said = loop.resume_text or resume_message(loop.last_failure_message)
        message = with_steers(said, steers)
    record = {
        "attempt": number,
        "mode": mode,
        "status": AttemptStatus.RUNNING,
        "started_at": iso_now(millis=True),
        "provider": pp.provider,
        "model": pp.model,
        "run_id": ctx.run_id,
    }
    key = ctx.store.start_attempt(pp.id, record)
    ctx.position.enter(pp.id, number, mode, key)
    ctx.console.say(f"[{pp.id}] attempt {number} ({mode}) via {pp.provider}")
    files = session_files(ctx, pp.id, number, mode)
    before = workspace.snapshot(loop.repos, carry=ctx.take_carry())
    if not loop.prompt_started:
        loop.prompt_started = True
        loop.vctx = replace(loop.vctx, baseline=prompt_baseline(ctx, before, loop.touched))
    sink = AttemptSink(ctx, pp.id, files)
    announce_steers(sink, files, steers)
    if files is not None:
        files.sent(mode, message)
    return Attempt(number, mode, key, before, steers, request, sink, files, message)


def session_files(ctx: RunContext, prompt_id: str, number: int, mode: str) -> SessionFiles | None:
    """The attempt's transcript (``.log``) and JSONL events under the store's logs
    directory (no events file with ``events_mode: off``); ``None`` without one."""
    logs_dir = ctx.store.logs_dir()
    if logs_dir is None:
        return None
    stem = f"prompt-{prompt_id}-{file_stamp()}-{number}"
    events_mode = ctx.plan.render["events_mode"]
    events_path = None if events_mode == "off" else logs_dir / f"{stem}.events.jsonl"
    files = SessionFiles(logs_dir / f"{stem}.log", events_path, events_mode)
    files.note(f"PROMPT {prompt_id} attempt={number} mode={mode} run={ctx.run_id}")
    return files


def finish_attempt(
    ctx: RunContext,
    loop: LoopState,
    attempt: Attempt,
    session: SessionOutcome,
    verdict: Verdict,
    decided: Decided,
) -> None:
    """Record how ``attempt`` ended: its status, the provider's outcome, the
    verifier report, the decision, usage and cost; close its files; tell the
    control plane the mode of the next session (``None``: none follows).

    Raises:
        StorageError: the record or the session files could not be written.
    """
    pp, result, failure = loop.pp, session.result, verdict.failure
    decision, refusal, status = decided.decision, decided.refusal, decided.status
    ctx.store.finish_attempt(
        pp.id,
        attempt.key,
        {
            "status": status,
            "completed_at": iso_now(millis=True),
            "duration_ms": result.duration_ms,
            "session_id": loop.session_id,
            "provider_outcome": "success" if failure is None else "failure",
            "failure_class": failure.failure_class if failure else None,
            "failure": failure.to_dict() if failure else None,
            "verifier": verdict.report.to_dict(),
            "workspace_changed": verdict.changed,
            "decision": decision.action,
            "reason": decision.reason,
            "delay_ms": decision.delay_ms,
            "usage": result.usage.to_dict(),
            "cost_usd": result.usage.cost_usd,
            "tool_count": session.tool_count,
            **({"budget_failure": refusal.to_dict()} if refusal is not None else {}),
        },
    )
    ctx.console.say(f"[{pp.id}] {status}: {decision.reason}")
    if attempt.files is not None:
        attempt.files.note(
            f"OUTCOME status={status} next={decision.action} reason={decision.reason}"
        )
        attempt.files.close()
    end_attempt(ctx, pp.id, NEXT_MODES.get(decision.action))


def end_attempt(ctx: RunContext, prompt_id: str, next_mode: str | None) -> None:
    """The attempt's outcome is recorded; ``next_mode`` is the next session's mode
    (``retry``, ``resume``, ``repair``, ``agent_owned_repeat``) or ``None``."""
    verifying.done(ctx.store.root)
    if ctx.control is not None:
        ctx.control.boundary(prompt_id, next_mode=next_mode)
        if next_mode is not None:
            check_stop(ctx)  # a stop request ends the run before the next session
