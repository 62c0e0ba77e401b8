"""The locks a run holds while it runs, and the survivors it stops as it takes them.

:func:`hold_locks` is the run pipeline's outer step: the packet's run lock
(``.prompt_runner/run.pid``), then a lock in each target work tree's git dir,
then the agents a dead runner left running are stopped. On the way out the
store is closed (its group-committed writes made durable while the run still
owns the packet) and the locks are released, last taken first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import git
from ..errors import InfrastructureError, LockHeldError, StorageError
from ..planning import Plan
from ..render.text import Console
from ..state._clock import iso_now
from ..state.current_run import read_current_run, write_current_run
from ..state.lock import RunLock
from ..state.records import PromptStatus, RunStatus
from ..state.store import FileStore, LockLike, RuntimeStore
from ..state.usable import prepare_state_dir
from . import orphans
from .lifecycle import selected_target_repos


@dataclass(frozen=True)
class HeldLocks:
    """What :func:`hold_locks` holds for the run.

    Attributes:
        lock: the packet's run lock (a ``NullLock`` for a run that takes none).
        repo_locks: the target work trees' locks, in the order taken.
        agents_dir: the directory this run registers its agents in
            (``.prompt_runner/agents``), or ``None`` when it holds no real
            lock (it then registers none).
    """

    lock: LockLike
    repo_locks: tuple[RunLock, ...]
    agents_dir: Path | None


@contextlib.contextmanager
def hold_locks(p: Plan, store: RuntimeStore, console: Console) -> Iterator[HeldLocks]:
    """Hold the run's locks for the ``with`` body; close ``store`` before releasing them.

    A store close that fails (``StorageError``: a full disk) is raised unless
    the body already failed: the first fault is the one reported. The locks
    are released whatever happens.

    Raises:
        LockHeldError: another live run holds the packet (exit 3).
        InfrastructureError: another live run holds a target work tree (exit 3).
        StorageError: the state directory cannot be prepared (exit 3).
    """
    lock = run_lock(p, store)
    lock.acquire()
    repo_locks: list[RunLock] = []
    failed = False
    try:
        repo_locks = lock_target_repos(p, lock)
        agents_dir = stop_orphaned_agents(p, lock, console)
        yield HeldLocks(lock, tuple(repo_locks), agents_dir)
    except BaseException:
        failed = True
        raise
    finally:
        try:
            store.close()  # may raise StorageError (a full disk): the locks go anyway
        except StorageError:
            if not failed:
                raise
        finally:
            for held in reversed(repo_locks):
                held.release()
            lock.release()


def run_lock(p: Plan, store: RuntimeStore) -> LockLike:
    """The store's run lock; an in-memory run that commits takes the packet's
    ``run.pid`` as a file-store run does, so two runs never commit at once.

    Raises:
        StorageError: the packet's state directory cannot be prepared.
    """
    if store.root is None and p.committer == "git":
        layout = p.state
        prepare_state_dir(layout.root)
        return RunLock(layout.run_pid)
    return store.lock()


def work_tree_lock_file(path: Path) -> Path | None:
    """The run lock of the work tree at ``path``: ``<git dir>/prompt-runner.pid``
    (one git process); ``None`` when git cannot read a git directory there."""
    res = git.run_git(path, "rev-parse", "--absolute-git-dir")
    git_dir = res.stdout.strip()
    return Path(git_dir) / "prompt-runner.pid" if res.ok and git_dir else None


def lock_target_repos(p: Plan, lock: Any) -> list[RunLock]:
    """Holding the packet's lock: also lock each target work tree
    (``<git dir>/prompt-runner.pid``), so two packets never run sessions and
    commit in one work tree at once (each would sweep in the other's files).

    Only runs that hold a real packet lock take them. Returns the locks held.

    Raises:
        InfrastructureError: another live run holds a target work tree (exit 3);
            nothing is left locked.
    """
    if not isinstance(lock, RunLock):
        return []
    held: list[RunLock] = []
    seen: set[str] = set()
    try:
        for name, path in selected_target_repos(p).items():
            if not path.is_dir():
                continue
            lock_file = work_tree_lock_file(path)
            if lock_file is None or str(lock_file) in seen:
                continue
            seen.add(str(lock_file))
            repo_lock = RunLock(lock_file)
            try:
                repo_lock.acquire()
            except LockHeldError as exc:
                raise InfrastructureError(
                    f"repo {name!r} ({path}) is in use by another run (pid {exc.pid}, lock "
                    f"{exc.pid_file}); wait for that run to finish or stop it, then run again"
                ) from None
            held.append(repo_lock)
    except BaseException:
        for repo_lock in reversed(held):
            repo_lock.release()
        raise
    return held


def stop_orphaned_agents(p: Plan, lock: Any, console: Console) -> Path | None:
    """Stop agents a dead runner left running (runner/orphans.py), whatever the run selects.

    A run holding the packet's run lock stops them at once. A run that takes
    no lock (memory store, no commits; or one that selects nothing) takes it
    just for this when agents are registered or a ``run.pid`` is left (a dead
    runner's is then removed); if a live run holds it, the agents are that
    run's and are left alone -- and this run is refused: its sessions would
    work in that run's work trees, whose next commit would take their files
    as its own prompt's.

    Returns the directory this run registers its own agents in, or ``None``
    when the run holds no real lock (then it registers none).

    Raises:
        LockHeldError: a run that takes no lock found a live run holding the
            packet (exit 3).
    """
    layout = p.state
    directory = layout.agents_dir
    if isinstance(lock, RunLock):
        say_stopped(orphans.reap(directory), console)
        return directory
    if orphans.registered(directory) or layout.run_pid.exists():
        # Also a dead runner's run.pid: taken over and released, it is gone.
        own = RunLock(layout.run_pid)
        own.acquire()  # LockHeldError: a live run holds the packet -- never work beside it
        try:
            say_stopped(orphans.reap(directory), console)
        finally:
            own.release()
    return None


def stop_orphans_before_preflight(p: Plan, console: Console) -> None:
    """Before the runtime preflight: stop what a dead runner left registered
    (:func:`stop_orphaned_agents`' work, done early), so a ``git commit`` it
    left in a hook -- which holds ``.git/index.lock`` -- is ended by this run
    as the README says, not reported by preflight as a live git to wait for
    (``run --remaining`` straight after a ``kill -9`` refused, naming ``stop``).

    Holds the packet's run lock just for this; if a live run holds it, the
    registered processes are that run's and are left alone (preflight and
    :func:`hold_locks` then say why this run cannot start). Nothing is done
    when nothing is registered."""
    directory = p.state.agents_dir
    if not orphans.registered(directory):
        return
    own = RunLock(p.state.run_pid)
    try:
        own.acquire()
    except LockHeldError:
        return
    try:
        say_stopped(orphans.reap(directory), console)
    finally:
        own.release()


def close_dead_run(p: Plan, console: Console) -> None:
    """A run that selects nothing under ``--remaining`` closes the current run a
    dead runner left ``running`` (kill -9 after its last prompt ended): every
    prompt is completed, so ``runs/current.json`` says ``completed`` (with
    ``finished_at`` and ``closed_by: "remaining"``) instead of reading
    unhealthy forever (not when ``--phase``/``--from``/``--through`` narrowed
    the selection: other prompts may be unfinished). Whatever the current
    run's status, ``state.json`` is first healed from the prompt logs
    (:meth:`FileStore.heal_summary`): a kill between a prompt's progress line
    and the spaced rewrite leaves it behind. Done holding the run lock; a live
    run's files are left alone.

    Raises:
        StateError: ``runs/current.json`` is damaged.
        StorageError: it cannot be written.
    """
    layout = p.state
    o = p.options
    narrowed = o.phase is not None or o.from_id is not None or o.through_id is not None
    if not o.remaining or not layout.current_run.exists():
        return
    own = RunLock(layout.run_pid)
    try:
        own.acquire()
    except LockHeldError:
        return
    try:
        # state.json may lag behind the logs a dead runner left (its rewrites
        # are spaced), also when the kill came after current.json said the run
        # ended: a run with nothing to select rewrites nothing else
        FileStore(layout.root).heal_summary()
        if narrowed:
            return
        current = read_current_run(layout.current_run) or {}
        if current.get("status") not in (RunStatus.RUNNING, PromptStatus.REPAIRING):
            return
        current.update(
            {"status": RunStatus.COMPLETED, "finished_at": iso_now(), "closed_by": "remaining"}
        )
        write_current_run(layout.current_run, current)
        console.say(
            f"Run {current.get('run_id')} was left running by a runner that died; "
            "every prompt is completed, so it is recorded completed."
        )
    finally:
        own.release()


def _of_run(run_id: object) -> str:
    return f", run {run_id}" if isinstance(run_id, str) and run_id else ""


def say_stopped(records: list[dict[str, Any]], console: Console) -> None:
    """One warning per stopped survivor, naming its pid, prompt and run."""
    for record in records:
        console.say(
            f"warning: stopped {record.get('kind') or 'agent'} pid {record.get('pid')} "
            f"(prompt {record.get('prompt_id')}{_of_run(record.get('run_id'))}) that a runner "
            "which died left running; whatever it wrote stays uncommitted in the work tree"
        )
