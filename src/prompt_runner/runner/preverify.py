"""Pre-flight verification (SPEC 3.3): a prompt whose contract already holds
completes without a session.

On by default for ``--remaining`` without ids (``--verify-first`` /
``--no-verify-first`` choose); never under agent-owned completion or agent
control (the agent owns movement there). A contract that is empty, or judges
the session's changes (``changed_paths_only``), cannot hold before a session;
one whose named outputs are uncommitted is left for a session to commit.

With the git committer, pre-flight never reports uncommitted work completed
(:func:`possible_work`): a prompt completes without a session only when its
target repos hold no uncommitted change that could be its work -- a dirty
path its contract names; a path dirty now that was not as its last execution
started (``dirty_at_start``: a failed or interrupted run's leftovers); and,
for a contract with a clause that names no outputs (``commands``,
``source_absent``), any dirty path not known to predate its last start. The
work an interrupted run or a refused commit left (adopted as the run resumed,
``RunContext.adopted``) is known to be the prompt's: it is committed as the
prompt's commit (:func:`commit_rest`).
Any other such change leaves the prompt for a session, which commits its work.

Before it, a resumed run links the commits a killed runner made
(:func:`link_found_commits`): a runner killed between a prompt's ``git commit``
and the record of it left the commit in git and the prompt ``running``; the
prompt is recorded completed naming that commit (``source: commit_found``),
whether pre-flight verification is on or off.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import git
from ..committer import CommitResult, GitCommitter
from ..control import verifying
from ..control.amendments import effective_contract
from ..planning import Plan, PromptPlan
from ..state._clock import iso_now
from ..state.records import PromptStatus
from ..verifier import VerifierReport
from ..verifier.model import Contract
from ..verifier.registry import output_clauses
from . import lifecycle, workspace
from .baseline import verify_context
from .completion import contract_paths
from .context import RunContext
from .judging import judge
from .leftovers import is_verifier_backup
from .push import push_after_prompt
from .request import target_repos
from .shown import listed, one_line
from .stages import COMMITTING, staged


def preverify_enabled(plan: Plan) -> bool:
    """Whether the run verifies its selected prompts before any session."""
    options = plan.options
    enabled = options.verify_first
    if enabled is None:
        enabled = options.remaining and not options.ids
    if not enabled or plan.execution.completion == "agent_owned":
        return False
    return not plan.agent_control.enabled  # completion_verify pre-checks there


def preflight_verify(ctx: RunContext, *, settled: Collection[str] = ()) -> set[str]:
    """The ids :func:`preflight` recorded completed (see there)."""
    return {k for k, v in preflight(ctx, settled=settled).items() if v == PromptStatus.COMPLETED}


def preflight(ctx: RunContext, *, settled: Collection[str] = ()) -> dict[str, str]:
    """Record each selected prompt whose contract already holds and whose work
    is known committed (:func:`possible_work` finds nothing uncommitted that
    could be its work, or only what its interrupted run or refused commit left,
    committed now as its commit) completed with ``source: preflight_verify``.

    Args:
        settled: prompts already recorded by this run (:func:`link_found_commits`),
            left alone.

    Returns:
        prompt id -> ``completed``, or ``commit_failed`` when committing an
        interrupted run's work failed (the caller halts the run as for any
        failed commit; no later prompt is verified).
    """
    if not preverify_enabled(ctx.plan):
        return {}
    out: dict[str, str] = {}
    for prompt_id in ctx.plan.selected:
        if prompt_id in settled:
            continue
        verifying.done(ctx.store.root)  # the previous prompt's verdict is recorded
        pp = ctx.plan.prompt(prompt_id)
        if not can_hold(ctx, pp):
            continue
        git_committer = isinstance(ctx.committer, GitCommitter)
        snap = workspace.snapshot(target_repos(ctx, pp)) if git_committer else {}
        report = already_satisfied(ctx, pp)
        if report is None:
            continue
        if not git_committer:
            if outputs_uncommitted(ctx.plan, pp):
                continue
            record_satisfied(ctx, prompt_id, report)
            out[prompt_id] = PromptStatus.COMPLETED
            continue
        adopted = ctx.adopted.get(prompt_id, {})
        # Its own commands may have written an output it names: those are read afresh.
        has_commands = _contract(ctx, pp).has("commands")
        after = workspace.snapshot(target_repos(ctx, pp)) if has_commands else None
        unclaimed = possible_work(ctx, pp, snap, adopted, after=after)
        if unclaimed:
            say_left_for_session(ctx, prompt_id, unclaimed)
            continue
        # As the verification left them: a path it put back (a killed verification's
        # regenerates backup, verifier/regenerates.py) is no longer there to commit.
        dirty = workspace.dirty_paths(after if after is not None else snap)
        rest = {
            name: sorted(set(paths) & dirty.get(name, set()))
            for name, paths in adopted.items()
            if set(paths) & dirty.get(name, set())
        }
        status = commit_satisfied(ctx, pp, report, rest) if rest else None
        if status is None:
            record_satisfied(ctx, prompt_id, report)
            status = PromptStatus.COMPLETED
        out[prompt_id] = status
        if status != PromptStatus.COMPLETED:
            break  # a failed commit halts the run
    verifying.done(ctx.store.root)
    return out


def _contract(ctx: RunContext, pp: PromptPlan) -> Contract:
    """``pp``'s contract with the run's amendments in force."""
    if ctx.store.root is not None:
        return effective_contract(ctx.store.root, pp.prompt, ctx.run_id)
    return pp.prompt.contract


def can_hold(ctx: RunContext, pp: PromptPlan) -> bool:
    """Whether ``pp``'s contract (amendments in force) can hold before a session:
    not empty and not judging the session's changes (``changed_paths_only``)."""
    contract = _contract(ctx, pp)
    return not (contract.is_empty() or contract.has("changed_paths_only"))


