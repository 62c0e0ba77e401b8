"""Completion: record how a prompt's attempt loop ended, commit its work, say what it mixed.

Both the engine (one prompt after another) and agent control (an iteration
whose directive the runner acts on) end a prompt here:

* :func:`record_outcome` commits a completed prompt (:func:`commit_prompt`)
  and writes its status to ``state.json`` and ``progress.log`` -- ``completed``
  only after the verifier passed *and* the commit succeeded;
* :func:`commit_prompt` commits the prompt's own work (:func:`commit_paths`:
  what its sessions touched plus the dirty outputs its contract names), never
  on another branch or a rewritten history, and verifies again when a commit
  hook changed what it committed (:func:`verify_after_hooks`);
* :func:`warn_mixed_commit` says when the commit took files the user had
  already changed before the run;
* a completed prompt's repos are pushed when the run pushes after each prompt
  (:mod:`.push`), once its completion is recorded.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import git
from ..committer import CommitResult, Committer, GitCommitter
from ..control.amendments import effective_contract
from ..packet.own_edits import own_edit_paths
from ..planning import PromptPlan
from ..render.text import Console
from ..state._clock import iso_now
from ..state.records import PromptStatus
from ..verifier import verify
from ..verifier.model import subject
from ..verifier.registry import output_clauses
from . import repo_guard, workspace
from .baseline import verify_context
from .context import RunContext
from .loop_state import PromptOutcome
from .push import push_after_prompt
from .request import target_repos


def record_outcome(ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome, journal: Any) -> str:
    """Commit a completed prompt and write its status to state and progress.

    Returns:
        The prompt's final status: ``completed``, ``commit_failed``,
        ``verifier_fault`` (a halt: the run stops; ``progress.log`` gets no
        line) or the failure status of ``outcome``.
    """
    fields: dict[str, Any] = {
        "last_verifier": outcome.report.to_dict() if outcome.report else None,
        "last_error": outcome.last_error,
        "session_ran": True,
        "completed_at": iso_now(),
        **ctx.cost.record_fields(pp.id),
        **outcome.extra,
    }
    if outcome.action == "complete":
        return record_completion(ctx, pp, outcome, fields)
    fields["status"] = outcome.status
    fields["reason"] = outcome.reason
    ctx.store.update_prompt(pp.id, fields)
    if outcome.action == "halt":
        return record_halt(ctx, pp, outcome, journal)
    return record_failure(ctx, pp, outcome)


def record_completion(
    ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome, fields: dict[str, Any]
) -> str:
    """Commit a verified prompt; record it ``completed``, or ``commit_failed``
    when the commit failed (``progress.log``: ``failed``)."""
    store, prompt_id = ctx.store, pp.id
    commit = commit_prompt(ctx, pp, outcome)
    if not commit.ok:
        fields.update(
            {
                "status": PromptStatus.COMMIT_FAILED,
                "commit_error": commit.error,
                "source": outcome.source,
                # Repos committed before the failing one keep their commits.
                "commit_info": {"commits": dict(commit.commits), "skipped": False},
            }
        )
        store.update_prompt(prompt_id, fields)
        store.append_progress(prompt_id, PromptStatus.FAILED)
        store.flush()  # the record is durable before it is acknowledged
        ctx.console.say(f"✗ {prompt_id} verified but the commit failed: {commit.error}")
        unverified = store.load_prompt(prompt_id).get("unverified_commits")
        note = partial_commit_note(commit.commits, target_repos(ctx, pp), unverified)
        if note:
            ctx.console.say(f"  {note}")
        ctx.notify_record("on_prompt_failed", prompt_id)
        return PromptStatus.COMMIT_FAILED
    fields.update(
        {
            "status": PromptStatus.COMPLETED,
            "source": outcome.source,
            "commit_info": {"commits": dict(commit.commits), "skipped": commit.skipped},
        }
    )
    store.update_prompt(prompt_id, fields)
    store.append_progress(prompt_id, PromptStatus.COMPLETED, commit.progress_suffix())
    store.flush()  # the record is durable before it is acknowledged (console, push, notifier)
    warn_mixed_commit(ctx, pp, outcome, commit)
    warn_ignored_outputs(ctx, pp, commit)
    warn_untargeted_outputs(ctx, pp, commit)
    ctx.console.say(f"✓ {prompt_id} completed ({outcome.source}; {commit.progress_suffix()})")
    push_after_prompt(ctx, prompt_id, target_repos(ctx, pp))  # the push option's; never raises
    ctx.notify_record("on_prompt_completed", prompt_id)
    maintain_repos(ctx.committer, ctx.console, due_only=True)
    return PromptStatus.COMPLETED


def partial_commit_note(
    commits: Mapping[str, str], repos: Iterable[str], unverified: object = None
) -> str:
    """What a failed commit of a prompt left: which of ``repos`` (its target repo
    names) got the prompt's commit (``commits``: repo name -> sha, as the failed
    :class:`CommitResult` kept them) and which did not, and what ``run
    --remaining`` does then. ``""`` when none was committed (the whole commit
    failed).

    ``unverified``: the prompt record's ``unverified_commits`` (repo name ->
    sha) when a hook changed the commit or swept the user's changes into it;
    such a commit is never recorded as the prompt's (runner/preverify.py), so
    the note says so instead of promising it."""
    if not commits:
        return ""
    made = ", ".join(f"repo {name!r} ({sha[:12]})" for name, sha in commits.items())
    rest = [name for name in repos if name not in commits]
    none = f"; {', '.join(f'repo {n!r}' for n in rest)} got none" if rest else ""
    if isinstance(unverified, Mapping) and any(
        unverified.get(name) == sha for name, sha in commits.items()
    ):
        return (
            f"Its commit was made in {made} and stays there{none}, but it is not the "
            "prompt's verified work: `run --remaining` never records it as the "
            "prompt's; it verifies the prompt again on the work tree and commits what "
            "the prompt still needs on top. To keep that commit out of your history, "
            "take it apart first with `git reset HEAD~1` in its repo (every change "
            "stays in the work tree)."
        )
    return (
        f"Its commit was made in {made} and stays there{none}. Once the cause is fixed, "
        "`run --remaining` records that commit as the prompt's and commits the rest."
    )


def maintain_repos(committer: Committer, console: Console, *, due_only: bool) -> None:
    """Git's batched auto-maintenance (:meth:`GitCommitter.maintain`) for a git
    committer: after a completed prompt the work trees that are due
    (``due_only``), at the end of a run every one committed in since its check.
    A failure is said as a warning line, never raised."""
    if isinstance(committer, GitCommitter):
        for line in committer.maintain(due_only=due_only):
            console.say(f"warning: {line}")


def record_halt(ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome, journal: Any) -> str:
    """The verifier could not judge: say so with the fault, journal the halt."""
    ctx.console.say(f"■ {pp.id} halted: {outcome.reason}")
    fault = outcome.report.fault if outcome.report else None
    if fault is not None:
        ran = subject(None, fault.command, None) or "none"
        ctx.console.say(f"  verifier fault: {fault.details} (command {ran}, cwd {fault.cwd})")
    journal.append("run_halted", {"prompt_id": pp.id, "reason": outcome.reason})
    return PromptStatus.VERIFIER_FAULT


def record_failure(ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome) -> str:
    """The prompt failed: its ``progress.log`` line, and its unmet items said."""
    ctx.store.append_progress(pp.id, PromptStatus.FAILED)
    ctx.store.flush()  # the record is durable before it is acknowledged
    ctx.console.say(f"✗ {pp.id} {outcome.status}: {outcome.reason}")
    if outcome.report is not None:
        for item in outcome.report.failures():
            ctx.console.say(f"    unmet: {item.kind} {item.subject}: {item.details}")
    ctx.notify_record("on_prompt_failed", pp.id)
    return outcome.status


def commit_prompt(ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome) -> CommitResult:
    """Commit a verified prompt's own work with its message.

    When the commit is exact (no commit hook could have written files), the
    workspace it leaves is derived from the prompt's last snapshot and kept for
    the next session's "before" (``RunContext.workspace_carry``). A session
    committed whole (no post-session snapshot, see ``judging.judge_workspace``)
    gets its ``workspace_changed`` from the commit: HEAD moved or not.

    Returns the committer's result, with an ``error`` (the prompt is then
    ``commit_failed``) also when a commit hook swept the user's own uncommitted
    changes into the commit (:func:`swept_user_changes`) or changed the commit
    so that the verdict no longer holds for it (:func:`verify_after_hooks`).
    """
    prompt = pp.prompt
    repos = target_repos(ctx, pp)
    pins = ctx.pins
    astray = pins.moved(repos) if pins is not None else {}
    if astray:  # never commit on another branch or a rewritten history
        return CommitResult(error=" ".join(astray.values()) + " Nothing was committed.")
    result = ctx.committer.commit(
        prompt_id=prompt.id,
        message=prompt.commit_message,
        repos=repos,
        paths=commit_paths(ctx, pp, outcome),
    )
    if not result.ok:
        return result
    if pins is not None:
        pins.committed(result.heads)
    swept = swept_user_changes(ctx, pp, result)
    if swept is not None:
        return replace(result, error=swept)
    if (
        not result.exact
        and outcome.workspace_after is not None
        and isinstance(ctx.committer, GitCommitter)
    ):
        problem = verify_after_hooks(ctx, pp, outcome.workspace_after, result)
        if problem is not None:
            return replace(result, error=problem)
    last = outcome.workspace_after
    before = outcome.workspace_before
    if last is None and before is not None and workspace.all_clean(before):
        last = before  # committed whole: every change went into the commit
        record_whole_commit(ctx, pp, outcome, before, result)
    if result.exact and last is not None:
        # a repo holding another target's work tree is not derived: that commit moved
        # the inner repo's row (a nested clone's status, a submodule's pointer)
        outer = workspace.nested_roots(repos, repos) if len(repos) > 1 else {}
        heads = {name: sha for name, sha in result.heads.items() if name not in outer}
        ctx.workspace_carry = workspace.after_commit(
            last, repos, heads=heads, committed=result.paths
        )
    return result


def record_whole_commit(
    ctx: RunContext,
    pp: PromptPlan,
    outcome: PromptOutcome,
    before: workspace.Snapshot,
    result: CommitResult,
) -> None:
    """A session committed whole was not looked at after it ran: its attempt's
    ``workspace_changed`` is whether the commit moved a repo's HEAD (``None``
    when a repo's new HEAD is unknown)."""
    if outcome.attempt_key is None:
        return
    heads_before = {name: value[0] for name, value in before.items() if value}
    known = all(name in result.heads for name in heads_before)
    moved = any(result.heads.get(name) != head for name, head in heads_before.items())
    ctx.store.finish_attempt(
        pp.id, outcome.attempt_key, {"workspace_changed": moved if known else None}
    )


