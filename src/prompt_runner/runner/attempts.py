"""The attempt loop of one prompt: session -> verifier -> recovery decision.

Modes: ``run`` (first fresh session), ``retry`` (fresh session after a
retryable failure), ``resume`` (the same provider session after a transport
failure), ``repair`` (fresh session with the unmet items attached),
``agent_owned_repeat`` (fresh session of an agent-owned prompt). Each session is
recorded as one attempt; the verifier runs after every session; the decision
comes from :func:`prompt_runner.runner.recovery.decide`. The loop returns a
:class:`PromptOutcome` value; it never raises for provider or verifier results.

Cost budgets (:mod:`prompt_runner.runner.budget`): each session's reported
cost is counted; before the first session, and instead of any further one
(retry, resume, repair, repeat, steer), a reached budget fails the prompt as
``guardrail_blocked``. A session that passes its contract still completes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..packet.loader import Packet
from ..planning import PromptPlan
from ..providers.base import SessionHandle, SessionRequest, SessionResult
from ..providers.events import Event
from ..providers.failure import FailureEnvelope
from ..render.sinks import SessionFiles, encode_body
from ..state._clock import file_stamp, iso_now
from ..verifier import VerifierReport, VerifyContext
from . import orphans, repo_guard, workspace
from .budget import PROMPT_KEY, RUN_KEY
from .context import RunContext
from .judging import announce_steers, end_attempt, judge, queued_steers
from .recovery import Budgets, Decision, decide
from .repair import repair_prompt, resume_message, steer_message, with_steers
from .session import SessionOutcome, run_session

MAX_LOOP = 1000  # a hard backstop; budgets end the loop long before this
CONTINUING = frozenset({"retry", "resume", "repair", "repeat"})  # decisions that start a session
NEXT_MODES = {  # decision -> the mode of the session it starts
    "retry": "retry",
    "resume": "resume",
    "repair": "repair",
    "repeat": "agent_owned_repeat",
}


@dataclass
class PromptOutcome:
    """How a prompt's attempt loop ended.

    Attributes:
        action: ``complete``, ``fail`` or ``halt``.
        status: the prompt status to record (``completed`` for complete).
        reason: one human line.
        source: ``verifier`` / ``verifier_override`` for completions.
        report: the last verifier report.
        last_error: the last provider failure message.
        attempts: attempts recorded in this invocation.
        sessions: fresh sessions (not resumes) this invocation started.
        touched: per target repo, the paths the sessions changed (relative to
            the work-tree root) -- what the committer may commit.
        workspace_after: the last post-session workspace snapshot; ``None``
            when the last session was committed whole (a clean session on a
            clean tree: every change in the target repos is its work).
        workspace_before: the last session's pre-session snapshot.
        attempt_key: the store key of the last attempt.
        extra: more fields for the prompt's record (a cost budget's failure).
    """

    action: str
    status: str
    reason: str
    source: str | None = None
    report: VerifierReport | None = None
    last_error: str | None = None
    attempts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    sessions: int = 0
    touched: dict[str, set[str]] = field(default_factory=dict)
    workspace_after: workspace.Snapshot | None = None
    workspace_before: workspace.Snapshot | None = None
    attempt_key: int | None = None


def verify_context(ctx: RunContext, pp: PromptPlan) -> VerifyContext:
    repos = ctx.plan.packet.repos
    default = pp.prompt.targets[0] if pp.prompt.targets else None
    return VerifyContext(
        repos=repos,
        default_repo=default,
        env=ctx.env,
        baseline=run_baseline(ctx),
        on_process_start=verify_registrar(ctx, pp.id),
    )


def verify_registrar(ctx: RunContext, prompt_id: str) -> Callable[[int], Any] | None:
    """Register each verify command while it runs, as agents are (``runner/orphans.py``),
    so a later run stops it if this runner dies. ``None`` for runs without a lock."""
    directory: Path | None = ctx.state_view.get("agents_dir")
    if directory is None:
        return None
    return orphans.registrar(
        directory,
        run_id=ctx.run_id,
        prompt_id=prompt_id,
        kind=orphans.VERIFY_COMMAND,
        warn=ctx.console.say,
    )


def run_baseline(ctx: RunContext) -> dict[str, dict[str, tuple[int, int]]]:
    """Per repo name, the paths that had uncommitted changes when the run started,
    with their ``(size, mtime_ns)`` then (from the run-start snapshot)."""
    snap: workspace.Snapshot = ctx.state_view.get("foreign_snapshot") or {}
    return {
        name: {row[1]: (row[2], row[3]) for row in value[1]}
        for name, value in snap.items()
        if value is not None
    }


def prompt_baseline(
    ctx: RunContext, before: workspace.Snapshot, own: dict[str, set[str]]
) -> dict[str, dict[str, tuple[int, int]]]:
    """Per repo name, the paths that had uncommitted changes when the prompt
    started (its first session's "before" snapshot), with their ``(size,
    mtime_ns)`` then: ``changed_paths_only`` judges only what the prompt changed
    since, never leftovers of earlier prompts (``--no-commit``, a no-op
    committer, ``--keep-going``, a rejected commit) or the user's. ``own``:
    paths that are this prompt's own work already (adopted from a dead runner),
    which stay counted. Repos the snapshot lacks keep the run-start baseline."""
    baseline = run_baseline(ctx)
    for name, value in before.items():
        if value is not None:
            mine = own.get(name, set())
            baseline[name] = {row[1]: (row[2], row[3]) for row in value[1] if row[1] not in mine}
    return baseline


class AttemptSink:
    """Where one attempt's events go: console, session files, control plane, callbacks.

    Each event is JSON-encoded once; the transcript, the JSONL log and the
    control stream share the encoding. :meth:`many` takes a provider read's
    worth of events in one call per layer.
    """

    def __init__(self, ctx: RunContext, prompt_id: str, files: SessionFiles | None) -> None:
        self.ctx = ctx
        self.prompt_id = prompt_id
        self.files = files
        self.encode = files is not None or ctx.control is not None

    def __call__(self, event: Event) -> None:
        ctx = self.ctx
        encoded = encode_body(event) if self.encode else None
        ctx.console.event(self.prompt_id, event)
        if self.files is not None:
            self.files.event(event, encoded)
        if ctx.control is not None:
            ctx.control.on_event(self.prompt_id, event, encoded)
        if ctx.callbacks.on_event is not None:
            ctx.notify("on_event", self.prompt_id, event.to_dict())

    def many(self, events: list[Event]) -> None:
        ctx = self.ctx
        encoded = [encode_body(e) for e in events] if self.encode else None
        ctx.console.events(self.prompt_id, events)
        if self.files is not None and encoded is not None:
            self.files.events(events, encoded)
        if ctx.control is not None and encoded is not None:
            ctx.control.on_events(self.prompt_id, events, encoded)
        if ctx.callbacks.on_event is not None:
            for event in events:
                ctx.notify("on_event", self.prompt_id, event.to_dict())


def agent_registrar(
    ctx: RunContext, prompt_id: str
) -> Callable[[SessionHandle], Callable[[], None] | None] | None:
    """Register each started agent process while it runs (see ``runner/orphans.py``),
    so a later run can stop it if this runner dies. ``None`` for runs without a lock."""
    directory: Path | None = ctx.state_view.get("agents_dir")
    if directory is None:
        return None

    def on_start(handle: SessionHandle) -> Callable[[], None] | None:
        pid = getattr(handle, "pid", None)
        if not isinstance(pid, int):
            return None  # an in-process session (simulated): nothing can outlive us
        try:
            path = orphans.register(directory, pid, run_id=ctx.run_id, prompt_id=prompt_id)
        except OSError as exc:
            ctx.console.say(f"warning: could not register agent pid {pid}: {exc}")
            return None
        return lambda: orphans.unregister(path)

    return on_start


def target_repos(ctx: RunContext, pp: PromptPlan) -> dict[str, Path]:
    repos = ctx.plan.packet.repos
    return {name: repos[name] for name in pp.prompt.targets if name in repos}


def build_request(
    ctx: RunContext, pp: PromptPlan, text: str, session_number: int, env: dict[str, str]
) -> SessionRequest:
    """The provider request of one session of ``pp``.

    A CLI that enforces ``max_cost_usd`` itself (Claude's ``--max-budget-usd``)
    gets what is left of the prompt's (and the run's) budget, not the whole.
    """
    request = request_for(ctx.plan.packet, pp, text, session_number, env)
    cap = ctx.cost.session_cap(pp)
    if cap is not None:
        options = {**request.provider_options, PROMPT_KEY: cap}
        request = replace(request, provider_options=options)
    return request


def request_for(
    packet: Packet,
    pp: PromptPlan,
    text: str,
    session_number: int = 1,
    env: dict[str, str] | None = None,
) -> SessionRequest:
    """A :class:`SessionRequest` for ``pp`` (also used to validate options at plan time)."""
    repos = packet.repos
    targets = pp.prompt.targets
    cwd = pp.cwd or packet.root
    return SessionRequest(
        prompt_id=pp.id,
        prompt_text=text,
        cwd=cwd,
        provider=pp.provider,
        model=pp.model,
        reasoning_effort=pp.reasoning_effort,
        permission_mode=pp.permission_mode,
        allowed_tools=pp.allowed_tools,
        system_prompt=pp.system_prompt,
        append_system_prompt=pp.append_system_prompt,
        max_turns=pp.max_turns,
        extra_dirs=tuple(repos[t] for t in targets[1:] if t in repos),
        repos=repos,
        env=dict(env or {}),
        provider_options=pp.provider_options,
        bounds=pp.bounds,
        session_number=session_number,
        simulate=pp.prompt.front.simulate,
        cli_confirmation=pp.cli_confirmation,
    )


def attempt_status(decision: Decision, failed_provider: bool, report: VerifierReport) -> str:
    if decision.action == "complete":
        return "completed"
    if report.fault is not None:
        return "verifier_fault"
    if failed_provider:
        return "failed"
    if decision.action == "repeat" or decision.status == "agent_owned_incomplete":
        return "incomplete"
    return "verification_failed"


def run_prompt(
    ctx: RunContext,
    pp: PromptPlan,
    *,
    initial_text: str | None = None,
    initial_mode: str = "run",
    extra_env: dict[str, str] | None = None,
    session_offset: int = 0,
    body: str | None = None,
    before_session: Callable[[str], None] | None = None,
    controlled: bool = False,
) -> PromptOutcome:
    """Run ``pp``'s attempt loop until the policy completes, fails or halts it.

    Args:
        ctx: the run context.
        pp: the resolved prompt.
        initial_text: the first session's prompt text (default: the body).
        initial_mode: the first attempt's mode (``run`` or ``repair``).
        extra_env: extra provider environment (agent control variables).
        session_offset: fresh sessions already used by this prompt in this
            run (agent-control iterations), so simulate steps keep their order.
        body: the text retries and repairs build on (default: the prompt body;
            agent control passes the body with its command block).
        before_session: called with the mode before every session (agent
            control discards a directive written before a failed verify).
        controlled: an agent-controlled iteration: a failed provider turn is
            never completed by a passing contract (no ``verifier_override``).
    """
    prompt = pp.prompt
    provider = ctx.provider(pp.provider)
    agent_owned = ctx.plan.execution.completion == "agent_owned"
    vctx = verify_context(ctx, pp)
    if agent_owned:
        vctx = VerifyContext(
            repos=vctx.repos,
            default_repo=vctx.default_repo,
            env=vctx.env,
            structural_only=True,
            baseline=vctx.baseline,
        )
    repos = target_repos(ctx, pp)
    budgets = Budgets()
    # Work an interrupted earlier run of this prompt left uncommitted is its own.
    adopted = (ctx.state_view.get("adopted") or {}).get(pp.id, {})
    touched: dict[str, set[str]] = {repo: set(paths) for repo, paths in adopted.items()}
    mode = initial_mode
    base = body if body is not None else prompt.body
    text = initial_text if initial_text is not None else base
    session_number = session_offset
    session_id: str | None = None
    last_failure_message: str | None = None
    report: VerifierReport | None = None
    env = dict(extra_env or {})
    logs_dir = ctx.store.logs_dir()
    prompt_started = False  # the first session's snapshot is the prompt's baseline

    for attempt_no in range(1, MAX_LOOP + 1):
        if attempt_no == 1 and (refusal := ctx.cost.refusal(pp)) is not None:
            return budget_refused(ctx, pp, refusal, ran=session_offset > 0)
        resuming = mode == "resume"
        if not resuming:
            session_number += 1
            budgets.resumes_in_chain = 0
        if before_session is not None:
            before_session(mode)
        steers = queued_steers(ctx, prompt.id, attempt_no)  # sent while it was judged
        session_text = with_steers(text, steers) if steers and not resuming else text
        request = build_request(ctx, pp, session_text, session_number, env)
        started_at = iso_now(millis=True)
        key = ctx.store.start_attempt(
            prompt.id,
            {
                "attempt": attempt_no,
                "mode": mode,
                "status": "running",
                "started_at": started_at,
                "provider": pp.provider,
                "model": pp.model,
                "run_id": ctx.run_id,
            },
        )
        ctx.state_view.update(
            {"prompt_id": prompt.id, "attempt": attempt_no, "mode": mode, "attempt_key": key}
        )
        ctx.console.say(f"[{prompt.id}] attempt {attempt_no} ({mode}) via {pp.provider}")
        files = None
        if logs_dir is not None:
            stem = f"prompt-{prompt.id}-{file_stamp()}-{attempt_no}"
            events_path = (
                None
                if ctx.plan.render["events_mode"] == "off"
                else logs_dir / f"{stem}.events.jsonl"
            )
            files = SessionFiles(
                logs_dir / f"{stem}.log", events_path, ctx.plan.render["events_mode"]
            )
            files.note(f"PROMPT {prompt.id} attempt={attempt_no} mode={mode} run={ctx.run_id}")
        before = workspace.snapshot(repos, carry=ctx.take_carry())
        if not prompt_started:
            prompt_started = True
            vctx = replace(vctx, baseline=prompt_baseline(ctx, before, touched))

        sink = AttemptSink(ctx, prompt.id, files)
        announce_steers(sink, files, steers)

        def tick(handle: SessionHandle) -> None:
            ctx.console.flush()  # the provider is silent: show what it said so far
            flush_summary = getattr(ctx.store, "flush_summary_due", None)
            if flush_summary is not None:
                flush_summary()  # a status change waiting for state.json
            if ctx.control is not None:
                ctx.control.tick(prompt.id, handle)

        outcome = run_session(
            provider,
            request,
            sink,
            resume_session_id=session_id if resuming else None,
            resume_message=(
                with_steers(resume_message(last_failure_message), steers) if resuming else ""
            ),
            tick=tick,
            on_start=agent_registrar(ctx, pp.id),
        )
        outcome = deliver_steers(ctx, pp, provider, request, sink, tick, outcome, files)
        result = outcome.result
        session_id = outcome.session_id or session_id
        report = judge(ctx, pp, vctx, attempt=attempt_no)
        report = repo_guard.branch_verdict(ctx, prompt.id, report)
        failure = result.failure
        if failure is None and not result.ok:
            from ..providers.failure import envelope_for

            failure = envelope_for(
                "user_cancelled" if result.interrupted else "unknown",
                "the session was interrupted" if result.interrupted else "the session failed",
            )
        # A clean session on a clean tree is committed whole: the commit itself
        # says what changed (engine.commit_prompt), so git is not asked twice.
        whole = (
            failure is None
            and report.passed
            and report.fault is None
            and not touched
            and not controlled
            and not agent_owned
            and repo_guard.commits_whole(ctx, repos)
            and workspace.all_clean(before)
        )
        changed: bool | None
        if whole:
            after, changed = None, None
        else:
            after = workspace.snapshot(repos)
            changed = workspace.changed(before, after, file_events=outcome.file_events)
            for repo_name, paths in workspace.changed_paths(before, after).items():
                touched.setdefault(repo_name, set()).update(paths)
            report = repo_guard.submodule_verdict(ctx, prompt.id, report, after, touched)
        ctx.state_view.pop("attempt_key", None)  # the session ended; nothing to interrupt
        decision = decide(
            config=pp.recovery,
            failure=failure,
            verifier_passed=report.passed and not (controlled and failure is not None),
            verifier_fault=report.fault is not None,
            workspace_changed=bool(changed),
            budgets=budgets,
            agent_owned=agent_owned,
            max_repeats=ctx.plan.agent_control.max_iterations,
            rand=ctx.rand,
        )
        warning = ctx.cost.add(pp, result.usage.cost_usd)
        if warning is not None:
            ctx.console.say(f"[{prompt.id}] {warning}")
        refusal = ctx.cost.refusal(pp) if decision.action in CONTINUING else None
        if refusal is not None:
            decision = Decision("fail", terminal_reason(refusal), status="failed")
        if failure is not None:
            last_failure_message = failure.message
        status = attempt_status(decision, failure is not None, report)
        ctx.store.finish_attempt(
            prompt.id,
            key,
            {
                "status": status,
                "completed_at": iso_now(millis=True),
                "duration_ms": result.duration_ms,
                "session_id": session_id,
                "provider_outcome": "success" if failure is None else "failure",
                "failure_class": failure.failure_class if failure else None,
                "failure": failure.to_dict() if failure else None,
                "verifier": report.to_dict(),
                "workspace_changed": changed,
                "decision": decision.action,
                "reason": decision.reason,
                "delay_ms": decision.delay_ms,
                "usage": result.usage.to_dict(),
                "cost_usd": result.usage.cost_usd,
                "tool_count": outcome.tool_count,
                **({"budget_failure": refusal.to_dict()} if refusal is not None else {}),
            },
        )
        ctx.console.say(f"[{prompt.id}] {status}: {decision.reason}")
        if files is not None:
            files.note(f"OUTCOME status={status} next={decision.action} reason={decision.reason}")
            files.close()
        end_attempt(ctx, prompt.id, NEXT_MODES.get(decision.action))

        if decision.action in ("complete", "fail", "halt"):
            return PromptOutcome(
                action=decision.action,
                status=decision.status or "completed",
                reason=decision.reason,
                source=decision.source,
                report=report,
                last_error=last_failure_message,
                attempts=attempt_no,
                sessions=session_number - session_offset,
                touched=touched,
                workspace_after=after,
                workspace_before=before,
                attempt_key=key,
                extra=budget_fields(ctx, pp, refusal) if refusal is not None else {},
            )
        if decision.action == "resume":
            budgets.resumes_in_chain += 1
            mode = "resume"
            continue
        if decision.action == "retry":
            assert failure is not None
            budgets.retries[failure.failure_class] += 1
            if decision.delay_ms:
                ctx.console.say(f"[{prompt.id}] waiting {decision.delay_ms} ms before retrying")
                flush_summary = getattr(ctx.store, "flush_summary", None)
                if flush_summary is not None:
                    flush_summary()  # nothing waits for state.json through the sleep
                ctx.sleep(decision.delay_ms / 1000.0)
            mode = "retry"
            text = base
            continue
        if decision.action == "repair":
            budgets.repairs += 1
            mode = "repair"
            failures = [item.to_dict() for item in report.failures()]
            text = repair_prompt(base, last_error=last_failure_message, failures=failures)
            continue
        if decision.action == "repeat":
            budgets.repeats += 1
            mode = "agent_owned_repeat"
            failures = [item.to_dict() for item in report.failures()]
            text = agent_owned_prompt(base, session_number + 1, failures)
            continue
    return PromptOutcome("fail", "failed", "the attempt loop hit its hard backstop")


def terminal_reason(refusal: FailureEnvelope) -> str:
    """A budget refusal's reason, worded like every terminal failure's."""
    return f"{refusal.failure_class} is terminal: {refusal.message}; no further session starts"


def budget_fields(ctx: RunContext, pp: PromptPlan, refusal: FailureEnvelope) -> dict[str, Any]:
    """The prompt-record fields of a cost-budget failure; a run budget also stops the run."""
    if refusal.provider_code == RUN_KEY:
        ctx.cost.run_stop = refusal
    return ctx.cost.record_fields(pp.id, refusal)


def budget_refused(
    ctx: RunContext, pp: PromptPlan, refusal: FailureEnvelope, *, ran: bool
) -> PromptOutcome:
    """The prompt fails before its next fresh session: a cost budget is reached.

    Args:
        ran: earlier sessions of this execution ran (agent-control iterations).
    """
    extra = budget_fields(ctx, pp, refusal)
    if not ran:
        extra["session_ran"] = False
    return PromptOutcome("fail", "failed", terminal_reason(refusal), extra=extra)


def deliver_steers(
    ctx: RunContext,
    pp: PromptPlan,
    provider: Any,
    request: SessionRequest,
    sink: Callable[[Event], None],
    tick: Callable[[SessionHandle], None],
    outcome: SessionOutcome,
    files: SessionFiles | None,
) -> SessionOutcome:
    """Deliver steers the control plane accepted during this session (SPEC 5).

    For each steer: resume the same provider session with the steer as the
    next message, inside the same attempt -- the interrupted result that made
    room for it is not a failure, and no retry/repair budget is touched. The
    returned outcome is the last session's, with file and tool counts and
    the reported cost summed. A reached cost budget drops the steer.
    """
    take = getattr(ctx.control, "take_steer", None)
    if take is None:
        return outcome
    file_events, tool_count = outcome.file_events, outcome.tool_count
    session_id = outcome.session_id
    cost = outcome.result.usage.cost_usd
    while (steer := take(pp.id)) is not None:
        if session_id is None:
            ctx.console.say(f"[{pp.id}] warning: the session has no id to resume; steer dropped")
            break
        refusal = ctx.cost.refusal(pp, pending=cost or 0.0)
        if refusal is not None:
            ctx.console.say(f"[{pp.id}] warning: {refusal.message}; steer dropped")
            break
        ctx.console.say(f"[{pp.id}] Resuming the provider thread with the steer")
        if files is not None:
            files.note(f"STEER action=resume provider={pp.provider}")
        sink(Event("steer", {"text": steer.text, "delivery": "interrupt_and_resume"}))
        outcome = run_session(
            provider,
            request,
            sink,
            resume_session_id=session_id,
            resume_message=steer_message(steer.text),
            tick=tick,
            on_start=agent_registrar(ctx, pp.id),
        )
        session_id = outcome.session_id or session_id
        file_events += outcome.file_events
        tool_count += outcome.tool_count
        more = outcome.result.usage.cost_usd
        cost = more if cost is None else cost + (more or 0.0)
    return SessionOutcome(with_cost(outcome.result, cost), session_id, file_events, tool_count)


def with_cost(result: SessionResult, cost: float | None) -> SessionResult:
    """``result`` reporting ``cost`` (a steer chain's sessions summed)."""
    if cost == result.usage.cost_usd:
        return result
    return replace(result, usage=replace(result.usage, cost_usd=cost))


def agent_owned_prompt(body: str, session: int, failures: list[dict[str, Any]]) -> str:
    """The prompt of an agent-owned fresh session, with the failed structural checks."""
    from .repair import render_failures

    return "\n".join(
        [
            body.rstrip(),
            "",
            f"## Agent-Owned Completion — Fresh Session {session}",
            "",
            "A previous session ended but the structural evidence of completion is missing. "
            "Continue the task; these checks still fail:",
            "",
            render_failures(failures),
            "",
        ]
    )
