"""Judge the workspace after a session: the verdict the recovery policy acts on.

* :func:`judge_workspace` is the attempt loop's step: the contract's verdict,
  the repos' branches, the session's failure envelope, what the session
  changed (the post-session snapshot) and uncommitted work in submodules.
* :func:`judge` verifies a prompt against its effective contract so that an
  amendment arriving while the verifier runs is part of exactly the verdict
  its receipt names (``control/verifying.py``): the contract is re-read when
  the verifier is done and, if it changed, verified again.

What a verify command writes is not the session's work. For a contract that
runs commands, the post-session snapshot is taken *before* verifying: it
alone says what the session changed (``loop.touched``, ``workspace_changed``),
``changed_paths_only`` counts only the prompt's own paths
(``VerifyContext.own_paths``), and a second snapshot after verifying is what
the commit and the next session's "before" start from -- so a verify
command's ``coverage.xml`` or ``.cache/`` stays in the work tree, uncommitted.
Outputs its ``regenerates:`` commands wrote are the prompt's work (touched,
committed). Such a prompt is never committed whole. A contract without
commands writes nothing: one snapshot, after verifying, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from ..control import verifying
from ..control.amendments import amendment_fields
from ..packet.own_edits import edited_during
from ..planning.prompt_plan import PromptPlan
from ..providers.base import SessionResult
from ..providers.failure import FailureEnvelope, envelope_for
from ..verifier import Contract, VerifierReport, VerifyContext, verify
from ..verifier.command_entry import CommandEntry
from ..verifier.registry import output_clauses
from . import repo_guard, workspace
from .completion import contract_paths
from .context import RunContext
from .leftovers import record_after_session
from .loop_state import Attempt, LoopState, Verdict
from .session import SessionOutcome
from .stages import VERIFYING, staged

Settle = Callable[[Contract, VerifyContext], VerifyContext]
"""Called before a verification that runs commands: the context to verify in."""


def judge_workspace(
    ctx: RunContext, loop: LoopState, attempt: Attempt, session: SessionOutcome
) -> Verdict:
    """Judge what ``attempt``'s session left.

    The post-session snapshot adds the paths the session changed to
    ``loop.touched``. For a contract that runs commands it is taken before
    verifying, and a second one after (the verdict's ``after``: what the
    commit takes from); paths the verification changed are not touched,
    except the outputs of its ``regenerates:`` commands. A clean session on a
    clean tree whose contract runs no commands is committed whole: the commit
    itself says what changed (``completion.commit_prompt``), so git is not
    asked twice and the verdict has no snapshot.

    Raises:
        UserError: the amended contract no longer validates (see :func:`judge`).
    """
    pp = loop.pp
    settled: list[workspace.Snapshot] = []
    verified: list[Contract] = []

    def settle(contract: Contract, vctx: VerifyContext) -> VerifyContext:
        if not settled:  # once: a re-verification after an amendment keeps it
            settled.append(workspace.snapshot(loop.repos))
            add_touched(loop, attempt.before, settled[0])
            # before the commands write: a runner killed from here on left
            # their files, not the session's (leftovers.py)
            record_after_session(ctx, pp.id, settled[0])
        verified[:] = [contract]
        return replace(vctx, own_paths=own_paths(loop, contract, settled[0]))

    report = judge(ctx, pp, loop.vctx, attempt=attempt.number, settle=settle)
    report = repo_guard.branch_verdict(ctx, pp.id, report)
    failure = session_failure(session.result)
    if settled:
        session_after = settled[0]
        changed = workspace.changed(attempt.before, session_after, file_events=session.file_events)
        after = workspace.snapshot(loop.repos)  # what the verification left
        add_regenerated(loop, verified[0], session_after, after)
        report = repo_guard.submodule_verdict(ctx, pp.id, report, after, loop.touched, loop.repos)
        verdict = Verdict(report, failure, after, changed)
    elif committed_whole(ctx, loop, attempt, report, failure):
        verdict = Verdict(report, failure, None, None)
    else:
        after = workspace.snapshot(loop.repos)
        changed = workspace.changed(attempt.before, after, file_events=session.file_events)
        add_touched(loop, attempt.before, after)
        report = repo_guard.submodule_verdict(ctx, pp.id, report, after, loop.touched, loop.repos)
        verdict = Verdict(report, failure, after, changed)
    ctx.position.attempt_key = None  # the session ended; nothing to interrupt
    return verdict


def add_touched(loop: LoopState, before: workspace.Snapshot, after: workspace.Snapshot) -> None:
    """Add the paths that differ between ``before`` and ``after`` to ``loop.touched``."""
    for repo_name, paths in workspace.changed_paths(before, after).items():
        loop.touched.setdefault(repo_name, set()).update(paths)


def runs_commands(contract: Contract, vctx: VerifyContext) -> bool:
    """True when verifying ``contract`` in ``vctx`` runs commands (which may write files)."""
    return contract.has("commands") and not vctx.structural_only


def _tree_path(repo_dir: Path, path: str) -> str | None:
    """``path`` (relative to ``repo_dir``) relative to its work tree's root;
    ``None`` for the whole repo, or when git cannot read it."""
    top = workspace.toplevel(repo_dir)
    if top is None:
        return None
    prefix = repo_dir.resolve().relative_to(top.resolve())
    full = (prefix / path).as_posix().strip("/")
    return None if full in ("", ".") else full


def _regenerated(loop: LoopState, contract: Contract) -> dict[str, set[str]]:
    return regenerated_outputs(loop.pp, loop.repos, contract)


def regenerated_outputs(
    pp: PromptPlan, repos: Mapping[str, Path], contract: Contract
) -> dict[str, set[str]]:
    """Per repo of ``repos`` (name -> directory), the outputs ``contract``'s
    ``regenerates:`` commands declare for ``pp`` (work-tree-root relative;
    one git call per output)."""
    default = pp.prompt.targets[0] if pp.prompt.targets else None
    out: dict[str, set[str]] = {}
    for entry in contract.entries.get("commands", ()):
        if not isinstance(entry, CommandEntry) or not entry.regenerates:
            continue
        name = entry.repo or default
        if name is None or name not in repos:
            continue
        for path in entry.regenerates:
            full = _tree_path(repos[name], path)
            if full is not None:
                out.setdefault(name, set()).add(full)
    return out


def own_paths(
    loop: LoopState, contract: Contract, session_after: workspace.Snapshot
) -> dict[str, set[str]]:
    """Per target repo git could read after the session, the prompt's own
    paths (work-tree-root relative), what ``changed_paths_only`` counts: the
    paths its sessions touched, those its contract names as outputs (as
    ``completion.commit_paths`` takes them) and its ``regenerates:`` outputs."""
    own = {
        name: set(loop.touched.get(name, ()))
        for name, value in session_after.items()
        if value is not None
    }
    default = loop.pp.prompt.targets[0] if loop.pp.prompt.targets else None
    for repo_name, path in contract_paths(loop.pp, clauses=output_clauses()):
        name = repo_name or default
        if name in own and name in loop.repos:
            full = _tree_path(loop.repos[name], path)
            if full is not None:
                own[name].add(full)
    for name, paths in _regenerated(loop, contract).items():
        if name in own:
            own[name] |= paths
    return own


def add_regenerated(
    loop: LoopState,
    contract: Contract,
    session_after: workspace.Snapshot,
    after: workspace.Snapshot,
) -> None:
    """The ``regenerates:`` outputs the verification wrote are the prompt's work:
    add those that changed between the two snapshots to ``loop.touched``."""
    declared = _regenerated(loop, contract)
    if not declared:
        return
    for name, paths in workspace.changed_paths(session_after, after).items():
        mine = paths & declared.get(name, set())
        if mine:
            loop.touched.setdefault(name, set()).update(mine)


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
        and not edited_during(ctx.store.root, ctx.run_id)  # a persist may be in the tree
    )


def judge(
    ctx: RunContext,
    pp: PromptPlan,
    vctx: VerifyContext,
    *,
    attempt: int | None,
    settle: Settle | None = None,
) -> VerifierReport:
    """Verify ``pp`` in ``vctx`` and return the report its verdict stands on.

    The prompt record is flagged with the amendments in force (``amended``,
    ``amendments``); a passing verdict records ``contract_fingerprint`` (the
    prompt-file contract it was judged under, which ``--remaining`` compares).
    A run without disk state verifies the prompt file's contract once.

    Args:
        vctx: where and how the contract is checked.
        attempt: the attempt being judged, ``None`` for pre-flight verification.
        settle: called with the contract and ``vctx`` before each verification
            round whose contract runs commands; returns the context to verify
            in (``judge_workspace``: its post-session snapshot is taken then).

    Raises:
        UserError: the amended contract no longer validates (names the file).
    """
    root = ctx.store.root
    if root is None:
        contract = pp.prompt.contract
        if settle is not None and runs_commands(contract, vctx):
            vctx = settle(contract, vctx)
        return verify(contract, vctx)
    with staged(ctx, pp.id, VERIFYING):
        return _judge_rounds(ctx, pp, vctx, attempt=attempt, settle=settle, root=root)


def _judge_rounds(
    ctx: RunContext,
    pp: PromptPlan,
    vctx: VerifyContext,
    *,
    attempt: int | None,
    settle: Settle | None,
    root: Path,
) -> VerifierReport:
    """:func:`judge` with disk state at ``root``: verified again while amendments
    arrive (``control/verifying.py``), the passing contract's fingerprint recorded."""
    prompt = pp.prompt
    contract, fingerprint = verifying.begin(root, ctx.run_id, prompt, attempt)
    rounds = 0
    while True:
        rounds += 1
        if attempt is not None:
            flag_amendments(ctx, pp)
        if settle is not None and runs_commands(contract, vctx):
            vctx = settle(contract, vctx)
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
        if attempt is None:
            # a pre-flight verification writes to the prompt's log only when it
            # passes (the prompt completes with it): a failing one leaves a prompt
            # that never started without a record, pending as `status` counts it
            flag_amendments(ctx, pp)
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
