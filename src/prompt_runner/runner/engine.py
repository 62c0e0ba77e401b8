"""Run a resolved plan's selected prompts in order (the run pipeline's executor).

Inside an opened run (``pipeline.py``: the locks held, the run recorded)::

    pin the target repos' branches -> agent control's closed-before-start check
    -> pre-flight verification (preverify.py)
    -> for each selected prompt: skipped / blocked by a dependency / executed
       (attempt loop, commit, record) -> what the run does next
    -> the closing line and the journal's run_finished

Records of a prompt: ``progress.log`` gets exactly one terminal line per
execution (``completed`` only after the verifier passed *and* the commit
succeeded); ``state.json`` gets status, source and attempts. A verifier fault
halts the run without marking the prompt failed. A prompt failed by the run's
cost budget (``max_run_cost_usd``) stops the run whatever the failure policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..committer import GitCommitter
from ..planning import Plan, PromptPlan
from ..state._clock import iso_now
from ..state.prompt_records import ABSENT, PromptStart
from ..state.records import PromptStatus, RunStatus, exit_code_for
from . import agent_control, agent_sequence, leftovers, notifying, repo_guard, workspace
from .attempts import run_prompt
from .completion import partial_commit_note, record_outcome
from .context import RunContext
from .lifecycle import selected_target_repos
from .loop_state import PromptOutcome
from .preverify import link_found_commits, preflight
from .request import target_repos
from .result import RunResult
from .stages import COMMITTING, staged
from .steering import start_steer_budget
from .stopping import check_stop, settle_requests

__all__ = ["execute_prompt", "pin_branches", "run_plan"]


@dataclass
class SequenceState:
    """What the prompt sequence has seen so far in this run.

    Attributes:
        progress: each prompt's status in ``progress.log`` as the run started.
        satisfied: prompts pre-flight verification completed without a session.
        completed: prompts completed (or skipped as completed) in this run.
        failed: prompts failed or blocked in this run.
    """

    progress: Mapping[str, str]
    satisfied: set[str] = field(default_factory=set)
    completed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)

    def blockers(self, pp: PromptPlan) -> list[str]:
        """``pp``'s dependencies that failed in this run or are not completed."""
        return [
            dep
            for dep in pp.prompt.front.depends_on
            if dep in self.failed
            or (dep not in self.completed and self.progress.get(dep) != PromptStatus.COMPLETED)
        ]


def run_plan(ctx: RunContext) -> RunResult:
    """Execute the selected prompts of ``ctx.plan`` (the locks are held by the caller).

    Returns:
        The run's :class:`RunResult` (also the journal's ``run_finished``;
        agent control's closed-before-start halt records its own).
    """
    journal = ctx.store.journal(ctx.run_id)
    result = RunResult(ctx.run_id, RunStatus.COMPLETED, exit_code_for(RunStatus.COMPLETED))
    try:
        seq = SequenceState({k: v.status for k, v in ctx.store.read_progress().items()})
        pin_branches(ctx)
        if agent_sequence.closed_before_start(ctx, result, journal):
            return result
        if not settle(ctx, link_found_commits(ctx), seq, result, journal):
            return result
        if not settle(ctx, preflight(ctx, settled=seq.satisfied), seq, result, journal):
            return result
        for prompt_id in ctx.plan.selected:
            check_stop(ctx, between_prompts=True)  # a stop request ends the run here
            if not step(ctx, ctx.plan.prompt(prompt_id), seq, result, journal):
                break
            settle_requests(ctx, prompt_id)  # a stop or steer sent while it was committed
        conclude(ctx.plan, result)
        journal.append(
            "run_finished",
            {"status": result.status, "failures": result.failures, "prompts": result.prompts},
        )
        return result
    finally:
        journal.close()


def settle(
    ctx: RunContext,
    settled: Mapping[str, str],
    seq: SequenceState,
    result: RunResult,
    journal: Any,
) -> bool:
    """Take the prompts recorded before any session: a resumed run's commits
    its dead runner made but never recorded (``preverify.link_found_commits``),
    then pre-flight verification (``preverify.preflight``). Returns whether the
    run goes on: a failed commit (of the work an interrupted run left) halts
    it, as any failed commit."""
    for prompt_id, status in settled.items():
        if status == PromptStatus.COMPLETED:
            seq.satisfied.add(prompt_id)
            continue
        result.prompts[prompt_id] = status
        halt_for_commit(ctx, prompt_id, result, journal)
        journal.append(
            "run_finished",
            {"status": result.status, "failures": result.failures, "prompts": result.prompts},
        )
        return False
    return True