def verify_after_hooks(
    ctx: RunContext, pp: PromptPlan, last: workspace.Snapshot, result: CommitResult
) -> str | None:
    """A commit hook changed what the commit took (``repo_guard.hook_rewrites``):
    verify the prompt's contract again. Returns why the committed work now fails
    it (naming the hook and the unmet items), or ``None`` when nothing changed
    or the contract still holds."""
    committer = ctx.committer
    assert isinstance(committer, GitCommitter)
    repos = target_repos(ctx, pp)
    rewritten = repo_guard.hook_rewrites(committer, repos, last, result)
    if not rewritten:
        return None
    hooks = sorted(
        {h for name in rewritten if (d := committer.locate(repos[name])) for h in d.commit_hooks()}
    )
    which = f"{' or '.join(hooks)} hook"
    where = "; ".join(f"{', '.join(paths)} in repo {name!r}" for name, paths in rewritten.items())
    ctx.workspace_carry = None
    own = {name: own_paths(name, last, result, rewritten) for name in result.commits}
    if all(name in result.restaged and not own[name] & result.restaged[name] for name in own):
        # the commit holds exactly what was staged, which is what the verifier saw:
        # the hook changed the work tree only, and the verdict holds for the commit
        ctx.store.update_prompt(pp.id, {"hook_rewrites": rewritten})
        ctx.console.say(
            f"[{pp.id}] the {which} changed {where} in the work tree, not in its commit; "
            "the commit holds the work as verified (the hook's changes stay uncommitted)"
        )
        return None
    # the verdict below reads the work tree: it holds for the commit only where the
    # commit and the work tree agree on every path of the prompt's (a hook may
    # rewrite or unstage what git commits without touching the file on disk)
    apart = {
        name: paths
        for name, sha in result.commits.items()
        if (paths := committed_apart(repos[name], sha, own[name]))
    }
    if apart:
        ctx.store.update_prompt(
            pp.id,
            {
                "hook_rewrites": rewritten,
                "hook_mismatch": apart,
                "unverified_commits": dict(result.commits),
            },
        )
        differ = "; ".join(f"{', '.join(paths)} in repo {name!r}" for name, paths in apart.items())
        shas = ", ".join(f"{name}={sha[:12]}" for name, sha in result.commits.items())
        return (
            f"the {which} changed what the commit holds after the contract passed: "
            f"{differ} in the commit differ from the work tree the contract was verified on "
            f"(the hook rewrote or unstaged them), so the committed work is unverified; the "
            f"commit stays ({shas}): fix the hook (or commit those paths yourself), then run "
            "the prompt again"
        )
    contract = pp.prompt.contract
    if ctx.store.root is not None:
        contract = effective_contract(ctx.store.root, pp.prompt, ctx.run_id)
    # judged as the verdict before the commit was: the prompt's own paths are
    # what it committed and what the hook rewrote, never a verify command's files
    own = {name: set(result.paths.get(name, ())) | set(rewritten.get(name, ())) for name in repos}
    report = verify(contract, replace(verify_context(ctx, pp), own_paths=own))
    ctx.store.update_prompt(pp.id, {"hook_rewrites": rewritten, "hook_verifier": report.to_dict()})
    if report.passed:
        ctx.console.say(
            f"[{pp.id}] the {which} changed {where} in its commit; verified again, the "
            "contract still holds"
        )
        return None
    # the commit fails the contract: never the prompt's, even once the work tree
    # is fixed by hand (a resumed run verifies the work tree, not this commit)
    ctx.store.update_prompt(pp.id, {"unverified_commits": dict(result.commits)})
    unmet = "; ".join(
        f"{i.kind} {i.subject}: {i.details}" for i in (report.failures() or report.faults())
    )
    shas = ", ".join(f"{name}={sha[:12]}" for name, sha in result.commits.items())
    return (
        f"the {which} changed {where} in the commit after the contract passed, and "
        f"verified again the committed work fails it ({unmet}); the commit stays "
        f"({shas}): fix the hook or the work, then run the prompt again"
    )


