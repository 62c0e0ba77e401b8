"""Guards on the target repos the git committer commits to: the runner never
commits elsewhere, never reports uncommitted work as done, and never keeps a
commit a hook broke.

* **Branch and history.** When a run starts, each target repo's branch and
  HEAD are pinned (:class:`BranchPins`, read from the ref files: no git
  process on the common path). After every session, a repo on another branch
  (or a detached HEAD), or whose HEAD no longer descends from the pinned one
  (a reset, rebase or amend), fails the session's verdict with a
  ``repo_branch`` item: the prompt is repaired (the repair tells the agent to
  return) or fails, and nothing is committed. The pin moves forward with the
  runner's own commits and with commits a session adds on top.
* **Submodules.** A session that leaves uncommitted work inside a submodule
  of a target repo fails with a ``submodule`` item: the superproject's commit
  cannot take it (README "Submodules").
* **Hooks that rewrite.** After a commit in a work tree with commit hooks,
  :func:`hook_rewrites` says which committed paths differ from what the
  verifier saw; the engine then verifies again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import git
from ..committer import CommitResult, GitCommitter, RepoDirs, read_head
from ..verifier.model import VerifierItem, VerifierReport, item
from . import workspace
from .context import RunContext


@dataclass
class Pin:
    """Where one target repo was when the run started.

    Attributes:
        path: the repo directory.
        dirs: its work tree's git directories.
        branch: the checked-out branch (``main``), ``None`` on a detached HEAD.
        head: the last HEAD known to be on the run's line of history
            (``None`` before the first commit).
    """

    path: Path
    dirs: RepoDirs
    branch: str | None
    head: str | None


def _branch(pin_path: Path, dirs: RepoDirs) -> str | None:
    """The branch ``HEAD`` names, read from ``<git dir>/HEAD`` (git when unclear)."""
    try:
        text = (dirs.git_dir / "HEAD").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if text.startswith("ref: refs/heads/") and text != "ref: refs/heads/.invalid":
        return text[len("ref: refs/heads/") :]
    if len(text) in (40, 64) and not text.startswith("ref: "):
        return None  # detached
    return git.current_branch(pin_path)  # reftable or an unusual HEAD


def _head(pin_path: Path, dirs: RepoDirs) -> str | None:
    return read_head(dirs.git_dir, dirs.common_dir) or git.head_sha(pin_path)


def _descends(root: Path, old: str, new: str) -> bool:
    """True when commit ``new`` has ``old`` in its history (``git merge-base --is-ancestor``)."""
    return git.run_git(root, "merge-base", "--is-ancestor", old, new).returncode == 0


def _where(branch: str | None, head: str | None) -> str:
    if branch is not None:
        return f"branch {branch!r}"
    return f"a detached HEAD ({head[:12] if head else 'no commit'})"


class BranchPins:
    """Each target repo's branch and HEAD, pinned at run start (see the module doc)."""

    def __init__(self, pins: Mapping[str, Pin]) -> None:
        self.pins = dict(pins)

    @classmethod
    def start(cls, committer: GitCommitter, repos: Mapping[str, Path]) -> BranchPins:
        """Pin ``repos`` (name -> directory); repos that are not git work trees are skipped."""
        pins: dict[str, Pin] = {}
        for name, path in repos.items():
            dirs = committer.locate(path)
            if dirs is not None:
                pins[name] = Pin(path, dirs, _branch(path, dirs), _head(path, dirs))
        return cls(pins)

    def detached(self) -> list[str]:
        """Warnings for the pinned repos that are on a detached HEAD."""
        return [
            f"repo {name!r} ({pin.path}) is on a detached HEAD "
            f"({pin.head[:12] if pin.head else 'no commit'}): its prompts' commits land on "
            "no branch; check out a branch first if the work should land on one"
            for name, pin in self.pins.items()
            if pin.branch is None
        ]

    def moved(self, names: Iterable[str]) -> dict[str, str]:
        """Per repo of ``names`` that left the run's branch or history, a sentence
        saying where it is and how to return. A repo whose HEAD moved forward on
        the pinned branch (a session's own commit) moves its pin along."""
        out: dict[str, str] = {}
        for name in names:
            pin = self.pins.get(name)
            if pin is None:
                continue
            branch, head = _branch(pin.path, pin.dirs), _head(pin.path, pin.dirs)
            started = _where(pin.branch, pin.head)
            if branch != pin.branch:
                back = f"git switch {pin.branch}"
                if pin.branch is None:
                    back = f"git switch --detach {pin.head}"
                out[name] = (
                    f"repo {name!r} is on {_where(branch, head)}, but the run started on "
                    f"{started}; the runner commits only there. Return with `{back}` "
                    "(bring your uncommitted changes along) and redo any commit made "
                    "elsewhere on it."
                )
            elif head != pin.head and pin.head is not None:
                if head is not None and _descends(pin.dirs.root, pin.head, head):
                    pin.head = head  # a commit on top: still the run's history
                    continue
                out[name] = (
                    f"the history of repo {name!r} was rewritten: HEAD "
                    f"{head[:12] if head else '(none)'} no longer contains {pin.head[:12]}, "
                    f"where the run left {started} (a reset, rebase or amend). Restore it "
                    f"with `git reset --keep {pin.head}` (uncommitted changes are kept) and "
                    "redo the work without rewriting history."
                )
        return out

    def failures(self, names: Iterable[str]) -> list[VerifierItem]:
        """:meth:`moved` as failed ``repo_branch`` verifier items (a repair acts on them)."""
        return [
            item("repo_branch", passed=False, repo=name, details=sentence)
            for name, sentence in self.moved(names).items()
        ]

    def committed(self, heads: Mapping[str, str]) -> None:
        """The runner committed: ``heads`` (repo name -> new HEAD) are the pins now."""
        for name, sha in heads.items():
            if name in self.pins:
                self.pins[name].head = sha


