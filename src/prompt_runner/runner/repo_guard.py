"""Guards on the target repos the git committer commits to: the runner never
commits elsewhere, never reports uncommitted work as done, and never keeps a
commit a hook broke.

* **Branch and history.** When a run starts, each target repo's branch and
  HEAD are pinned (:class:`~.branch_pins.BranchPins`, read from the ref files: no git
  process on the common path). After every session, a repo on another branch
  (or a detached HEAD), or whose HEAD no longer descends from the pinned one
  (a reset, rebase or amend), fails the session's verdict with a
  ``repo_branch`` item: the prompt is repaired (the repair tells the agent to
  return) or fails, and nothing is committed. The pin moves forward with the
  runner's own commits and with commits a session adds on top.
* **Submodules.** A session that leaves uncommitted work inside a submodule
  of a target repo fails with a ``submodule`` item: the superproject's commit
  cannot take it (README "Submodules"). Not when that submodule (or nested
  clone) is itself one of the prompt's target repos: its work is checked and
  committed there, first, and the superproject's commit then records the new
  pointer.
* **Hooks that rewrite.** After a commit in a work tree with commit hooks,
  :func:`hook_rewrites` says which committed paths differ from what the
  verifier saw; the engine then verifies again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .. import git
from ..committer import CommitResult, GitCommitter
from ..verifier.model import VerifierItem, VerifierReport, item
from . import workspace
from .branch_pins import BranchPins
from .context import RunContext

__all__ = [
    "BranchPins",
    "branch_verdict",
    "commits_whole",
    "hook_rewrites",
    "submodule_failures",
    "submodule_verdict",
]


def submodule_failures(
    after: workspace.Snapshot,
    touched: Mapping[str, set[str]],
    *,
    targeted: Mapping[str, Mapping[str, str]] | None = None,
    declared: Mapping[str, Mapping[str, str]] | None = None,
) -> list[VerifierItem]:
    """Failed ``submodule`` items for the submodules the prompt's sessions left
    with uncommitted work inside.

    Args:
        after: the snapshot after the session.
        touched: per repo, the paths the prompt's sessions changed.
        targeted: per repo, the work trees inside it that are the prompt's own
            target repos (:func:`~.workspace.nested_roots`: path -> repo name);
            their work is theirs to check and commit, never a failure here.
        declared: the same for repos the packet declares and the prompt does
            not target: the item then says to add that repo to the targets.
    """
    out: list[VerifierItem] = []
    for name, value in after.items():
        mine = touched.get(name, set())
        own = (targeted or {}).get(name, {})
        for code, path, _size, _mtime in value[1] if value else ():
            if path.rstrip("/") in own:
                continue
            if path in mine and workspace.uncommitted_submodule(code):
                inner = (declared or {}).get(name, {}).get(path.rstrip("/"))
                out.append(
                    item(
                        "submodule",
                        passed=False,
                        repo=name,
                        path=path,
                        details=_submodule_details(code, path, name, inner),
                    )
                )
    return out


def _submodule_details(code: str, path: str, name: str, inner: str | None = None) -> str:
    """Why the work inside ``path`` cannot be committed, and the fix, by what it is
    (``inner``: the repo the packet declares there, which the prompt does not target)."""
    if inner is not None:
        kind = "a git repository of its own" if code == workspace.NESTED_REPO else "a submodule"
        return (
            f"the session changed files inside {path!r} of repo {name!r}, {kind} that the "
            f"packet declares as repo {inner!r}, which is not one of the prompt's targets; "
            f"nothing commits them there. Add {inner!r} to the prompt's `targets` (the "
            "runner then commits them in it, before the superproject), or make the change "
            "outside it."
        )
    if code == workspace.NESTED_REPO:
        return (
            f"the session changed files inside {path!r} of repo {name!r}, a git repository "
            "of its own inside the work tree (not a submodule: no .gitmodules entry); the "
            "runner's commit cannot take them (git would record a bare gitlink). Make the "
            "change outside it, or make it a submodule "
            f"(`git submodule add <url> {path.rstrip('/')}`)."
        )
    if code == workspace.UNINITIALISED_SUBMODULE:
        return (
            f"the session wrote files into {path!r} of repo {name!r}, a submodule that is not "
            "checked out (cloned without --recursive); no commit takes them. Run "
            f"`git submodule update --init {path.rstrip('/')}` and make the change inside it, "
            "or make it outside the submodule."
        )
    return (
        f"the session left uncommitted changes inside git submodule "
        f"{path!r} of repo {name!r}; the runner commits the superproject, "
        "which cannot take them. Commit them inside the submodule "
        f"(`git -C {path} add -A && git -C {path} commit`) -- the runner "
        "then commits the new submodule pointer -- or make the change "
        "outside the submodule."
    )


def hook_rewrites(
    committer: GitCommitter,
    repos: Mapping[str, Path],
    last: workspace.Snapshot,
    result: CommitResult,
) -> dict[str, list[str]]:
    """Per committed repo with commit hooks, the paths whose committed content
    may differ from what the verifier saw.

    Args:
        committer: the git committer that made ``result``.
        repos: repo name -> directory, as ``last`` was taken.
        last: the snapshot taken after the session, before the commit (what was
            verified: each dirty path with its size and mtime).
        result: the commit.

    Returns:
        A path counts when the commit took it and a hook changed it (its size
        or mtime moved, or it is dirty again), or when the commit holds it
        although the runner did not ask for it (a hook staged it). One ``git
        status`` and one ``git diff-tree`` per such repo; none without hooks.
    """
    out: dict[str, list[str]] = {}
    for name, sha in result.commits.items():
        dirs = committer.locate(repos[name])
        before = last.get(name)
        if dirs is None or before is None or not dirs.has_commit_hooks():
            continue
        rows = {row[1]: row for row in before[1]}
        taken = set(result.paths.get(name, ())) or set(rows)  # empty: the whole tree
        now = workspace.snapshot({name: repos[name]}).get(name)
        dirty_now = {row[1] for row in now[1]} if now else set()
        changed = set(taken & dirty_now)
        for path in taken - dirty_now:
            row = rows.get(path)
            if row is None:
                continue
            try:
                stat = os.lstat(dirs.root / path)
                seen = (stat.st_size, stat.st_mtime_ns)
            except OSError:
                seen = (-1, -1)
            if seen != (row[2], row[3]):
                changed.add(path)
        if result.paths.get(name):
            listed = git.run_git(
                dirs.root, "diff-tree", "-r", "-z", "--root", "--no-commit-id", "--name-only", sha
            )
            committed = {p for p in listed.stdout.split("\0") if p} if listed.ok else set()
            changed |= committed - taken
        if changed:
            out[name] = sorted(changed)
    return out


def commits_whole(ctx: RunContext, repos: Mapping[str, Path]) -> bool:
    """True when a clean session on a clean tree may be committed whole, unseen:
    the git committer, and no commit hook or submodule in any of ``repos``
    (either needs the post-session snapshot: :func:`hook_rewrites`,
    :func:`submodule_failures`)."""
    committer = ctx.committer
    return isinstance(committer, GitCommitter) and committer.plain(repos.values())


def branch_verdict(ctx: RunContext, prompt_id: str, report: VerifierReport) -> VerifierReport:
    """``report`` plus a failed ``repo_branch`` item for each pinned repo that
    left the run's branch or history (said loudly on the console). Every pinned
    repo is checked, not only the prompt's targets: the session that just ran
    moved it, and a later prompt must not be blamed."""
    pins = ctx.pins
    extra = pins.failures(list(pins.pins)) if pins is not None else []
    return _with(ctx, prompt_id, report, extra)


def submodule_verdict(
    ctx: RunContext,
    prompt_id: str,
    report: VerifierReport,
    after: workspace.Snapshot,
    touched: Mapping[str, set[str]],
    repos: Mapping[str, Path],
) -> VerifierReport:
    """``report`` plus a failed ``submodule`` item for each submodule left with
    uncommitted work (git committer only: ``--no-commit`` leaves commits to the
    session). ``repos``: the prompt's target repos (name -> directory); one
    inside another is not that one's submodule failure (:func:`submodule_failures`)."""
    if not isinstance(ctx.committer, GitCommitter):
        return report
    targeted = workspace.nested_roots(repos, repos) if len(repos) > 1 else {}
    extra = submodule_failures(after, touched, targeted=targeted)
    if extra:  # worded by the packet's other repos only when something fails
        others = {n: p for n, p in ctx.plan.packet.repos.items() if n not in repos}
        declared = workspace.nested_roots(repos, others) if others else {}
        if declared:
            extra = submodule_failures(after, touched, targeted=targeted, declared=declared)
    return _with(ctx, prompt_id, report, extra)


def _with(
    ctx: RunContext, prompt_id: str, report: VerifierReport, extra: list[VerifierItem]
) -> VerifierReport:
    if not extra:
        return report
    for each in extra:
        ctx.console.say(f"✗ [{prompt_id}] {each.details}")
    return VerifierReport.of((*report.items, *extra))