def swept_user_changes(ctx: RunContext, pp: PromptPlan, result: CommitResult) -> str | None:
    """Why the prompt's commit must not count: a commit hook staged paths the user
    had already changed before the run (a ``git add -u`` hook), so the commit
    holds the user's uncommitted work under the prompt's message. ``None`` when
    it holds none (``result.added`` minus ``ctx.foreign_changes``).

    The prompt is ``commit_failed`` rather than completed with a warning: a
    completed prompt may be pushed at once (``push: after_each``), and the user's
    unfinished work must never leave with it unasked. Recorded as
    ``swept_user_changes`` (repo name -> paths)."""
    foreign = ctx.foreign_changes
    swept = {
        name: sorted(set(added) & set(foreign.get(name, ())))
        for name, added in result.added.items()
        if set(added) & set(foreign.get(name, ()))
    }
    if not swept:
        return None
    ctx.store.update_prompt(
        pp.id, {"swept_user_changes": swept, "unverified_commits": dict(result.commits)}
    )
    repos, committer = target_repos(ctx, pp), ctx.committer
    hooks = sorted(
        {
            h
            for name in swept
            if isinstance(committer, GitCommitter) and (d := committer.locate(repos[name]))
            for h in d.commit_hooks()
        }
    )
    which = f"the {' or '.join(hooks)} hook" if hooks else "a commit hook"
    where = "; ".join(f"{', '.join(paths)} in repo {name!r}" for name, paths in swept.items())
    shas = ", ".join(f"{name}={sha[:12]}" for name, sha in result.commits.items())
    return (
        f"{which} staged {where} into the prompt's commit ({shas}): your own "
        "uncommitted changes from before the run, now committed under the prompt's "
        "message. The commit stays and nothing was pushed: keep it, or take it apart "
        "with `git reset HEAD~1` (every change stays in the work tree); commit or "
        "stash your changes before the next run (or make the hook stage only what is "
        "staged), then `run --remaining`"
    )