def step(
    ctx: RunContext, pp: PromptPlan, seq: SequenceState, result: RunResult, journal: Any
) -> bool:
    """Handle one selected prompt: skip it (completed already), block it (a
    dependency is not completed) or execute it. Returns whether the run goes on."""
    prompt_id = pp.id
    if prompt_id in seq.satisfied or prompt_id in ctx.skip:
        seq.completed.add(prompt_id)
        result.prompts[prompt_id] = PromptStatus.COMPLETED
        return True
    blockers = seq.blockers(pp)
    if blockers:
        block(ctx, prompt_id, blockers)
        seq.failed.add(prompt_id)
        result.prompts[prompt_id] = PromptStatus.BLOCKED_BY_DEPENDENCY
        result.failures.append(prompt_id)
        return ctx.plan.failure_policy != "stop"
    status = execute_prompt(ctx, pp, journal)
    if agent_sequence.ends_sequence(ctx, prompt_id, status, result):
        return False
    result.prompts[prompt_id] = status
    return after_prompt(ctx, prompt_id, status, seq, result, journal)


def block(ctx: RunContext, prompt_id: str, blockers: list[str]) -> None:
    """Record ``prompt_id`` ``blocked_by_dependency`` (not started)."""
    ctx.console.say(f"[{prompt_id}] blocked by dependency {', '.join(blockers)}; not started")
    ctx.store.update_prompt(
        prompt_id,
        {
            "status": PromptStatus.BLOCKED_BY_DEPENDENCY,
            "blocked_by": blockers,
            "run_id": ctx.run_id,
        },
    )
    notifying.blocked_by(ctx.notifier, prompt_id, blockers)


def after_prompt(
    ctx: RunContext,
    prompt_id: str,
    status: str,
    seq: SequenceState,
    result: RunResult,
    journal: Any,
) -> bool:
    """What the run does after an executed prompt ended as ``status``: go on,
    halt (a verifier fault, a failed commit), stop (the run's cost budget, or
    the ``stop`` failure policy). Returns whether the run goes on."""
    if status == PromptStatus.COMPLETED:
        seq.completed.add(prompt_id)
        return True
    if status == PromptStatus.VERIFIER_FAULT:
        halt_for_verifier(prompt_id, result)
        return False
    if status == PromptStatus.COMMIT_FAILED:
        halt_for_commit(ctx, prompt_id, result, journal)
        return False
    seq.failed.add(prompt_id)
    result.failures.append(prompt_id)
    if ctx.cost.run_stop is not None:
        stop_for_run_budget(ctx, prompt_id, result, journal)
        return False
    return ctx.plan.failure_policy != "stop"


def conclude(plan: Plan, result: RunResult) -> None:
    """A run that went through its prompts: ``failed`` when any failed, and its closing line."""
    if result.failures and result.status == RunStatus.COMPLETED:
        result.status = RunStatus.FAILED
        result.exit_code = exit_code_for(result.status)
        if len(result.failures) > 1 or plan.failure_policy != "stop":
            result.message = failures_line(result)
        else:
            result.message = f"Prompt {result.failures[0]} failed."
    if not result.message:
        result.message = f"Run completed: {len(result.prompts)} prompt(s) completed."


def failures_line(result: RunResult) -> str:
    """``N selected prompt(s) failed: IDS`` -- with the prompts a failed dependency
    blocked told apart (``; M blocked by a failed dependency: IDS``): they never
    ran, so they did not fail themselves."""
    blocked = [
        pid
        for pid in result.failures
        if result.prompts.get(pid) == PromptStatus.BLOCKED_BY_DEPENDENCY
    ]
    failed = [pid for pid in result.failures if pid not in blocked]
    parts = []
    if failed:
        parts.append(f"{len(failed)} selected prompt(s) failed: {', '.join(failed)}")
    if blocked:
        parts.append(f"{len(blocked)} blocked by a failed dependency: {', '.join(blocked)}")
    return "; ".join(parts)


def halt(result: RunResult, prompt_id: str, message: str) -> None:
    """``prompt_id`` halts the run (exit 3) with the closing line ``message``."""
    result.status = RunStatus.HALTED
    result.exit_code = exit_code_for(result.status)
    result.failures.append(prompt_id)
    result.message = message


def halt_for_verifier(prompt_id: str, result: RunResult) -> None:
    """The verifier could not judge ``prompt_id``: the run halts (exit 3)."""
    halt(
        result,
        prompt_id,
        f"Run halted: the verifier could not judge prompt {prompt_id}; "
        "fix the verifier command and run again.",
    )


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
    pins = repo_guard.BranchPins.start(ctx.committer, selected_target_repos(ctx.plan))
    ctx.pins = pins
    for warning in pins.detached():
        ctx.console.say(f"warning: {warning}")


