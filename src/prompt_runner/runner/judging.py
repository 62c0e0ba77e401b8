"""Judge the workspace after a session: the verdict the recovery policy acts on.

* :func:`judge_workspace` is the attempt loop's step: the contract's verdict,
  the repos' branches, the session's failure envelope, what the session
  changed (the post-session snapshot) and uncommitted work in submodules.
* :func:`judge` verifies a prompt against its effective contract so that an
  amendment arriving while the verifier runs is part of exactly the verdict
  its receipt names (``control/verifying.py``): the contract is re-read when
  the verifier is done and, if it changed, verified again.
"""

from __future__ import annotations

from ..control import verifying
from ..control.amendments import amendment_fields
from ..planning.prompt_plan import PromptPlan
from ..providers.base import SessionResult
from ..providers.failure import FailureEnvelope, envelope_for
from ..verifier import VerifierReport, VerifyContext, verify
from . import repo_guard, workspace
from .context import RunContext
from .loop_state import Attempt, LoopState, Verdict
from .session import SessionOutcome


def judge_workspace(
    ctx: RunContext, loop: LoopState, attempt: Attempt, session: SessionOutcome
) -> Verdict:
    """Judge what ``attempt``'s session left.

    The post-session snapshot adds the paths the session changed to
    ``loop.touched``. A clean session on a clean tree is committed whole: the
    commit itself says what changed (``completion.commit_prompt``), so git is
    not asked twice and the verdict has no snapshot.

    Raises:
        UserError: the amended contract no longer validates (see :func:`judge`).
    """
    pp = loop.pp
    report = judge(ctx, pp, loop.vctx, attempt=attempt.number)
    report = repo_guard.branch_verdict(ctx, pp.id, report)
    failure = session_failure(session.result)
    if committed_whole(ctx, loop, attempt, report, failure):
        verdict = Verdict(report, failure, None, None)
    else:
        after = workspace.snapshot(loop.repos)
        changed = workspace.changed(attempt.before, after, file_events=session.file_events)
        for repo_name, paths in workspace.changed_paths(attempt.before, after).items():
            loop.touched.setdefault(repo_name, set()).update(paths)
        report = repo_guard.submodule_verdict(ctx, pp.id, report, after, loop.touched)
        verdict = Verdict(report, failure, after, changed)
    ctx.position.attempt_key = None  # the session ended; nothing to interrupt
    return verdict


def session_failure(result: SessionResult) -> FailureEnvelope | None:
    """The session's failure envelope; a failed result without one is
    ``user_cancelled`` (interrupted) or ``unknown``. ``None``: nominal success."""
    if result.failure is not None or result.ok:
        return result.failure
    if result.interrupted:
        return envelope_for("user_cancelled", "the session was interrupted")
    return envelope_for("unknown", "the session failed")


def committed_whole(
    ctx: RunContext,
    loop: LoopState,
    attempt: Attempt,
    report: VerifierReport,
    failure: FailureEnvelope | None,
) -> bool:
    """True when the session will be committed whole, unseen: it succeeded and
    passed, on a tree that was clean before it, with nothing adopted, outside
    agent control and agent-owned completion, in repos without hooks or
    submodules (``repo_guard.commits_whole``)."""
    return (
        failure is None
        and report.passed
        and report.fault is None
        and not loop.touched
        and not loop.controlled
        and not loop.agent_owned
        and repo_guard.commits_whole(ctx, loop.repos)
        and workspace.all_clean(attempt.before)
    )


def judge(
    ctx: RunContext, pp: PromptPlan, vctx: VerifyContext, *, attempt: int | None
) -> VerifierReport:
    """Verify ``pp`` in ``vctx`` and return the report its verdict stands on.

    The prompt record is flagged with the amendments in force (``amended``,
    ``amendments``); a passing verdict records ``contract_fingerprint`` (the
    prompt-file contract it was judged under, which ``--remaining`` compares).
    A run without disk state verifies the prompt file's contract once.

    Args:
        vctx: where and how the contract is checked.
        attempt: the attempt being judged, ``None`` for pre-flight verification.

    Raises:
        UserError: the amended contract no longer validates (names the file).
    """
    root = ctx.store.root
    if root is None:
        return verify(pp.prompt.contract, vctx)
    prompt = pp.prompt
    contract, fingerprint = verifying.begin(root, ctx.run_id, prompt, attempt)
    rounds = 0
    while True:
        rounds += 1
        flag_amendments(ctx, pp)
        report = verify(contract, vctx)
        passed = report.passed and report.fault is None
        newer = verifying.settle(
            root, ctx.run_id, prompt, attempt, fingerprint, passed=passed, rounds=rounds
        )
        if newer is None:
            break
        ctx.console.say(
            f"[{pp.id}] its contract was amended while it was being verified; "
            "verifying again against the amended contract"
        )
        contract, fingerprint = newer
    if passed:
        ctx.store.update_prompt(
            pp.id,
            {"contract_fingerprint": verifying.persisted_fingerprint(root, prompt, ctx.run_id)},
        )
    return report


def flag_amendments(ctx: RunContext, pp: PromptPlan) -> None:
    """Record the amendments in force for ``pp`` on its prompt record (if any)."""
    fields = amendment_fields(ctx.store.root, pp.id, ctx.run_id)
    if fields:
        ctx.store.update_prompt(pp.id, fields)
