"""Run a resolved plan: lock, run identity, preflight, prompts in order, record.

The pipeline of one ``run``::

    acquire run.pid -> open or resume the run (fingerprint, fence, journal)
    -> preflight (repos exist and are git) -> pre-flight verification
    -> for each selected prompt: dependencies, attempt loop, commit, record
    -> finish the run (journal, current.json) -> release run.pid

Records of a prompt: ``progress.log`` gets exactly one terminal line per
execution (``completed`` only after the verifier passed *and* the commit
succeeded); ``state.json`` gets status, source and attempts. A verifier fault
halts the run without marking the prompt failed. A prompt failed by the run's
cost budget (``max_run_cost_usd``) stops the run whatever the failure policy.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..committer import GitCommitter
from ..errors import PacketChangedError, StateError, UserError
from ..packet.loader import Packet
from ..planning import Plan, PromptPlan
from ..planning.agent_owned import validate_agent_owned
from ..state._clock import iso_now
from ..state.prompt_records import ABSENT, PromptStart
from ..state.records import RunStatus, exit_code_for, run_status_for_prompt
from . import agent_control, agent_sequence, repo_guard, workspace
from .attempts import run_prompt
from .baseline import verify_context
from .completion import contract_paths, record_outcome
from .context import RunContext
from .request import target_repos


@dataclass
class RunResult:
    """The outcome of :func:`run_plan`.

    Attributes:
        run_id: the run generation id.
        status: ``completed``, ``failed``, ``halted`` or ``nothing``.
        exit_code: 0 success, 1 a prompt failed, 3 halted by a verifier fault.
        prompts: prompt id -> final status for each selected prompt handled.
        failures: ids that failed (including blocked ones).
        message: one closing line.
    """

    run_id: str | None
    status: str
    exit_code: int
    prompts: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "exit_code": self.exit_code,
            "prompts": dict(self.prompts),
            "failures": list(self.failures),
            "message": self.message,
        }


def fingerprint(plan: Plan) -> str:
    """sha256 of the packet content a run depends on (see :func:`packet_fingerprint`)."""
    return packet_fingerprint(plan.packet)


def packet_fingerprint(packet: Packet) -> str:
    """sha256 of the packet content a run depends on (prompts, edges, contracts, agent control)."""
    doc = {
        "prompts": [
            {
                "id": p.id,
                "body": p.body,
                "targets": list(p.targets),
                "depends_on": list(p.front.depends_on),
                "verify": p.contract.to_raw(),
            }
            for p in packet.prompts
        ],
        "agent_control": packet.manifest.agent_control.model_dump(),
        "execution": packet.manifest.execution.model_dump(),
    }
    raw = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def open_run(plan: Plan, store: Any, console: Any) -> tuple[str, bool]:
    """Decide the run id: resume an unfinished run or start a new generation.

    ``--new-run`` over an unfinished run appends ``run_superseded`` to the old
    run's journal, naming its successor (``new_run_id``,
    ``new_packet_fingerprint``, ``reason: "explicit_new_run"``), as the
    reference does.

    Returns:
        ``(run_id, resumed)``.

    Raises:
        PacketChangedError: an unfinished run's packet changed (fails closed).
        UserError: resuming would widen the unfinished run's selection fence.
    """
    validate_agent_owned(plan.packet)  # before the run is recorded
    current = store.read_current_run()
    fp = fingerprint(plan)
    selected = list(plan.selected)
    if current and current.get("status") != "completed" and current.get("run_id"):
        old_id = str(current["run_id"])
        if plan.options.new_run:
            new_id = new_run_id()
            # The reference's record: the old journal names its successor.
            superseded = {
                "reason": "explicit_new_run",
                "new_run_id": new_id,
                "new_packet_fingerprint": fp,
                "by": "new_run",
                "at": iso_now(),
            }
            try:
                journal = store.journal(old_id)
                try:
                    journal.append("run_superseded", superseded)
                finally:
                    journal.close()
            except StateError as exc:  # a corrupt old journal must not block a new run
                console.say(f"warning: could not record the supersession: {exc}")
            console.say(f"Superseding unfinished run {old_id} with {new_id} (--new-run).")
            return new_id, False
        else:
            if current.get("fingerprint") not in (None, fp):
                raise PacketChangedError(
                    f"the packet changed since unfinished run {old_id} started",
                    file=plan.packet.root,
                    fix="pass --new-run to start a new run generation (completed prompts stay "
                    "completed), or restore the packet",
                )
            fence = list(current.get("targets") or [])
            outside = [i for i in selected if fence and i not in fence]
            if outside:
                raise UserError(
                    f"resuming unfinished run {old_id} would widen its selection to "
                    f"{', '.join(outside)} (its fence is {', '.join(fence)})",
                    file=plan.packet.root,
                    fix="select prompts inside the fence, or pass --new-run",
                )
            return old_id, True
    return new_run_id(), False


def run_plan(ctx: RunContext) -> RunResult:
    """Execute the selected prompts of ``ctx.plan`` (the lock is held by the caller)."""
    plan = ctx.plan
    store = ctx.store
    journal = store.journal(ctx.run_id)
    result = RunResult(ctx.run_id, RunStatus.COMPLETED, exit_code_for(RunStatus.COMPLETED))
    try:
        completed_now: set[str] = set()
        failed_now: set[str] = set()
        progress = {k: v.status for k, v in store.read_progress().items()}
        pin_branches(ctx)
        if agent_sequence.closed_before_start(ctx, result, journal):
            return result
        preflight_done = preflight_verify(ctx, progress)
        for prompt_id in plan.selected:
            pp = plan.prompt(prompt_id)
            if prompt_id in preflight_done or prompt_id in ctx.skip:
                completed_now.add(prompt_id)
                result.prompts[prompt_id] = "completed"
                continue
            blockers = [
                dep
                for dep in pp.prompt.front.depends_on
                if dep in failed_now
                or (dep not in completed_now and progress.get(dep) != "completed")
            ]
            if blockers:
                ctx.console.say(
                    f"[{prompt_id}] blocked by dependency {', '.join(blockers)}; not started"
                )
                store.update_prompt(
                    prompt_id,
                    {
                        "status": "blocked_by_dependency",
                        "blocked_by": blockers,
                        "run_id": ctx.run_id,
                    },
                )
                failed_now.add(prompt_id)
                result.prompts[prompt_id] = "blocked_by_dependency"
                result.failures.append(prompt_id)
                if plan.failure_policy == "stop":
                    break
                continue
            status = execute_prompt(ctx, pp, journal)
            if agent_sequence.ends_sequence(ctx, prompt_id, status, result):
                break
            result.prompts[prompt_id] = status
            if status == "completed":
                completed_now.add(prompt_id)
                continue
            if status == "verifier_fault":
                result.status = RunStatus.HALTED
                result.exit_code = exit_code_for(result.status)
                result.failures.append(prompt_id)
                result.message = (
                    f"Run halted: the verifier could not judge prompt {prompt_id}; "
                    "fix the verifier command and run again."
                )
                break
            if status == "commit_failed":
                halt_for_commit(ctx, prompt_id, result, journal)
                break
            failed_now.add(prompt_id)
            result.failures.append(prompt_id)
            if ctx.cost.run_stop is not None:
                stop_for_run_budget(ctx, prompt_id, result, journal)
                break
            if plan.failure_policy == "stop":
                break
        if result.failures and result.status == RunStatus.COMPLETED:
            result.status = RunStatus.FAILED
            result.exit_code = exit_code_for(result.status)
            if len(result.failures) > 1 or plan.failure_policy != "stop":
                result.message = (
                    f"{len(result.failures)} selected prompt(s) failed: "
                    f"{', '.join(result.failures)}"
                )
            else:
                result.message = f"Prompt {result.failures[0]} failed."
        if not result.message:
            result.message = f"Run completed: {len(result.prompts)} prompt(s) completed."
        journal.append(
            "run_finished",
            {"status": result.status, "failures": result.failures, "prompts": result.prompts},
        )
        return result
    finally:
        journal.close()


def stop_for_run_budget(ctx: RunContext, prompt_id: str, result: RunResult, journal: Any) -> None:
    """The run's cost budget failed ``prompt_id``: the run stops, naming the budget."""
    stop = ctx.cost.run_stop
    assert stop is not None
    rest = list(ctx.plan.selected)
    rest = [i for i in rest[rest.index(prompt_id) + 1 :] if i not in result.prompts]
    result.status = RunStatus.FAILED
    result.exit_code = exit_code_for(result.status)
    result.message = f"Run stopped: {stop.message}; prompt {prompt_id} failed"
    if rest:
        result.message += f" and {', '.join(rest)} did not start"
    result.message += ". Raise max_run_cost_usd (--max-run-cost-usd) and run --remaining to go on."
    journal.append(
        "run_budget_spent",
        {"prompt_id": prompt_id, "message": stop.message, "not_started": rest},
    )


