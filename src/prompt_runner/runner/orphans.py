"""Agents and verify commands left running by a runner that died, stopped by the next run.

Agent CLIs run in their own process group, so Ctrl-C on a terminal reaches
only the runner, which then ends the group itself. A runner killed outright
(``kill -9``, the OOM killer) cannot: its agent keeps running, keeps writing
into the target repos, and its late work would land in a later prompt's
commit. So every live agent session is registered while it runs --
``<state>/agents/<pid>.json`` with the pid and the process's start time --
and the registration is removed when the session ends. The next run, once it
holds the run lock (so the writer is known dead), stops every registered
agent that is still the same process (pid *and* start time match, so a
recycled pid is never touched) with its whole group, and says so.

The committer's ``git commit`` is registered the same way (``kind: "git
commit"``) in a work tree with commit hooks, in the registry the run reaped
as it started (``committer.register_commits_with``): a runner killed while a hook runs
leaves the commit, the hook and its children in the commit's group, which
``stop`` or the next run ends, so the orphaned commit never lands.

Verify commands are registered the same way (``kind: "verify command"``):
by runs while they verify, and by ``verify``, which holds no lock -- so a
record whose registering process is still alive (pid and start time) is
never touched. Both end their children's groups on Ctrl-C and SIGTERM
themselves (:func:`prompt_runner.proc.run`); the registry is for ``kill -9``.
What such a child started outside its group (``setsid``) is found as ``stop``
finds a run's processes (``supervise/members.py``: the group's and session's
members, their descendants, the detached launch's marker recorded with the
registration) before the group is stopped, and stopped too.

Only runs that hold the run lock register agents (file-store runs, and runs
that commit); in-process sessions (the simulated provider) have no pid. Every
run and repair stops survivors when it starts, whatever it selects -- also a
run that finds nothing to do, and one that takes no lock (it takes the lock
just to reap, and leaves the agents alone if a live run holds it).

``supervise.members`` (with the ``supervise`` package it loads, ~11 ms) is
imported only to reap a registered process: a run whose registry is empty never
loads it. Registering takes only ``psutil`` (~16 ms to import), imported when
an agent's :func:`registrar` is made -- before the agent starts, so it is
registered as soon after its start as ever -- and by a verify command's when
the first command starts; a run of in-process sessions (the simulated
provider) whose contracts run no command never loads it. The record names the marker
variable as :data:`MARKER_ENV`, the same name as ``members.MARKER_ENV``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import proc
from ..state.atomic import write_json_atomic

if TYPE_CHECKING:
    from ..supervise import members

STOP_GRACE_S = 2.0

MARKER_ENV = "PROMPT_RUNNER_SUPERVISED_RUN"
"""``supervise.members.MARKER_ENV`` (a test pins them equal): named here so that
registering a child does not import the ``supervise`` package."""


AGENT = "agent"
VERIFY_COMMAND = "verify command"
GIT_COMMIT = "git commit"
"""The committer's ``git commit`` in a work tree with commit hooks (``committer.py``):
a runner killed while a hook runs would leave it, the hook and the hook's
children running, and the orphaned commit would land later."""


def register(
    directory: Path, pid: int, *, run_id: str, prompt_id: str, kind: str = AGENT
) -> Path | None:
    """Record a live child (its pid is its process-group id); returns the record's path.

    Args:
        kind: what it is, for the message that names it when it is stopped:
            :data:`AGENT` or :data:`VERIFY_COMMAND`.

    Returns ``None`` when the process is already gone (nothing to record).
    Raises ``OSError`` when the record cannot be written.
    """
    import psutil  # lazy: see the module doc

    try:
        created = psutil.Process(pid).create_time()
        runner_created = psutil.Process(os.getpid()).create_time()
    except psutil.Error:
        return None
    path = directory / f"{pid}.json"
    record = {
        "schema_version": 1,
        "kind": kind,
        "pid": pid,
        "create_time": created,
        "run_id": run_id,
        "prompt_id": prompt_id,
        "runner_pid": os.getpid(),
        "runner_create_time": runner_created,
        "marker": os.environ.get(MARKER_ENV),
    }
    write_json_atomic(path, record)
    return path


def registrar(
    directory: Path,
    *,
    run_id: str,
    prompt_id: str,
    kind: str,
    warn: Callable[[str], None] | None = None,
    preload: bool = True,
) -> Callable[[int], Callable[[], None] | None]:
    """A :func:`prompt_runner.proc.run` ``on_start`` hook: register each child while it runs.

    A record that cannot be written is reported through ``warn`` (the child
    still runs, unregistered). ``preload``: import ``psutil`` now, before the
    child starts (an agent, which surely starts), rather than in the moment
    between its start and its record (a verify command, which most contracts
    never run: it pays the import only when one starts).
    """
    if preload:
        import psutil  # noqa: F401 -- lazy: loaded before the child starts, not in its window

    def on_start(pid: int) -> Callable[[], None] | None:
        try:
            path = register(directory, pid, run_id=run_id, prompt_id=prompt_id, kind=kind)
        except OSError as exc:
            if warn is not None:
                warn(f"warning: could not register {kind} pid {pid}: {exc}")
            return None
        return lambda: unregister(path)

    return on_start


def unregister(path: Path | None) -> None:
    """Forget a registered agent (its session ended); never raises."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _current_run_id(state_root: Path) -> str:
    """The id of the run ``runs/current.json`` names (the one committing), or ``""``
    when it cannot be read (the stop message then names no run)."""
    from ..errors import StateError
    from ..state.current_run import read_current_run
    from ..state.layout import StateLayout

    try:
        current = read_current_run(StateLayout(state_root).current_run) or {}
    except StateError:
        return ""
    run_id = current.get("run_id")
    return run_id if isinstance(run_id, str) else ""


