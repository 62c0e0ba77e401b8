"""A workspace repository's clone: what is there (read-only) and how ``prepare`` makes it.

:func:`inspect_clone` reads a clone without writing anything (``git status``
runs with ``GIT_OPTIONAL_LOCKS=0``, so not even the index is refreshed).
:func:`make_clone` and :func:`update_clone` are the only code that writes a
clone, and only ``workspace prepare`` calls them:

- a new clone is a full independent copy: ``git clone --no-hardlinks`` from
  ``source`` (bootstrap) or ``remote``, never ``--reference``/``--shared``, so
  no object is shared with the author's checkout (no hardlinks, no
  ``objects/info/alternates``); its ``origin`` is ``remote``; it is made in a
  temporary directory beside the final one and renamed into place;
- an existing clone is fetched and fast-forwarded only; a dirty, shared or
  foreign (other ``origin``) clone is refused before anything is written.

Every git call passes ``-c gc.auto=0 -c maintenance.auto=false`` and fetches
with ``--no-write-fetch-head``, so a ``prepare`` with nothing new upstream
leaves every file of the clone as it was.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import git, proc
from ..errors import InfrastructureError, UserError
from .model import Repository

CLONE_TIMEOUT_MS = 600_000
"""A clone or fetch may take this long (10 minutes)."""

_QUIET = ("-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "advice.detachedHead=false")


def run(repo: Path, *args: str, timeout_ms: int = CLONE_TIMEOUT_MS) -> proc.ProcResult:
    """``git <_QUIET> <args>`` in ``repo`` with git's non-interactive environment."""
    return proc.run(["git", *_QUIET, *args], cwd=repo, env=git.git_env(), timeout_ms=timeout_ms)


def checked(repo: Path, *args: str, what: str) -> str:
    """:func:`run`, raising when git fails.

    Raises:
        InfrastructureError: naming ``what`` (the repository) and git's reason (exit 3).
    """
    res = run(repo, *args)
    if not res.ok:
        reason = res.start_error or res.stderr.strip() or f"exit {res.returncode}"
        if res.timed_out:
            reason = "timed out"
        raise InfrastructureError(
            f"{what}: `git {' '.join(args)}` failed: {reason.splitlines()[-1]}"
        )
    return res.stdout


@dataclass(frozen=True)
class CloneState:
    """What is at a repository's clone path (read-only).

    Attributes:
        name: the repository.
        path: the clone directory.
        present: something exists there.
        problem: why it cannot be used as this repository's clone (not a
            directory, not an independent clone, shared objects, another
            origin), else ``None``.
        origin: ``remote.origin.url``.
        head: the HEAD sha; ``branch``: the checked-out branch (``None`` detached).
        dirty: the changed and untracked paths (``git status --porcelain``).
        target: the commit the manifest expects under HEAD (``origin/<branch>`` or
            ``origin/<ref>``, else ``<ref>`` itself), ``None`` when it cannot be found.
        ahead, behind: commits of HEAD not in ``target`` and of ``target`` not in
            HEAD (``None`` without a target).
    """

    name: str
    path: Path
    present: bool
    problem: str | None = None
    origin: str | None = None
    head: str | None = None
    branch: str | None = None
    dirty: tuple[str, ...] = ()
    target: str | None = None
    ahead: int | None = None
    behind: int | None = None

    @property
    def usable(self) -> bool:
        """Present with no problem."""
        return self.present and self.problem is None


def alternates_file(clone: Path) -> Path:
    """``<clone>/.git/objects/info/alternates`` (its presence means shared objects)."""
    return clone / ".git" / "objects" / "info" / "alternates"


def inspect_clone(repo: Repository) -> CloneState:
    """Read ``repo``'s clone (nothing is written)."""
    path = repo.clone
    if not os.path.lexists(path):
        return CloneState(repo.name, path, present=False)
    problem = _problem(repo, path)
    if problem is not None:
        return CloneState(repo.name, path, present=True, problem=problem)
    origin = _value(path, "config", "--get", "remote.origin.url")
    if origin != repo.remote:
        return CloneState(
            repo.name,
            path,
            present=True,
            problem=f"its origin is {origin!r}, the manifest's remote is {repo.remote!r}",
            origin=origin,
        )
    target = expected_commit(repo)
    head = git.head_sha(path)
    ahead = behind = None
    if target is not None and head is not None:
        counts = _value(path, "rev-list", "--left-right", "--count", f"{head}...{target}")
        if counts:
            ahead, behind = (int(n) for n in counts.split())
    return CloneState(
        repo.name,
        path,
        present=True,
        origin=origin,
        head=head,
        branch=git.current_branch(path),
        dirty=tuple(e.path for e in git.porcelain_status(path)),
        target=target,
        ahead=ahead,
        behind=behind,
    )


