"""The ``changed_paths_only`` clause: the work touched nothing outside an allowed set.

Entry forms: ``"hello.txt"``, ``"docs/"`` or ``"docs"`` (everything below),
a glob (``"out/**/*.json"``, syntax in :mod:`prompt_runner.verifier.globs`),
or ``{path, repo}``. Entries are grouped by repo; each repo gets one item that
compares ``git status --porcelain -uall`` (untracked files listed one by one,
both sides of a rename) with the allowed set. Paths with a ``.prompt_runner``
component (the runner's own state when a packet lives inside a repo) are
ignored. When the repo directory is a subdirectory of a work tree, only
changes below it count, relative to it. A path that already had uncommitted
changes when the prompt started (``VerifyContext.baseline``: the prompt's own
before-snapshot) is not counted while its size and mtime are what they were
then: it is the user's work or an earlier prompt's (left uncommitted by
``--no-commit``, a no-op committer, ``--keep-going`` past a failed prompt or
a rejected commit), and a repair must never be told to revert or delete it.
Such a path the prompt did edit is counted, and the repair is told to undo
only its own edit.

In a run, a contract that runs commands is verified after the runner has
looked at what the prompt's sessions changed (``VerifyContext.own_paths``):
then only the prompt's own paths count -- what its sessions changed, and
what its contract names as outputs (``files_exist``, ``regenerates``, ...;
a path below a named directory too). What a verify command wrote and no
session touched (``coverage.xml``, a ``.cache/`` directory, also from an
earlier attempt's verification) is not the prompt's change: it is never
counted, committed, or to be reverted by a repair.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from prompt_runner import git
from prompt_runner.state.layout import STATE_DIR
from prompt_runner.verifier.clauses.files import PathEntry, parse_path_entries
from prompt_runner.verifier.globs import is_pattern, matches
from prompt_runner.verifier.model import FAULT, ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import RepoDir, repo_for, shown
from prompt_runner.verifier.registry import ClauseSpec, register

KIND = "changed_paths_only"
_LIST_CAP = 20


def allowed(path: str, patterns: Sequence[str]) -> bool:
    """True when ``path`` equals, lies below, or glob-matches one of ``patterns``."""
    for p in patterns:
        if path == p or path.startswith(p.rstrip("/") + "/"):
            return True
        if is_pattern(p) and matches(p, path):
            return True
    return False


def _owned(path: str, own: Collection[str]) -> bool:
    """True when ``path`` or a directory above it is one of ``own``."""
    while True:
        if path in own:
            return True
        cut = path.rfind("/")
        if cut <= 0:
            return False
        path = path[:cut]


def _changed(
    repo: RepoDir, before: Mapping[str, tuple[int, int]], own: Collection[str] | None = None
) -> tuple[list[str], set[str]]:
    """The changed paths (relative to ``repo``) and those of them that were
    already dirty before the prompt started (edited again since). ``own``
    (work-tree-root relative): when given, only these paths (and those below
    them) are the prompt's; the rest are not counted."""
    prefix = git.show_prefix(repo.root)
    paths: list[str] = []
    earlier: set[str] = set()
    for entry in git.porcelain_status(repo.root):
        for p in (entry.path, entry.orig_path):
            if p is None or not p.startswith(prefix):
                continue
            rel = p[len(prefix) :]
            if STATE_DIR in rel.split("/") or rel in paths:
                continue
            if own is not None and not _owned(p, own):
                continue  # not the prompt's work: a verify command's file, the user's
            if p in before:
                if _stat(repo.root / rel) == before[p]:
                    continue  # uncommitted before the prompt started, untouched since
                earlier.add(rel)
            paths.append(rel)
    return paths, earlier


def _stat(path: Path) -> tuple[int, int]:
    """``(size, mtime_ns)`` of ``path`` (``(-1, -1)`` when it is gone), as snapshots record it."""
    try:
        st = os.lstat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def _listed(paths: Sequence[str]) -> str:
    head = ", ".join(paths[:_LIST_CAP])
    return head + (f" (+{len(paths) - _LIST_CAP} more)" if len(paths) > _LIST_CAP else "")


def _check(entries: Sequence[ClauseEntry], ctx: VerifyContext) -> list[VerifierItem]:
    groups: dict[str | None, list[str]] = {}
    for e in entries:
        assert isinstance(e, PathEntry)
        key = e.repo if e.repo is not None else ctx.default_repo
        groups.setdefault(key, []).append(e.path)
    items: list[VerifierItem] = []
    for name, patterns in groups.items():
        found = repo_for(KIND, name, ctx)
        if isinstance(found, VerifierItem):
            items.append(found)
            continue
        before = (ctx.baseline or {}).get(found.name, {})
        own = ctx.own_paths.get(found.name) if ctx.own_paths is not None else None
        run = ctx.baseline is not None or own is not None
        items.append(_check_repo(found, patterns, before, own, in_run=run))
    return items


def _check_repo(
    repo: RepoDir,
    patterns: list[str],
    before: Mapping[str, tuple[int, int]],
    own: Collection[str] | None = None,
    *,
    in_run: bool = True,
) -> VerifierItem:
    """``in_run``: whether anything tells the prompt's changes from others'
    (``baseline`` or ``own``); without it (``prompt-runner verify``) every
    uncommitted change counts, and the details say so rather than telling
    the user to delete what may be their own files."""
    base: dict[str, Any] = {"repo": repo.name, "allowed": list(patterns)}
    if not git.is_git_repo(repo.root):
        return item(KIND, passed=False, details=f"not a git repository: {repo.root}", **base)
    try:
        changed, earlier = _changed(repo, before, own)
    except git.GitError as exc:
        return item(KIND, passed=False, verdict=FAULT, details=f"verifier_fault: {exc}", **base)
    outside = [p for p in changed if not allowed(p, patterns)]
    if outside and not in_run:
        details = (
            f"changed outside the allowed set: {_listed(outside)} (allowed: "
            f"{', '.join(patterns)}); outside a run every uncommitted change counts, "
            "yours too: commit or stash your own changes, revert the prompt's"
        )
    elif outside:
        details = _outside_details(outside, earlier, patterns)
    elif changed:
        details = f"all {len(changed)} changed path(s) allowed: {_listed(changed)}"
    else:
        details = "no changed paths"
    return item(
        KIND, passed=not outside, details=details, changed=changed, disallowed=outside, **base
    )


def _outside_details(outside: list[str], earlier: set[str], patterns: list[str]) -> str:
    """What a repair is told: undo the prompt's own changes; never delete earlier work."""
    own = [p for p in outside if p not in earlier]
    kept = [p for p in outside if p in earlier]
    allowed_text = ", ".join(patterns)
    details = f"changed outside the allowed set: {_listed(outside)} (allowed: {allowed_text})"
    if not kept:
        return details + "; revert those changes or delete those files"
    if own:
        details += f"; revert this prompt's changes to, or delete, {_listed(own)}"
    return details + (
        f"; {_listed(kept)} already had uncommitted changes when this prompt started "
        "(earlier work, not this prompt's): restore them by undoing only this prompt's "
        "edits, never delete them"
    )


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, PathEntry)
    return f"changed path allowed: {shown(entry.repo, entry.path, default_repo)}"


register(ClauseSpec(KIND, 110, parse_path_entries, _check, _label, names_outputs=True))