def halt_for_commit(ctx: RunContext, prompt_id: str, result: RunResult, journal: Any) -> None:
    """A verified prompt's commit failed (a hook rejected it, an index lock is
    held, git failed): an infrastructure fault -- the run halts with exit 3,
    naming the cause (a hook's own output included) and, when some of its
    target repos were committed before one failed, those commits
    (:func:`~.completion.partial_commit_note`), whatever the failure policy."""
    record = ctx.store.load_prompt(prompt_id)
    error = str(record.get("commit_error") or "git failed")
    if "\n" in error:
        # The prompt's own line quoted the hook's output just above: the closing
        # line names the cause once more, not the output (`status --json`'s
        # commit_error keeps it all).
        first = error.split("\n", 1)[0].removesuffix("; its output:").rstrip(" :;")
        error = f"{first} (its output is quoted above and kept in the prompt's commit_error)"
    info = record.get("commit_info")
    commits = info.get("commits") if isinstance(info, dict) else None
    note = ""
    if isinstance(commits, dict) and commits:
        repos = target_repos(ctx, ctx.plan.prompt(prompt_id))
        note = partial_commit_note(commits, repos, record.get("unverified_commits")) + "\n"
    halt(
        result,
        prompt_id,
        f"Run halted: prompt {prompt_id} passed its contract but its commit failed: {error}\n"
        f"{note}Fix that, then run it again (`run --remaining`).",
    )
    journal.append("run_halted", {"prompt_id": prompt_id, "reason": "commit_failed"})


def execute_prompt(ctx: RunContext, pp: PromptPlan, journal: Any) -> str:
    """Run one prompt's attempt loop, commit, and record. Returns its final status."""
    store = ctx.store
    prompt = pp.prompt
    ctx.cost.start_prompt(prompt.id)
    start_steer_budget(ctx, prompt.id)
    ctx.notify("on_prompt_started", prompt.id)
    ctx.console.say(f"▶ {prompt.id} {prompt.name}")
    dirty, heads = at_start(ctx, pp) if ctx.committer.name == "git" else (ABSENT, ABSENT)
    running = PromptStart(
        name=prompt.name,
        run_id=ctx.run_id,
        started_at=iso_now(),
        dirty_at_start=dirty,
        head_at_start=heads,
    )
    fields = running.to_dict()
    if dirty is not ABSENT:  # the last execution's bound is not this one's (leftovers.py)
        fields[leftovers.FIELD] = None
    ctx.after_session.discard(prompt.id)
    store.update_prompt(prompt.id, fields)
    if ctx.plan.agent_control.enabled:
        return agent_control.run_controlled(ctx, pp, journal)
    outcome = run_prompt(ctx, pp)
    try:
        return record_completed(ctx, pp, outcome, journal)
    finally:
        store.flush()  # group-committed prompt-log appends made durable


def record_completed(ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome, journal: Any) -> str:
    """``completion.record_outcome``, shown as the prompt's ``committing`` stage
    in the control snapshot when it commits (a verified prompt: its commit,
    the commit hooks, the push after it; ``stages.staged``). Returns its status."""
    if outcome.action != "complete":
        return record_outcome(ctx, pp, outcome, journal)
    with staged(ctx, pp.id, COMMITTING):
        return record_outcome(ctx, pp, outcome, journal)


DIRTY_AT_START_CAP = 5000
"""Most dirty paths recorded when a prompt starts (beyond it, nothing is recorded)."""


def at_start(ctx: RunContext, pp: PromptPlan) -> tuple[dict[str, list[str]] | None, dict[str, str]]:
    """The target repos' dirty paths and HEAD shas as the prompt starts, recorded
    with its "running" status: if this runner dies before the commit, the next
    run tells the prompt's own leftovers from the user's
    (lifecycle.adopt_interrupted_work); if it dies right after the commit, the
    next run finds that commit on top of the recorded HEAD
    (preverify.link_found_commits).

    Both come from one snapshot (HEAD is its ``git status --branch`` header, or
    the carry derived at the last commit), handed on as the first session's
    "before" (no second git call).

    Returns:
        ``(dirty, heads)``: per repo name, the sorted dirty paths (``None`` when
        there are more than :data:`DIRTY_AT_START_CAP` in all); per repo name,
        the HEAD sha (``"(initial)"`` with no commit yet; repos git cannot read left out).
    """
    repos = target_repos(ctx, pp)
    snap = workspace.snapshot(repos, carry=ctx.take_carry())
    ctx.workspace_carry = workspace.Carry.now(snap, repos)
    heads = workspace.heads(snap)
    dirty = {name: sorted(paths) for name, paths in workspace.dirty_paths(snap).items()}
    if sum(len(paths) for paths in dirty.values()) > DIRTY_AT_START_CAP:
        return None, heads
    return dirty, heads