def pin_branches(ctx: RunContext) -> None:
    """As the run starts, pin each target repo's branch and HEAD (git committer
    only; see ``repo_guard``) and warn about a detached HEAD."""
    if not isinstance(ctx.committer, GitCommitter):
        return
    from .lifecycle import selected_target_repos

    pins = repo_guard.BranchPins.start(ctx.committer, selected_target_repos(ctx.plan))
    ctx.state_view["pins"] = pins
    for warning in pins.detached():
        ctx.console.say(f"warning: {warning}")


def halt_for_commit(ctx: RunContext, prompt_id: str, result: RunResult, journal: Any) -> None:
    """A verified prompt's commit failed (a hook rejected it, an index lock is
    held, git failed): an infrastructure fault -- the run halts with exit 3,
    naming the cause (a hook's own output included), whatever the failure policy."""
    error = ctx.store.load_prompt(prompt_id).get("commit_error") or "git failed"
    result.status = RunStatus.HALTED
    result.exit_code = exit_code_for(result.status)
    result.failures.append(prompt_id)
    result.message = (
        f"Run halted: prompt {prompt_id} passed its contract but its commit failed: {error}\n"
        "Fix that, then run it again (`run --remaining`)."
    )
    journal.append("run_halted", {"prompt_id": prompt_id, "reason": "commit_failed"})