def _problem(repo: Repository, path: Path) -> str | None:
    if path.is_symlink() or not path.is_dir():
        return "is not a directory" if not path.is_symlink() else "is a symbolic link"
    dot_git = path / ".git"
    if not dot_git.is_dir() or dot_git.is_symlink():
        return "is not an independent clone (no .git directory of its own)"
    if alternates_file(path).exists():
        return "shares objects with another repository (objects/info/alternates)"
    if _value(path, "rev-parse", "--show-toplevel") != str(path.resolve()):
        return "is not the top of its own git work tree"
    return None


def _value(path: Path, *args: str) -> str | None:
    res = run(path, *args, timeout_ms=60_000)
    return res.stdout.strip() if res.ok else None


def expected_commit(repo: Repository) -> str | None:
    """The sha HEAD should contain: ``origin/<branch>`` (the work branch, once
    pushed), else ``origin/<ref>``, else ``<ref>`` as a tag or commit."""
    candidates = [f"refs/remotes/origin/{repo.ref}", f"{repo.ref}"]
    if repo.branch:
        candidates.insert(0, f"refs/remotes/origin/{repo.branch}")
    for name in candidates:
        sha = _value(repo.clone, "rev-parse", "--verify", "-q", f"{name}^{{commit}}")
        if sha:
            return sha
    return None


def refuse_unusable(state: CloneState) -> None:
    """Refuse a clone ``prepare`` must not touch: unusable, or dirty.

    Raises:
        UserError: naming the clone, why, and (dirty) its changed paths.
    """
    if state.problem is not None:
        raise UserError(
            f"repository {state.name!r}: {state.path} {state.problem}",
            key=f"repositories.{state.name}",
            fix="move it aside (prepare then clones it afresh), or fix the manifest",
        )
    if state.dirty:
        shown = ", ".join(state.dirty[:10]) + (" ..." if len(state.dirty) > 10 else "")
        raise UserError(
            f"repository {state.name!r}: the clone {state.path} has uncommitted changes "
            f"({len(state.dirty)}: {shown})",
            key=f"repositories.{state.name}",
            fix="this is resumable work: finish the run (or commit or discard the changes "
            "yourself), then prepare again",
        )