def own_paths(
    name: str, last: workspace.Snapshot, result: CommitResult, rewritten: Mapping[str, list[str]]
) -> set[str]:
    """The prompt's paths in repo ``name`` (work-tree-relative): what its commit was
    asked to take (every path ``last`` showed dirty, for a commit of every
    change) plus what the hook changed (``rewritten``)."""
    taken = set(result.paths.get(name, ()))
    if not taken:
        value = last.get(name)
        taken = {row[1] for row in value[1]} if value else set()
    return taken | set(rewritten.get(name, ()))


def committed_apart(repo: Path, sha: str, paths: Collection[str]) -> list[str]:
    """Which of ``paths`` (relative to ``repo``'s work-tree root) commit ``sha``
    holds otherwise than the work tree: content or mode differs, the commit has it
    and the work tree not, or the file is on disk and the commit lacks it. Sorted;
    ``[]`` when git cannot be read (nothing to say then). Two git calls: ``git
    diff --name-only <sha>`` (tracked paths) and ``git ls-tree`` for the rest."""
    if not paths:
        return []
    root = workspace.toplevel(repo)
    if root is None:
        return []
    # paths as the runner holds them (git.shown_path): run_git's decoding, not the bytes
    diff = git.run_git(root, "diff", "--no-renames", "--name-only", "-z", sha)
    if not diff.ok:
        return []
    listed = {p for p in diff.stdout.split("\0") if p}
    wanted = {p.rstrip("/") for p in paths}
    apart = {p for p in wanted if p in listed}
    rest = sorted(p for p in wanted - apart if "\ufffd" in p or os.path.lexists(root / p))
    if rest:
        # a name held with U+FFFD names no file for git: then the whole tree is listed
        shown = any("\ufffd" in p for p in rest)
        names = ("-r",) if shown else ("--", *rest)
        tree = git.run_git(root, "ls-tree", "-z", "--name-only", "--full-tree", sha, *names)
        if not tree.ok:
            return sorted(apart)
        present = {p for p in tree.stdout.split("\0") if p}
        apart |= {p for p in rest if p not in present}
    return sorted(apart)