def execute_prompt(ctx: RunContext, pp: PromptPlan, journal: Any) -> str:
    """Run one prompt's attempt loop, commit, and record. Returns its final status."""
    store = ctx.store
    prompt = pp.prompt
    ctx.cost.start_prompt(prompt.id)
    ctx.notify("on_prompt_started", prompt.id)
    ctx.console.say(f"▶ {prompt.id} {prompt.name}")
    running = PromptStart(
        name=prompt.name,
        run_id=ctx.run_id,
        started_at=iso_now(),
        dirty_at_start=dirty_at_start(ctx, pp) if ctx.committer.name == "git" else ABSENT,
    )
    store.update_prompt(prompt.id, running.to_dict())
    if ctx.plan.agent_control.enabled:
        return agent_control.run_controlled(ctx, pp, journal)
    outcome = run_prompt(ctx, pp)
    try:
        return record_outcome(ctx, pp, outcome, journal)
    finally:
        flush_store(store)


DIRTY_AT_START_CAP = 5000
"""Most dirty paths recorded when a prompt starts (beyond it, nothing is recorded)."""


def dirty_at_start(ctx: RunContext, pp: PromptPlan) -> dict[str, list[str]] | None:
    """The target repos' dirty paths as the prompt starts, recorded with its
    "running" status: if this runner dies before the commit, the next run
    tells the prompt's own leftovers from the user's (lifecycle.adopt_interrupted_work).

    The snapshot is handed on as the first session's "before" (no second git call).
    """
    repos = target_repos(ctx, pp)
    snap = workspace.snapshot(repos, carry=ctx.take_carry())
    ctx.workspace_carry = workspace.Carry.now(snap, repos)
    dirty = {name: sorted(paths) for name, paths in workspace.dirty_paths(snap).items()}
    if sum(len(paths) for paths in dirty.values()) > DIRTY_AT_START_CAP:
        return None
    return dirty


