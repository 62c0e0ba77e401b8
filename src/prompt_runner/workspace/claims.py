"""Who else holds a workspace: another manifest registered under its id, a live run.

``workspace prepare`` rewrites the clones (fetch, fast-forward, check out the
work branch, build artifacts in them), so it refuses while either holds the
workspace:

* :func:`refuse_other_manifest` -- the id is registered from another manifest
  that still carries it and shares this one's clones or runtime state (its
  ``workspace_root`` or ``runtime_root``; with ``auto`` roots, always: they
  follow the id); preparing would silently take them over
  (:class:`~prompt_runner.errors.UserError`, exit 2, naming both manifests).
  One whose roots are its own -- a fleet worker's copy of a member, under the
  worker's root -- only takes the registration over, and ``prepare`` says so;
* :func:`refuse_live_run` -- a run of the workspace is live: the detached
  launch's record names a runner that lives (pid + start time; a systemd unit
  that still runs), or a process holds the state's ``run.pid`` -- the same
  test ``start`` refuses a second start by (:class:`RunLiveError`, exit 3,
  naming the run and how to stop it);
* :func:`runs_held_off` -- while prepare writes, it holds the ``flock`` of the
  state directory that every runner takes to take ``run.pid``
  (:meth:`~prompt_runner.state.lock.RunLock.acquire`), so a run started
  meanwhile waits until prepare is done instead of starting on half-updated
  clones; nothing is written to hold it (a second prepare still changes nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StorageError, UserError, shown_path
from .load import load_workspace
from .model import Workspace
from .registry import read_registration, registration_path

if TYPE_CHECKING:
    from ..supervise.start import LiveRun


def other_manifest(ws: Workspace) -> Path | None:
    """The other manifest registered under ``ws.id`` that still carries that id and
    shares ``ws``'s workspace or runtime root, or ``None`` (not registered,
    registered from ``ws``'s own manifest, or from one that is gone, now has
    another id, or keeps its clones and state elsewhere).

    A registered manifest that exists but no longer loads still holds the id: it
    cannot be told apart from one being edited.
    """
    entry = read_registration(registration_path(ws.id))
    if entry is None or _same_file(entry.manifest, ws.manifest_path):
        return None
    if not entry.manifest.is_file():
        return None  # moved or deleted: the id is free
    try:
        other = load_workspace(entry.manifest)
    except UserError:
        return entry.manifest
    if other.id != ws.id:
        return None
    shared = _same_dir(other.workspace_root, ws.workspace_root) or _same_dir(
        other.runtime_root, ws.runtime_root
    )
    return entry.manifest if shared else None


def refuse_other_manifest(ws: Workspace, *, doing: str = "preparing") -> None:
    """Raise when another manifest holds ``ws.id`` (:func:`other_manifest`).

    ``doing`` names what was refused in the sentence (``preparing``, ``starting``).

    Raises:
        UserError: naming this manifest, the other one and the registration
            (exit 2).
    """
    other = other_manifest(ws)
    if other is None:
        return
    raise UserError(
        f"the id {ws.id!r} is already registered from another manifest, {shown_path(other)}, "
        "whose clones and state are these (the same workspace or runtime root); "
        f"{doing} this one would take them over",
        file=ws.manifest_path,
        key="id",
        fix=f"give this manifest an id of its own (and, with explicit roots, roots of its "
        f"own); or, if {shown_path(other)} is no longer used, delete "
        f"{registration_path(ws.id)} and prepare again",
    )


def live_run_of(ws: Workspace) -> LiveRun | None:
    """The run of ``ws`` that lives now, or ``None`` -- as ``start`` finds it."""
    # lazy: ~20 ms of supervise and control that `status --workspace` (which imports
    # plan and prepare through api_workspace) never needs
    from ..supervise.record import read_record
    from ..supervise.start import live_run
    from ..supervise.target import Supervised

    sup = Supervised(
        label=ws.id, state=ws.layout.state, files=ws.layout.supervisor, containment=ws.containment
    )
    return live_run(sup, read_record(sup.files.record))


def refuse_live_run(ws: Workspace, doing: str = "prepare") -> None:
    """Raise when a run of ``ws`` is live (:func:`live_run_of`).

    Args:
        ws: the workspace.
        doing: the command refused, for the sentence (``"prepare"``).

    Raises:
        RunLiveError: naming the run and how to stop it (exit 3).
    """
    found = live_run_of(ws)
    if found is not None:
        from ..supervise.start import RunLiveError  # lazy: loaded by live_run_of already

        raise RunLiveError(live_sentence(ws, found, doing))


def live_sentence(ws: Workspace, found: LiveRun, doing: str = "prepare") -> str:
    """``a run of W is live: pid N (...); prepare rewrites its clones ... stop it first ...``."""
    from ..supervise.hints import command  # lazy: a live run found loaded supervise already

    named = f"--workspace {workspace_ref(ws)}"
    return (
        f"a run of {ws.id} is live: {found.sentence()}; {doing} would rewrite its clones "
        f"under it, so it is refused -- stop the run first (`{command('stop', named)}`) "
        f"or wait for it to end (`{command('watch', named)}`), then {doing} again"
    )


def workspace_ref(ws: Workspace) -> str:
    """How a command typed here names ``ws``: its id when the registry maps it to
    this manifest, else the manifest's path; quoted for the shell."""
    return shlex.quote(ws.id if _registered_here(ws) else shown_path(ws.manifest_path))


@contextlib.contextmanager
def runs_held_off(ws: Workspace, doing: str = "prepare") -> Iterator[None]:
    """Hold the state directory's ``flock`` for the block, after checking again that
    no run is live (one may have started since the first check).

    The state directory must exist (prepare creates it first).

    Raises:
        RunLiveError: a run of ``ws`` is live (exit 3).
        StorageError: the state directory cannot be opened.
    """
    directory = ws.layout.state.run_pid.parent
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StorageError(directory, exc, doing="opened") from exc
    try:
        with contextlib.suppress(OSError):  # a file system without flock: the checks only
            fcntl.flock(fd, fcntl.LOCK_EX)
        refuse_live_run(ws, doing)
        yield
    finally:
        os.close(fd)  # closing the descriptor drops the lock


def _registered_here(ws: Workspace) -> bool:
    entry = read_registration(registration_path(ws.id))
    return entry is not None and _same_file(entry.manifest, ws.manifest_path)


def _same_dir(a: Path, b: Path) -> bool:
    return a == b or _same_file(a, b)


def _same_file(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