def warn_mixed_commit(
    ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome, commit: CommitResult
) -> None:
    """Say when a prompt's commit took files the user had already changed before
    the run: ones the prompt edited (the commit holds both edits), and ones it
    did not touch but its contract names as outputs."""
    foreign = ctx.foreign_changes
    for name in sorted(set(outcome.touched) | set(commit.paths)):
        theirs = set(foreign.get(name, ()))
        edited = sorted(outcome.touched.get(name, set()) & theirs)
        named = sorted((set(commit.paths.get(name, ())) & theirs) - set(edited))
        if edited:
            ctx.console.say(
                f"warning: [{pp.id}] edited {', '.join(edited)} in repo {name!r}, which already "
                "had uncommitted changes before the run; its commit includes those changes too"
            )
        if named:
            ctx.console.say(
                f"warning: [{pp.id}] committed {', '.join(named)} in repo {name!r}, which had "
                "uncommitted changes before the run and which its contract names as outputs"
            )


def warn_ignored_outputs(ctx: RunContext, pp: PromptPlan, commit: CommitResult) -> None:
    """Say when a target repo got no commit and the prompt's contract names an
    output that repo's git ignores: the output exists (the contract passed) but
    is never committed. Asked only then -- one ``git check-ignore`` a repo
    (``packet.preflight.ignored_outputs``), never on a prompt that committed."""
    if not isinstance(ctx.committer, GitCommitter) or commit.skipped:
        return
    bare = [name for name in pp.prompt.targets if name not in commit.commits]
    if not bare:
        return
    # lazy: a prompt that committed in every target repo never asks git about ignores
    from ..packet.preflight import ignored_message, ignored_outputs

    for item in ignored_outputs(ctx.plan.packet, [pp.prompt]):
        if item.repo in bare:
            ctx.console.say(f"warning: {ignored_message(item)}")  # it names the prompt