def flush_store(store: Any) -> None:
    """Make group-committed store writes durable (stores without ``flush`` skip)."""
    flush = getattr(store, "flush", None)
    if callable(flush):
        flush()


def preflight_verify(ctx: RunContext, progress: dict[str, str]) -> set[str]:
    """SPEC 3.3: record already-satisfied prompts completed without a session."""
    plan = ctx.plan
    options = plan.options
    enabled = options.verify_first
    if enabled is None:
        enabled = options.remaining and not options.ids
    if not enabled or plan.execution.completion == "agent_owned":
        return set()
    if plan.agent_control.enabled:  # the agent owns movement; completion_verify pre-checks
        return set()
    from .. import git
    from ..control import verifying
    from .judging import judge

    done: set[str] = set()
    for prompt_id in plan.selected:
        verifying.done(ctx.store.root)  # the previous prompt's verdict is recorded
        pp = plan.prompt(prompt_id)
        contract = pp.prompt.contract
        if ctx.store.root is not None:
            from ..control.amendments import effective_contract

            contract = effective_contract(ctx.store.root, pp.prompt, ctx.run_id)
        if contract.is_empty() or contract.has("changed_paths_only"):
            continue
        ctx.workspace_carry = None  # its commands may write files: snapshot afresh
        report = judge(ctx, pp, verify_context(ctx, pp), attempt=None)
        if not report.passed:
            continue
        dirty = False
        default = pp.prompt.targets[0] if pp.prompt.targets else None
        for repo_name, path in contract_paths(pp):
            repo = plan.packet.repos.get(repo_name or default or "packet")
            if repo is None:
                continue
            try:
                entries = git.porcelain_status(repo)
                prefix = git.show_prefix(repo)
            except Exception:
                continue
            wanted = (prefix + path).rstrip("/")
            if any(e.path == wanted or e.path.startswith(wanted + "/") for e in entries):
                dirty = True
                break
        if dirty:
            continue
        ctx.store.update_prompt(
            prompt_id,
            {
                "status": "completed",
                "source": "preflight_verify",
                "session_ran": False,
                "last_verifier": report.to_dict(),
                "run_id": ctx.run_id,
                "completed_at": iso_now(),
            },
        )
        ctx.store.append_progress(prompt_id, "completed", "no_session")
        ctx.console.say(f"✓ {prompt_id} already satisfies its contract — no session was run.")
        done.add(prompt_id)
    verifying.done(ctx.store.root)
    return done


def repair_executor(prompt_id: str, text: str) -> Any:
    """An executor for :func:`prompt_runner.api.repair`: one prompt, starting in repair mode."""

    def execute(ctx: RunContext) -> RunResult:
        journal = ctx.store.journal(ctx.run_id)
        try:
            pp = ctx.plan.prompt(prompt_id)
            ctx.cost.start_prompt(pp.id)
            ctx.console.say(f"▶ {pp.id} {pp.prompt.name} (repair)")
            ctx.store.update_prompt(pp.id, {"status": "repairing", "run_id": ctx.run_id})
            pin_branches(ctx)
            outcome = run_prompt(ctx, pp, initial_text=text, initial_mode="repair")
            status = record_outcome(ctx, pp, outcome, journal)
            run_status = run_status_for_prompt(status)
            code = exit_code_for(run_status)
            result = RunResult(
                ctx.run_id,
                run_status,
                code,
                {pp.id: status},
                [] if code == 0 else [pp.id],
                f"Repair of {pp.id}: {status}.",
            )
            journal.append("run_finished", {"status": result.status, "prompts": result.prompts})
            return result
        finally:
            journal.close()

    return execute
