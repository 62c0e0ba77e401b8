"""Can the workspace's packet run here? The sentences plan, prepare, doctor and start share.

Three things stop a run of a workspace before any runner could start, each
the manifest's bad input (a :class:`~prompt_runner.errors.UserError`, exit 2,
naming the manifest, the key and the fix):

* :func:`root_problems` -- ``operator.workspace_root`` or
  ``operator.runtime_root`` is (or lies under) something that is not a
  directory, so nothing can be cloned or recorded there;
* :func:`unprepared` -- a repository's clone is missing: the workspace was
  never prepared (or its clones were removed);
* :func:`packet_problem` -- the packet's clone is there, but ``packet.path``
  is not a packet directory in it.

:func:`refuse_unready` raises the first of them; ``start`` calls it before it
launches anything (``api_supervise``), so a runner never starts in a directory
that is not there. :func:`root_notes` says what is worth knowing about a root
but stops nothing (one inside a git work tree).
Reading only: nothing here writes.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from ..errors import UserError, shown_path
from ..file_kinds import refused_directory
from ..paths import MANIFEST_NAME
from .model import Workspace

__all__ = [
    "make_root",
    "packet_problem",
    "refuse_unready",
    "root_notes",
    "root_problems",
    "unprepared",
]


def root_problems(ws: Workspace) -> list[UserError]:
    """One error per root of ``ws`` that is, or lies under, an existing non-directory.

    A root that does not exist yet is fine (``prepare`` creates it).

    Returns:
        ``[]``, or a :class:`UserError` keyed ``operator.workspace_root`` /
        ``operator.runtime_root`` each, naming the file in the way.
    """
    problems = []
    for key, root in _roots(ws):
        blocker = _non_directory(root)
        if blocker is None:
            continue
        kind = "a file" if blocker.is_file() else "not a directory"
        where = f"is {kind}" if blocker == root else f"lies under {blocker}, which is {kind}"
        problems.append(
            _root_error(
                ws,
                key,
                f"{root} {where}",
                f"a directory (or `auto`), or move {blocker} out of the way",
            )
        )
    return problems


def make_root(ws: Workspace, key: str) -> None:
    """Create the root of ``ws`` that ``key`` (``operator.workspace_root`` /
    ``operator.runtime_root``) names, with its parents.

    Raises:
        UserError: the place cannot take a directory for its own reason (not
            writable, a read-only file system, a file system that makes none
            there such as ``/proc``): the manifest's bad input, keyed ``key``.
        OSError: a fault of the storage itself (a full disk, an I/O error).
    """
    root = dict(_roots(ws))[key]
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        problems = [p for p in root_problems(ws) if p.key == key]
        if problems:  # a file appeared in the way meanwhile
            raise problems[0] from None
        why = refused_directory(exc.errno)
        if why is None:
            raise
        raise _root_error(ws, key, f"{root} {why[0]}", f"{why[1]} (or `auto`)") from None


def _root_error(ws: Workspace, key: str, what: str, instead: str) -> UserError:
    """The refusal of the root ``key``: ``what`` is wrong with it (``/x is a
    file``), ``instead`` what to set it to (``a directory (or `auto`), or ...``)."""
    kept = "clones" if key.endswith("workspace_root") else "runtime state"
    return UserError(
        f"{what}, so the workspace's {kept} cannot be kept there",
        file=ws.manifest_path,
        key=key,
        fix=f"set {key} to {instead}",
    )


def root_notes(ws: Workspace) -> list[str]:
    """A sentence per root of ``ws`` that lies inside a git work tree or a bare
    repository (found by walking up from its nearest existing directory to a
    ``.git`` entry, or a directory holding ``HEAD``, ``objects`` and ``refs``):
    the clones and state would show there as untracked files, or sit among git's
    own data. Not refused -- a work tree that ignores the directory is a choice --
    but said by ``plan`` and ``prepare``."""
    notes = []
    for key, root in _roots(ws):
        holder = _git_holder(root)
        if holder is None:
            continue
        what, kind = holder
        notes.append(
            f"{key} ({root}) lies inside the git {kind} {what}: what the workspace keeps there "
            f"shows in it{' as untracked files' if kind == 'work tree' else ''}; set {key} "
            f"outside it (or `auto`), or have that {kind} ignore it"
        )
    return notes


def _roots(ws: Workspace) -> tuple[tuple[str, Path], ...]:
    """``(manifest key, directory)`` of each of ``ws``'s two roots."""
    return (
        ("operator.workspace_root", ws.workspace_root),
        ("operator.runtime_root", ws.runtime_root),
    )