def submodule_failures(
    after: workspace.Snapshot, touched: Mapping[str, set[str]]
) -> list[VerifierItem]:
    """Failed ``submodule`` items for the submodules the prompt's sessions left
    with uncommitted work inside (``touched``: per repo, the paths they changed)."""
    out: list[VerifierItem] = []
    for name, value in after.items():
        mine = touched.get(name, set())
        for code, path, _size, _mtime in value[1] if value else ():
            if path in mine and workspace.uncommitted_submodule(code):
                out.append(
                    item(
                        "submodule",
                        passed=False,
                        repo=name,
                        path=path,
                        details=(
                            f"the session left uncommitted changes inside git submodule "
                            f"{path!r} of repo {name!r}; the runner commits the superproject, "
                            "which cannot take them. Commit them inside the submodule "
                            f"(`git -C {path} add -A && git -C {path} commit`) -- the runner "
                            "then commits the new submodule pointer -- or make the change "
                            "outside the submodule."
                        ),
                    )
                )
    return out


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
    pins: BranchPins | None = ctx.state_view.get("pins")
    extra = pins.failures(list(pins.pins)) if pins is not None else []
    return _with(ctx, prompt_id, report, extra)


def submodule_verdict(
    ctx: RunContext,
    prompt_id: str,
    report: VerifierReport,
    after: workspace.Snapshot,
    touched: Mapping[str, set[str]],
) -> VerifierReport:
    """``report`` plus a failed ``submodule`` item for each submodule left with
    uncommitted work (git committer only: ``--no-commit`` leaves commits to the session)."""
    if not isinstance(ctx.committer, GitCommitter):
        return report
    return _with(ctx, prompt_id, report, submodule_failures(after, touched))


def _with(
    ctx: RunContext, prompt_id: str, report: VerifierReport, extra: list[VerifierItem]
) -> VerifierReport:
    if not extra:
        return report
    for each in extra:
        ctx.console.say(f"✗ [{prompt_id}] {each.details}")
    return VerifierReport.of((*report.items, *extra))