def registered(directory: Path) -> bool:
    """Whether any agent is registered in ``directory`` (cheap; takes no lock)."""
    try:
        return any(directory.glob("*.json"))
    except OSError:
        return False


def reap(directory: Path) -> list[dict[str, Any]]:
    """Stop every registered agent that is still running; clear the registry.

    Call only while holding the run lock (the runner that registered them is
    then dead). Returns the records of the agents that were stopped (TERM to
    the group, then KILL after :data:`STOP_GRACE_S` seconds).
    """
    from .. import committer  # the run commits on this thread: its git commits register here

    def register_commit(pid: int, prompt_id: str) -> Callable[[], None]:
        directory.mkdir(parents=True, exist_ok=True)
        run_id = _current_run_id(directory.parent)
        path = register(directory, pid, run_id=run_id, prompt_id=prompt_id, kind=GIT_COMMIT)
        return lambda: unregister(path)

    committer.register_commits_with(register_commit)
    stopped: list[dict[str, Any]] = []
    if not directory.is_dir():
        return stopped
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            pid = int(record["pid"])
            created = float(record["create_time"])
        except (OSError, ValueError, RecursionError, KeyError, TypeError):
            unregister(path)  # unreadable: nothing can be identified safely
            continue
        if _runner_alive(record):
            continue  # e.g. a `verify` running next to this run: its children are its own
        if _same_process(pid, created):
            # Before its group goes: what left the group (setsid) is found
            # through the group, its parents or the launch's marker.
            escaped = _escaped(pid, record.get("marker"))
            proc.ProcessGroup(pid, exited=_gone(pid)).stop(grace_s=STOP_GRACE_S)
            _stop_each(escaped)
            stopped.append(record)
        unregister(path)
    return stopped


def _escaped(pgid: int, marker: object) -> list[members.ProcInfo]:
    """The live processes of a registered child's run outside its group ``pgid``:
    its session's and group's, their descendants, and (a detached launch) the
    processes carrying its marker -- the scan ``stop`` uses
    (:func:`prompt_runner.supervise.members.run_members`)."""
    from ..supervise import members  # lazy: reaping only (~11 ms of start-up)

    leader = members.read_process(pgid)
    if leader is None:
        return []
    # Not the marker this runner carries itself: it would name this run too.
    ours = os.environ.get(members.MARKER_ENV)
    tokens = [marker] if isinstance(marker, str) and marker and marker != ours else []
    found = members.run_members(tokens=tokens, leaders=[leader.identity])
    return [m.process for m in found if m.process.pgid != pgid and m.process.pid != os.getpid()]


def _stop_each(found: list[members.ProcInfo]) -> None:
    """SIGTERM to each process still the one found, SIGKILL to those left after
    :data:`STOP_GRACE_S` seconds."""
    from ..supervise import members  # lazy: reaping only (~11 ms of start-up)

    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = [info for info in found if members.still_alive(info)]
        for info in live:
            with contextlib.suppress(OSError):
                os.kill(info.pid, sig)
        deadline = time.monotonic() + STOP_GRACE_S
        while live and time.monotonic() < deadline:
            time.sleep(0.05)
            live = [info for info in live if members.still_alive(info)]
        if not live:
            return


def _runner_alive(record: dict[str, Any]) -> bool:
    """Whether the process that registered ``record`` still runs (pid and start time)."""
    try:
        return _same_process(int(record["runner_pid"]), float(record["runner_create_time"]))
    except (KeyError, ValueError, TypeError):
        return False  # an older record: its runner is known dead by the lock


def _gone(pid: int) -> Callable[[], bool]:
    return lambda: not _alive(pid)


def _same_process(pid: int, created: float) -> bool:
    import psutil  # lazy: see the module doc

    try:
        process = psutil.Process(pid)
        return process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _alive(pid: int) -> bool:
    import psutil  # lazy: see the module doc

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