def possible_work(
    ctx: RunContext,
    pp: PromptPlan,
    snap: workspace.Snapshot,
    adopted: Mapping[str, Collection[str]],
    *,
    after: workspace.Snapshot | None = None,
) -> dict[str, list[str]]:
    """The uncommitted changes of ``pp``'s target repos (``snap``, taken before
    its contract was judged, so a verification command's own files are not
    counted) that could be ``pp``'s work and are not ``adopted`` (its
    interrupted run's, committed with it): per repo name, sorted
    work-tree-relative paths; empty when none. A ``regenerates:`` output's
    backup a killed verification left is never its work.

    A path could be its work when its contract names it (or a directory
    holding it); when it was not dirty as ``pp``'s last execution started (the
    record's ``dirty_at_start``: a failed or stopped run's leftovers, or
    changes made since) -- for an execution cut short after its last session
    ended (``interrupted``, ``commit_failed``), only what was dirty then or a
    ``regenerates:`` output, as its adoption takes it
    (``lifecycle.session_bounds``); and, when the contract has a clause that
    names no outputs (``commands``, ``source_absent``: any file may be what
    satisfies it), whenever it is not known to predate that start. ``after``: the
    repos as the contract's commands left them, if it has any -- a named
    output they wrote is uncommitted too. A repo git cannot read counts as
    clean (its commit would fail anyway).
    """
    record = ctx.store.load_prompt(pp.id)
    at_start = record.get("dirty_at_start")
    ran = "dirty_at_start" in record  # None: over the cap, nothing known
    unnamed = bool(set(_contract(ctx, pp).to_raw()) - output_clauses())
    default = pp.prompt.targets[0] if pp.prompt.targets else None
    refs = contract_paths(pp)
    repos = target_repos(ctx, pp)
    out: dict[str, list[str]] = {}
    later = workspace.dirty_paths(after) if after is not None else {}
    # an interrupted (or refused) execution's session work is bounded as its
    # adoption's: past that, what its contract's commands wrote is not its work
    cut_short = record.get("status") in (PromptStatus.INTERRUPTED, PromptStatus.COMMIT_FAILED)
    bounds = lifecycle.session_bounds(pp, repos, record) if cut_short else {}
    for name, now in workspace.dirty_paths(snap).items():
        taken = set(adopted.get(name, ()))
        dirty = {x for x in now - taken if not is_verifier_backup(x)}  # the verifier's own
        written = {x for x in later.get(name, set()) - now - taken if not is_verifier_backup(x)}
        if not dirty and not written:
            continue
        before = at_start.get(name) if isinstance(at_start, Mapping) else None
        if ran:  # what was dirty as its last execution started predates it
            mine = dirty - set(before) if isinstance(before, list) else set(dirty)
            if name in bounds:
                mine &= bounds[name]
        else:  # never ran here: only a clause naming no outputs may be met by any file
            mine = set(dirty) if unnamed else set()
        prefix = _prefix(repos.get(name))
        for repo_name, path in refs:
            if (repo_name or default) != name:
                continue
            full = (prefix + path).strip("/")
            if full in ("", "."):
                continue  # a whole-repo reference names no particular output
            mine |= {p for p in dirty | written if p == full or p.startswith(full + "/")}
        if mine:
            out[name] = sorted(mine)
    return out