def _git_holder(root: Path) -> tuple[Path, str] | None:
    """``(directory, "work tree" | "bare repository")`` holding ``root``, or ``None``."""
    place = root
    while not place.exists() and place != place.parent:
        place = place.parent
    for directory in (place, *place.parents):
        if (directory / ".git").exists():
            return directory, "work tree"
        if all((directory / name).exists() for name in ("HEAD", "objects", "refs")):
            return directory, "bare repository"
    return None


def unprepared(ws: Workspace, *, then: str = "start it again") -> UserError | None:
    """The error of a workspace whose clones are missing (never prepared), else
    ``None``; its fix ends with ``then`` (what to do once it is prepared)."""
    missing = [name for name in ws.repositories if not ws.clone(name).is_dir()]
    if not missing:
        return None
    names = ", ".join(repr(name) for name in missing)
    what = "the clone" if len(missing) == 1 else "the clones"
    return UserError(
        f"workspace {ws.id} is not prepared: {what} of {names} "
        f"({shown_path(ws.clone(missing[0]))}{', ...' if len(missing) > 1 else ''}) "
        f"{'does' if len(missing) == 1 else 'do'} not exist",
        file=ws.manifest_path,
        fix=f"prepare it first (`{prepare_command(ws)}`), then {then}",
    )


def packet_problem(ws: Workspace) -> UserError | None:
    """The error of a ``packet.path`` that names no packet directory in its
    (existing) clone, else ``None`` (also while the clone is missing)."""
    clone = ws.clone(ws.packet_repo)
    if not clone.is_dir():
        return None
    where = f"in the clone of {ws.packet_repo!r} ({shown_path(ws.packet_dir)})"
    if not ws.packet_dir.is_dir():
        reason = f"{ws.packet_path!r} is not a directory {where}"
    elif not (ws.packet_dir / MANIFEST_NAME).is_file():
        reason = f"{ws.packet_path!r} holds no {MANIFEST_NAME} {where}"
    else:
        return None
    return UserError(
        reason,
        file=ws.manifest_path,
        key="packet.path",
        fix=f"set packet.path to the packet's directory, relative to the root of "
        f"repository {ws.packet_repo!r} (the directory holding its {MANIFEST_NAME})",
    )


def refuse_unready(ws: Workspace) -> None:
    """Raise when a run of ``ws`` cannot start: a root that is not a directory,
    a clone that is missing, a ``packet.path`` that is no packet.

    Raises:
        UserError: the first of :func:`root_problems`, :func:`unprepared`,
            :func:`packet_problem` (exit 2; nothing is written).
    """
    for problem in (*root_problems(ws), unprepared(ws), packet_problem(ws)):
        if problem is not None:
            raise problem


def prepare_command(ws: Workspace) -> str:
    """``prompt-runner workspace prepare MANIFEST``, as it works typed here."""
    return f"prompt-runner workspace prepare {shlex.quote(shown_path(ws.manifest_path))}"


def _non_directory(path: Path) -> Path | None:
    """The first of ``path`` and its parents that exists and is not a directory
    (``None``: the nearest existing one is a directory)."""
    # One stat per candidate, so a directory another process creates meanwhile
    # (a fleet prepares its members at once) is never taken for a file.
    for candidate in (path, *path.parents):
        try:
            mode = os.stat(candidate).st_mode
        except (FileNotFoundError, NotADirectoryError):  # missing, or under a file
            if os.path.islink(candidate):
                return candidate  # a link to nothing is in the way
            continue
        except OSError:
            return None
        return None if stat.S_ISDIR(mode) else candidate
    return None