def make_clone(repo: Repository) -> list[str]:
    """Clone ``repo`` into its clone path (absent), as the module docstring says.

    Returns what was done, one line each.

    Raises:
        UserError: ``ref`` names no branch, tag or commit the clone holds
            (keyed ``repositories.NAME.ref``; nothing is left at the clone path).
        InfrastructureError: git failed (nothing is left at the clone path).
    """
    path = repo.clone
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{repo.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    what = f"repository {repo.name!r}"
    source = repo.source or repo.remote
    done: list[str] = []
    try:
        checked(
            path.parent,
            "clone",
            "--no-hardlinks",
            "--no-checkout",
            "-q",
            source,
            str(tmp),
            what=what,
        )
        if source != repo.remote:
            checked(tmp, "remote", "set-url", "origin", repo.remote, what=what)
            fetched = run(tmp, "fetch", "-q", "--no-write-fetch-head", "--prune", "origin")
            if not fetched.ok:
                reason = (fetched.stderr.strip().splitlines() or ["failed"])[-1]
                done.append(
                    f"{repo.name}: could not fetch from {repo.remote} ({reason}); "
                    f"kept what {source} has"
                )
        where = repo.remote if source == repo.remote else f"{repo.remote} (cloned from {source})"
        refuse_missing_ref(tmp, repo, where=where)
        checked(tmp, "checkout", "-q", repo.ref, what=what)
        if repo.branch:
            _checkout_branch(tmp, repo, what)
        if alternates_file(tmp).exists():
            raise InfrastructureError(f"{what}: the new clone shares objects (alternates)")
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    via = f" from {source} (origin {repo.remote})" if source != repo.remote else f" from {source}"
    on = f", on branch {repo.branch}" if repo.branch else ""
    done.insert(0, f"{repo.name}: cloned{via} at {repo.ref}{on}")
    return done


def refuse_missing_ref(clone: Path, repo: Repository, *, where: str) -> None:
    """Refuse a manifest ``ref`` that names nothing in ``clone`` (just cloned or
    fetched from ``where``): no ``origin/<ref>`` branch, and no branch, tag or
    commit ``<ref>``.

    Raises:
        UserError: keyed ``repositories.NAME.ref`` (the caller adds the manifest's
            file), listing a few of the branches ``where`` has.
        InfrastructureError: git could not be asked (not started, timed out).
    """
    for name in (f"refs/remotes/origin/{repo.ref}", repo.ref):
        res = run(clone, "rev-parse", "--verify", "-q", f"{name}^{{commit}}", timeout_ms=60_000)
        if res.ok:
            return
        if res.start_error or res.timed_out:
            reason = "timed out" if res.timed_out else res.start_error
            raise InfrastructureError(
                f"repository {repo.name!r}: `git rev-parse {repo.ref}` failed: {reason}"
            )
    listed = _value(clone, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin")
    branches = [b for b in (listed or "").splitlines() if b and b != "HEAD"]
    shown = ", ".join(branches[:5]) + (" ..." if len(branches) > 5 else "")
    has = f" (its branches: {shown})" if branches else ""
    raise UserError(
        f"repository {repo.name!r}: ref {repo.ref!r} names no branch, tag or commit of "
        f"{where}{has}",
        key=f"repositories.{repo.name}.ref",
        fix="set ref to a branch, tag or commit that exists there, or push it first",
    )


def _checkout_branch(clone: Path, repo: Repository, what: str) -> None:
    assert repo.branch is not None
    exists = run(clone, "rev-parse", "--verify", "-q", f"refs/heads/{repo.branch}").ok
    remote = run(clone, "rev-parse", "--verify", "-q", f"refs/remotes/origin/{repo.branch}").ok
    if exists or remote:
        checked(clone, "checkout", "-q", repo.branch, what=what)
    else:
        checked(clone, "checkout", "-q", "-b", repo.branch, what=what)


def update_clone(repo: Repository, state: CloneState) -> list[str]:
    """Fetch ``repo``'s clean clone and fast-forward it (never anything else).

    Returns what changed, one line each (empty: nothing did).

    Raises:
        UserError: ``ref`` names no branch, tag or commit of the fetched clone,
            or the branch has diverged from its upstream (only fast-forwards);
            keyed ``repositories.NAME.ref``, nothing checked out.
        InfrastructureError: git failed.
    """
    path = repo.clone
    what = f"repository {repo.name!r}"
    done: list[str] = []
    before = _value(path, "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes")
    fetched = run(path, "fetch", "-q", "--no-write-fetch-head", "--prune", "origin")
    if not fetched.ok:
        reason = (fetched.stderr.strip().splitlines() or ["failed"])[-1]
        raise InfrastructureError(f"{what}: `git fetch origin` failed: {reason}")
    after = _value(path, "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes")
    if after != before:
        done.append(f"{repo.name}: fetched new commits from {repo.remote}")
    refuse_missing_ref(path, repo, where=repo.remote)
    want_branch = repo.branch or (
        repo.ref
        if run(path, "rev-parse", "--verify", "-q", f"refs/remotes/origin/{repo.ref}").ok
        else None
    )
    if want_branch is not None and state.branch != want_branch:
        if repo.branch:
            _checkout_branch(path, repo, what)
        else:
            checked(path, "checkout", "-q", want_branch, what=what)
        done.append(f"{repo.name}: checked out {want_branch}")
    elif want_branch is None and git.head_sha(path) != _value(
        path, "rev-parse", "--verify", "-q", f"{repo.ref}^{{commit}}"
    ):
        checked(path, "checkout", "-q", repo.ref, what=what)
        done.append(f"{repo.name}: checked out {repo.ref}")
    done.extend(_fast_forward(repo, what))
    return done


def _fast_forward(repo: Repository, what: str) -> list[str]:
    path = repo.clone
    target = expected_commit(repo)
    head = git.head_sha(path)
    if target is None or head is None or target == head:
        return []
    if run(path, "merge-base", "--is-ancestor", target, head).ok:
        return []  # HEAD already holds it (local work on top)
    if not run(path, "merge-base", "--is-ancestor", head, target).ok:
        if repo.branch:
            return [
                f"{repo.name}: the work branch {repo.branch} has diverged from upstream; "
                "left as it is"
            ]
        raise UserError(
            f"repository {repo.name!r}: {repo.ref} in {path} has diverged from origin/{repo.ref}",
            key=f"repositories.{repo.name}.ref",
            fix="prepare only fast-forwards: reconcile the clone by hand, or move it aside",
        )
    checked(path, "merge", "-q", "--ff-only", target, what=what)
    return [f"{repo.name}: fast-forwarded to {target[:12]}"]