def _prefix(repo: Path | None) -> str:
    """``repo``'s path inside its work tree (``git rev-parse --show-prefix``), or ``""``."""
    if repo is None:
        return ""
    try:
        return git.show_prefix(repo)
    except Exception:
        return ""


def say_left_for_session(
    ctx: RunContext, prompt_id: str, unclaimed: Mapping[str, list[str]]
) -> None:
    """Say why a prompt whose contract holds still gets a session."""
    for name, paths in sorted(unclaimed.items()):
        shown = listed(paths)
        ctx.console.say(
            f"[{prompt_id}] its contract already holds, but repo {name!r} has uncommitted "
            f"changes that may be its work ({shown}); it is not completed without a commit, "
            "so a session runs and its work is committed with it"
        )


def commit_satisfied(
    ctx: RunContext, pp: PromptPlan, report: VerifierReport, rest: Mapping[str, list[str]]
) -> str:
    """Commit the work ``pp``'s interrupted run left (``rest``: repo name ->
    paths) as its commit and record it completed (``source: preflight_verify``,
    ``commit_info``), or ``commit_failed``. Returns the status."""
    prompt_id = pp.id
    result = commit_rest(ctx, pp, rest)
    fields = {
        "last_verifier": report.to_dict(),
        "session_ran": False,  # SPEC 3.3 (the interrupted session's attempt is recorded)
        "run_id": ctx.run_id,
        "completed_at": iso_now(),
        "source": "preflight_verify",
        "commit_info": {"commits": dict(result.commits), "skipped": False},
    }
    if not result.ok:
        return record_commit_refused(ctx, prompt_id, fields, result.error)
    ctx.store.update_prompt(prompt_id, {**fields, "status": PromptStatus.COMPLETED})
    ctx.store.append_progress(prompt_id, PromptStatus.COMPLETED, result.progress_suffix())
    ctx.store.flush()  # the record is durable before it is acknowledged
    ctx.console.say(
        f"✓ {prompt_id} already satisfies its contract — no session was run; the work its "
        f"interrupted run left is committed ({result.progress_suffix()})"
    )
    push_after_prompt(ctx, prompt_id, target_repos(ctx, pp))  # the push option's; never raises
    notify_settled(ctx, prompt_id, "on_prompt_completed")
    return PromptStatus.COMPLETED