def warn_untargeted_outputs(ctx: RunContext, pp: PromptPlan, commit: CommitResult) -> None:
    """Say when an output the prompt's contract names in a repo it does not
    target (``packet.preflight.untargeted_outputs``) is left uncommitted there:
    the contract passed on it, and the runner commits only in the prompt's
    targets. Read from the contract first, so a prompt without such a path
    asks git nothing; then one ``git status`` per such path."""
    if not isinstance(ctx.committer, GitCommitter) or commit.skipped:
        return
    # lazy: the preflight room is loaded only by a prompt that has such a path
    from ..packet.preflight import untargeted_outputs

    found = untargeted_outputs([pp.prompt])
    repos = ctx.plan.packet.repos
    left: dict[str, list[str]] = {}
    for item in found:
        where = repos.get(item.repo)
        if where is None or item.path in left.get(item.repo, ()):
            continue
        shown = git.run_git(where, "status", "--porcelain=v1", "-z", "-uall", "--", item.path)
        if shown.ok and shown.stdout.strip("\0"):
            left.setdefault(item.repo, []).append(item.path)
    for repo, paths in left.items():
        ctx.console.say(
            f"warning: [{pp.id}] {', '.join(paths)} in repo {repo!r} is named by its contract "
            f"but {repo!r} is not one of its targets, so it is left uncommitted; add {repo!r} "
            "to the prompt's `targets` to have the runner commit it"
        )


def commit_paths(
    ctx: RunContext, pp: PromptPlan, outcome: PromptOutcome
) -> dict[str, list[str]] | None:
    """What the committer may commit: per target repo, the dirty paths this
    prompt's sessions touched, plus dirty paths its contract names (its
    declared outputs, e.g. left by an interrupted earlier attempt). A user's
    unrelated uncommitted files are never included. ``None`` (commit every
    change) when git could not be read for some repo.
    """
    after = outcome.workspace_after
    if after is None:
        return None
    dirty = workspace.dirty_paths(after)
    repos = target_repos(ctx, pp)
    default = pp.prompt.targets[0] if pp.prompt.targets else None
    refs = contract_paths(pp, clauses=output_clauses())
    out: dict[str, list[str]] = {}
    for name, repo_dir in repos.items():
        now_dirty = dirty.get(name)
        if now_dirty is None:
            return None
        wanted = outcome.touched.get(name, set()) & now_dirty
        top = workspace.toplevel(repo_dir)
        prefix = repo_dir.resolve().relative_to(top.resolve()) if top else Path()
        for repo_name, path in refs:
            if (repo_name or default) != name:
                continue
            full = (prefix / path).as_posix().strip("/")
            if full in ("", "."):
                continue  # a whole-repo reference names no particular output
            wanted |= {p for p in now_dirty if p == full or p.startswith(full + "/")}
        # prompt-runner's own packet edits (control amend --persist meanwhile) are
        # never a session's work (packet/own_edits.py)
        wanted -= own_edit_paths(ctx.store.root, top if top is not None else repo_dir, wanted)
        out[name] = sorted(wanted)
    return out


def contract_paths(
    pp: PromptPlan, *, clauses: frozenset[str] | None = None
) -> list[tuple[str | None, str]]:
    """``(repo, path)`` pairs named by the prompt's contract (best effort)."""
    out: list[tuple[str | None, str]] = []
    for clause, entries in pp.prompt.contract.to_raw().items():
        if clauses is not None and clause not in clauses:
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            if isinstance(entry, str):
                out.append((None, entry))
            elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
                out.append((entry.get("repo"), entry["path"]))
    return out
