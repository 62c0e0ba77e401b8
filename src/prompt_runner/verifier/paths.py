"""Repo scoping and path containment at verify time.

Paths were validated at load time (relative, no ``..``), but a session can
create symlinks, so containment is checked again here against the real path:
a path whose real location is outside its repo is an item failure, and the
verifier never reads it. A path inside a git directory (``.git``) is git's
own data, not work: refused the same way. :func:`refusal` is the one rule;
the simulated provider applies it to its writes too.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_runner.verifier.model import VerifierItem, VerifyContext, item


@dataclass(frozen=True)
class RepoDir:
    """A resolved repo: logical ``name`` and absolute ``root``."""

    name: str
    root: Path


def repo_for(
    kind: str, repo: str | None, ctx: VerifyContext, **fields: Any
) -> RepoDir | VerifierItem:
    """Resolve an entry's repo (``None`` = the prompt's first target).

    Returns the :class:`RepoDir`, or a failure item (``missing_repo`` set) when
    the name is unknown, no default exists, or the directory is missing.
    """
    name = repo if repo is not None else ctx.default_repo
    if name is None:
        return item(
            kind,
            passed=False,
            details="no repo: the entry has no `repo:` and the prompt has no targets",
            missing_repo=True,
            **fields,
        )
    root = ctx.repos.get(name)
    if root is None:
        known = ", ".join(sorted(ctx.repos)) or "none"
        return item(
            kind,
            passed=False,
            repo=name,
            details=f"missing_repo: unknown repo {name!r} (known: {known})",
            missing_repo=True,
            **fields,
        )
    if not Path(root).is_dir():
        return item(
            kind,
            passed=False,
            repo=name,
            details=f"missing_repo: repo {name!r} directory {root} "
            + ("is a file, not a directory" if Path(root).exists() else "does not exist"),
            missing_repo=True,
            **fields,
        )
    return RepoDir(name, Path(root))


GIT_DIR = ".git"
IN_GIT_DIR = "is inside a git directory (.git), which holds git's own data, not work"


def contained(root: Path, candidate: Path) -> bool:
    """True when the real path of ``candidate`` is ``root`` or inside it (symlinks followed)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(candidate)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def refusal(root: Path, rel: str) -> str | None:
    """Why ``root / rel`` is not the repo's work to read or write; ``None`` when it is.

    Refused, by the verifier (reads) and the simulated provider (writes) alike:
    a path whose real location (every symlink followed, including one created
    after load time) is outside ``root``, and a path inside a git directory
    (a ``.git`` component in ``rel`` or in its real location below ``root``).

    Returns a phrase that completes "path REL ...", e.g. ``"escapes the repo
    through a symlink (resolves to /tmp/x)"`` or :data:`IN_GIT_DIR`.
    """
    return refusal_below(os.path.realpath(root), root, rel)


def refusal_below(real_root: str, root: str | os.PathLike[str], rel: str) -> str | None:
    """:func:`refusal` with the real path of ``root`` already known (``real_root``:
    ``os.path.realpath(root)``), for many paths of one repo.

    The real path of ``root / rel`` is ``real_root`` joined with ``rel``'s
    parts unless one of them, below the root, is a symlink (``lstat``; a part
    that is not there cannot be one, nor can anything below it); only then is
    it worked out by ``os.path.realpath``, which gives the same answer for the
    rest, one ``lstat`` per part of the whole path.
    """
    parts = [part for part in rel.split(os.sep) if part and part != os.curdir]
    real: str | None = None
    below: list[str] | None = None
    if os.pardir not in parts and not os.path.isabs(rel):
        current = real_root
        for part in parts:
            current = os.path.join(current, part)
            try:
                if stat.S_ISLNK(os.lstat(current).st_mode):
                    break
            except OSError:
                real = os.path.join(real_root, *parts)  # nothing below can exist
                break
        else:
            real = current
        if real is not None:
            below = parts or [os.curdir]  # what relpath(real, real_root) splits into
    if real is None:
        real = os.path.realpath(Path(root) / rel)  # Path's join: `a//b` is `a/b`
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return f"escapes the repo through a symlink (resolves to {real})"
    if below is None:
        below = os.path.relpath(real, real_root).split(os.sep)
    if GIT_DIR in rel.replace("\\", "/").split("/") or GIT_DIR in below:
        return IN_GIT_DIR
    return None


def inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` when :func:`refusal` has nothing against it, else ``None``."""
    return root / rel if refusal(root, rel) is None else None


def refused_text(what: str, rel: str, repo: RepoDir) -> str:
    """``"WHAT REL escapes repo 'app' through a symlink (...)"`` (or is in .git), for details."""
    why = refusal(repo.root, rel) or "is refused"
    return f"{what} {rel} {why.replace('the repo', f'repo {repo.name!r}', 1)}"


def escape_item(kind: str, repo: RepoDir, rel: str) -> VerifierItem:
    """The failure item for a path :func:`refusal` refuses (outside its repo, or in .git)."""
    fix = (
        "name a path of the work tree instead"
        if refusal(repo.root, rel) == IN_GIT_DIR
        else "replace the symlink with a real file inside the repo"
    )
    return item(
        kind,
        passed=False,
        repo=repo.name,
        path=rel,
        details=f"{refused_text('path', rel, repo)}; it was not read -- {fix}",
        escapes_repo=True,
    )


def locate(
    kind: str, repo: str | None, rel: str, ctx: VerifyContext, **fields: Any
) -> tuple[RepoDir, Path] | VerifierItem:
    """Resolve ``rel`` in the entry's repo, or return the failure item (unknown repo, escape)."""
    found = repo_for(kind, repo, ctx, path=rel, **fields)
    if isinstance(found, VerifierItem):
        return found
    target = inside(found.root, rel)
    if target is None:
        return escape_item(kind, found, rel)
    return found, target


def shown(repo: str | None, path: str, default_repo: str | None) -> str:
    """A checklist's name for an entry's path: ``repo:path`` when the entry names a repo.

    An entry that names its repo keeps the name even when it is the prompt's
    default repo, as the reference's ``checklist sync`` writes it
    (``alpha:NOTES.md``); an entry without ``repo:`` is the bare path.
    ``default_repo`` is accepted for the labelers' common signature.
    """
    del default_repo
    return f"{repo}:{path}" if repo is not None else path