def already_satisfied(ctx: RunContext, pp: PromptPlan) -> VerifierReport | None:
    """The passing report of ``pp``'s contract (amendments in force) on the
    workspace as it is, or ``None`` (it fails, or cannot hold before a session)."""
    if not can_hold(ctx, pp):
        return None
    ctx.workspace_carry = None  # its commands may write files: snapshot afresh
    report = judge(ctx, pp, verify_context(ctx, pp), attempt=None)
    return report if report.passed else None


def outputs_uncommitted(plan: Plan, pp: PromptPlan) -> bool:
    """True when a path ``pp``'s contract names is changed or untracked in its repo
    (a repo git cannot read counts as clean)."""
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
            return True
    return False


def record_satisfied(ctx: RunContext, prompt_id: str, report: VerifierReport) -> None:
    """Record ``prompt_id`` completed without a session (state and progress.log)."""
    ctx.store.update_prompt(
        prompt_id,
        {
            "status": PromptStatus.COMPLETED,
            "source": "preflight_verify",
            "session_ran": False,
            "last_verifier": report.to_dict(),
            "run_id": ctx.run_id,
            "completed_at": iso_now(),
        },
    )
    ctx.store.append_progress(prompt_id, PromptStatus.COMPLETED, "no_session")
    ctx.store.flush()  # the record is durable before it is acknowledged
    ctx.console.say(f"✓ {prompt_id} already satisfies its contract — no session was run.")
    notify_settled(ctx, prompt_id, "on_prompt_completed")


def linking_enabled(ctx: RunContext) -> bool:
    """Whether the run looks for commits a killed runner made: a resumed run
    (``runs/current.json``'s ``resumed_at``) with the git committer, outside
    agent control and agent-owned completion (whose commits are the agent's
    iterations'). One small file read on every run, nothing more on a new one."""
    plan = ctx.plan
    if not isinstance(ctx.committer, GitCommitter) or ctx.store.root is None:
        return False
    if plan.agent_control.enabled or plan.execution.completion == "agent_owned":
        return False
    current = ctx.store.read_current_run() or {}
    return bool(current.get("resumed_at")) and current.get("run_id") == ctx.run_id


def link_found_commits(ctx: RunContext) -> dict[str, str]:
    """A resumed run's records for the commits its dead runner made but never recorded.

    For each selected prompt recorded ``interrupted`` (a dead runner's
    ``running``, settled as the run opened; or a stop's) or ``commit_failed``
    (its commit made in some repos, refused in another) whose target repos
    hold its commit on top of the HEAD it started on
    (:func:`lifecycle.found_commits`: same message, the recorded start HEAD
    its only parent), the contract is verified again on the workspace as it
    is; when it holds the prompt is recorded completed with ``source:
    commit_found`` and ``commit_info`` naming the found commits, and its
    ``progress.log`` line, without a session. The work the kill left
    uncommitted in its other target repos (a prompt over several repos killed
    between two repos' commits: the work adopted from the dead runner) is
    committed now, so every repo gets exactly one commit of it. A contract
    that no longer holds links nothing: the prompt runs as before.

    Returns:
        prompt id -> ``completed``, or ``commit_failed`` when committing the
        rest failed (the caller halts the run as for any failed commit).
    """
    if not linking_enabled(ctx):
        return {}
    out: dict[str, str] = {}
    for prompt_id in ctx.plan.selected:
        if prompt_id in ctx.skip:
            continue
        record = ctx.store.load_prompt(prompt_id)
        failed = record.get("status") == PromptStatus.COMMIT_FAILED
        if record.get("status") != PromptStatus.INTERRUPTED and not failed:
            continue
        pp = ctx.plan.prompt(prompt_id)
        found = lifecycle.found_commits(pp, target_repos(ctx, pp), record)
        unverified = unverified_found(record, found) if failed else {}
        if unverified:
            shas = ", ".join(f"{name}={sha[:12]}" for name, sha in unverified.items())
            ctx.console.say(
                f"[{prompt_id}] its commit ({shas}) is the one a commit hook changed or "
                "filled with your own changes after its contract passed: it is not the "
                "prompt's verified work and is not linked; the prompt's contract is "
                "verified again on the work tree as it is (work left uncommitted is "
                "committed on top; if you kept that commit, nothing new is committed)"
            )
            continue
        if found:
            error = record.get("commit_error") if failed else None
            status = link(
                ctx,
                pp,
                found,
                commit_failed=failed,
                commit_error=error if isinstance(error, str) else None,
            )
            if status is not None:
                out[prompt_id] = status
                if status != PromptStatus.COMPLETED:
                    break  # a failed commit halts the run
    return out


def unverified_found(record: Mapping[str, Any], found: Mapping[str, str]) -> dict[str, str]:
    """The ``found`` commits (repo name -> sha) that the record names as
    ``unverified_commits``: made, then refused because a commit hook changed what
    they hold after the contract passed (``hook_mismatch``) or staged the user's
    own changes into them (``swept_user_changes``). Such a commit never becomes
    the prompt's (runner/completion.py records them)."""
    said = record.get("unverified_commits")
    if not isinstance(said, Mapping):
        return {}
    return {name: sha for name, sha in found.items() if said.get(name) == sha}


def link(
    ctx: RunContext,
    pp: PromptPlan,
    found: Mapping[str, str],
    *,
    commit_failed: bool = False,
    commit_error: str | None = None,
) -> str | None:
    """Verify ``pp`` again and record it completed with its ``found`` commits
    (repo name -> sha), committing the work left in its other repos first.
    ``commit_failed``: ``pp`` was recorded ``commit_failed`` (``commit_error``:
    the record's error), not left by a dead runner: its commit was made in
    these repos and refused in another, or made and then refused (a hook
    changed it and the committed work failed the contract).
    Returns its status, or ``None`` when the contract does not hold now."""
    prompt_id = pp.id
    why = found_reason(list(target_repos(ctx, pp)), found, commit_failed, commit_error)
    for name, sha in found.items():
        ctx.console.say(f"[{prompt_id}] its commit {sha[:12]} was found in repo {name!r}: {why}")
    report = _verified(ctx, pp)
    if report is None:
        ctx.console.say(
            f"[{prompt_id}] its contract does not hold on the workspace now; "
            "the commit is not linked and the prompt runs again"
        )
        return None
    repos = target_repos(ctx, pp)
    adopted = ctx.adopted.get(prompt_id, {})
    rest = {n: sorted(adopted[n]) for n in repos if n not in found and adopted.get(n)}
    made = commit_rest(ctx, pp, rest) if rest else CommitResult()
    both = {**made.commits, **found}
    commits = {n: both[n] for n in repos if n in both}  # in the targets' order
    result = CommitResult(commits, error=made.error)
    fields = {
        "last_verifier": report.to_dict(),
        "session_ran": True,  # the dead runner's session did the work
        "run_id": ctx.run_id,
        "completed_at": iso_now(),
        "source": "commit_found",
        "commit_info": {"commits": commits, "skipped": False},
    }
    if not result.ok:
        return record_commit_refused(ctx, prompt_id, fields, result.error)
    ctx.store.update_prompt(prompt_id, {**fields, "status": PromptStatus.COMPLETED})
    ctx.store.append_progress(prompt_id, PromptStatus.COMPLETED, result.progress_suffix())
    ctx.store.flush()  # the record is durable before it is acknowledged
    ctx.console.say(f"✓ {prompt_id} completed (commit_found; {result.progress_suffix()})")
    push_after_prompt(ctx, prompt_id, repos)  # the push option's; never raises
    notify_settled(ctx, prompt_id, "on_prompt_completed")
    return PromptStatus.COMPLETED


def found_reason(
    targets: Sequence[str],
    found: Mapping[str, str],
    commit_failed: bool,
    commit_error: str | None,
) -> str:
    """Why a prompt's commit was in git but not recorded completed, for the
    line naming it: the runner died before recording it; or (``commit_failed``)
    another of its ``targets`` refused its commit (those not in ``found``, named);
    or, none other failing (one repo, or all committed), the commit was made and
    then the prompt recorded ``commit_failed`` (``commit_error``, shown on one line)."""
    if not commit_failed:
        return "the runner that made it died before recording it"
    others = [name for name in targets if name not in found]
    if others:
        named = ", ".join(f"repo {name!r}" for name in others)
        return f"made before its commit in {named} failed"
    said = f": {one_line(commit_error)}" if commit_error else ""
    return f"the commit was made, then the runner recorded the prompt commit_failed{said}"


def _verified(ctx: RunContext, pp: PromptPlan) -> VerifierReport | None:
    """``pp``'s contract (amendments in force) judged on the workspace as it is:
    the passing report, or ``None`` (it fails, or the verifier faulted)."""
    ctx.workspace_carry = None  # its commands may write files: snapshot afresh
    report = judge(ctx, pp, verify_context(ctx, pp), attempt=None)
    verifying.done(ctx.store.root)
    return report if report.passed and report.fault is None else None


def commit_rest(ctx: RunContext, pp: PromptPlan, rest: Mapping[str, list[str]]) -> CommitResult:
    """Commit ``rest`` (repo name -> work-tree-relative paths: the work the dead
    runner left uncommitted in the repos it had not committed yet) with the
    prompt's message; never on another branch or a rewritten history, and
    verified again when a commit hook may have changed the commit."""
    repos = {n: p for n, p in target_repos(ctx, pp).items() if n in rest}
    pins = ctx.pins
    astray = pins.moved(repos) if pins is not None else {}
    if astray:
        return CommitResult(error=" ".join(astray.values()) + " Nothing was committed.")
    with staged(ctx, pp.id, COMMITTING):
        result = ctx.committer.commit(
            prompt_id=pp.id, message=pp.prompt.commit_message, repos=repos, paths=rest
        )
    if not result.ok:
        return result
    if pins is not None:
        pins.committed(result.heads)
    if not result.exact and _verified(ctx, pp) is None:
        shas = ", ".join(f"{name}={sha[:12]}" for name, sha in result.commits.items())
        return CommitResult(
            result.commits,
            error=f"a commit hook changed the commit ({shas}) and verified again the "
            "committed work fails the contract: fix the hook or the work, then run the "
            "prompt again",
        )
    return result


def record_commit_refused(
    ctx: RunContext, prompt_id: str, fields: dict[str, Any], error: str | None
) -> str:
    """Record ``prompt_id`` ``commit_failed`` (its ``fields`` and ``error``), its
    ``progress.log`` line ``failed``, durably, then say and notify it. Returns
    the status."""
    ctx.store.update_prompt(
        prompt_id, {**fields, "status": PromptStatus.COMMIT_FAILED, "commit_error": error}
    )
    ctx.store.append_progress(prompt_id, PromptStatus.FAILED)
    ctx.store.flush()  # the record is durable before it is acknowledged
    ctx.console.say(f"✗ {prompt_id} verified but the commit failed: {error}")
    notify_settled(ctx, prompt_id, "on_prompt_failed")
    return PromptStatus.COMMIT_FAILED


def notify_settled(ctx: RunContext, prompt_id: str, name: str) -> None:
    """Tell the observers of a prompt recorded before any session (pre-flight,
    a found commit) what a session's prompt tells them: ``on_prompt_started``,
    then ``name`` (``on_prompt_completed`` / ``on_prompt_failed``) with its
    stored record (its ``source``). Once: the prompt is settled, no session
    of it follows in this run. Never raises (``RunContext.notify``)."""
    ctx.notify("on_prompt_started", prompt_id)
    ctx.notify_record(name, prompt_id)
