"""The library's detached runs: ``start`` and ``stop`` as calls (``docs/workspaces.md``).

Both take what to run as a :class:`~prompt_runner.workspace.Workspace`, a
workspace manifest path or registered id, or a packet directory (the same
supervision without a workspace: the record and the runner's logs in the
packet's state root, ``supervisor/``); ``None`` is the packet in the current
directory, else the registered workspace holding it::

    import prompt_runner
    started = prompt_runner.start("ops/workspace.yml", remaining=True)
    started.pid, started.containment, started.run_id
    report = prompt_runner.stop("ops/workspace.yml", grace_s=5)
    report.ok, [e.to_dict() for e in report.killed]

``start`` returns once the run is live (:class:`~.supervise.StartResult`),
refuses a live one (``RunLiveError``, exit 3), and raises
``StillStartingError`` (exit 3) when its wait ends while the runner is still
starting -- that run goes on. ``stop`` returns a
:class:`~.supervise.StopReport` that is ``ok`` only when no process of the run
is left. The supervision itself is :mod:`prompt_runner.supervise`.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .api_calls import public
from .errors import ArgumentError, UserError, shown_path
from .paths import MANIFEST_NAME, packet_root
from .state.layout import StateLayout, relocated_state_dir
from .supervise import (
    Launch,
    StartResult,
    StopReport,
    Supervised,
    start_run,
    stop_run,
)
from .workspace import Workspace
from .workspace.registry import (
    looks_like_path,
    read_registration,
    registration_path,
    resolve_workspace,
)
from .workspace.runspec import run_command

__all__ = ["StartResult", "StopReport", "start", "stop"]

Target = Workspace | str | os.PathLike[str] | None


@public
def start(
    target: Target = None,
    *,
    workspace: Workspace | str | os.PathLike[str] | None = None,
    new_run: bool = False,
    remaining: bool = False,
    containment: str | None = None,
    run_args: Sequence[str] = (),
    live_timeout_s: float = 60.0,
    state_dir: str | os.PathLike[str] | None = None,
) -> StartResult:
    """Launch the run detached and return once it is live.

    Args:
        target: a packet directory, a workspace (value, manifest path or
            registered id), or ``None`` (see the module docstring).
        workspace: a workspace, given explicitly (wins over ``target``).
        new_run: a fresh run id (``run --new-run``); completed progress is kept.
        remaining: only the prompts not yet completed (``run --remaining``).
        containment: ``auto``, ``process_group`` or ``systemd_user``
            (default: the workspace's ``operator.containment``; ``auto`` for a packet).
        run_args: more ``run`` arguments (``--no-commit``, ids...).
        live_timeout_s: longest wait, in seconds, for the run to be live.
        state_dir: a packet's state root outside the packet (``run
            --state-dir``; default ``$PROMPT_RUNNER_STATE_DIR``, else
            ``<packet>/.prompt_runner``); the runner is launched with it. A
            workspace names its own state: both is an ``ArgumentError``.

    Returns:
        The :class:`StartResult`: pid, containment, run id, the log files.

    Raises:
        RunLiveError: a run of it is live already (exit 3, naming it).
        StillStartingError: the runner was launched and has not ended, but was
            not live within ``live_timeout_s`` (exit 3; an
            ``InfrastructureError``, from :mod:`prompt_runner.supervise`). The
            run is left to go on and may become live yet: nothing is ended, its
            record lets ``stop`` end it; the error carries ``label``,
            ``containment``, ``pid`` (``None`` while not known), ``waited_s``
            (seconds) and ``stderr`` (the runner's log).
        UserError: the target is neither a packet nor a workspace, the
            containment is unknown, ``live_timeout_s`` is not a number of
            seconds above 0 (an ``ArgumentError``, before anything starts), or
            the runner refused its input before it was live.
        InfrastructureError: the containment is not available, or the runner
            could not start or ended before it was live.
    """
    _check_span("start(live_timeout_s=...)", live_timeout_s, zero=False)
    sup = _supervised(
        "start",
        target,
        workspace,
        containment=containment,
        run=(new_run, remaining, tuple(run_args)),
        state_dir=state_dir,
    )
    return start_run(sup, live_timeout_s=live_timeout_s)


@public
def stop(
    target: Target = None,
    *,
    workspace: Workspace | str | os.PathLike[str] | None = None,
    after_prompt: bool = False,
    grace_s: float | None = None,
    author: str | None = None,
    progress: Callable[[str], None] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
) -> StopReport:
    """Stop the run and every process of it (runner, agents, their children).

    Args:
        target, workspace: what to stop, as for :func:`start`.
        after_prompt: let the current prompt end (pass and commit) first.
        grace_s: seconds the runner gets to stop on the request before
            SIGTERM, which SIGKILL follows 5 s later (default 10; with
            ``after_prompt`` the wait for the prompt is then unbounded).
        author: who asks (recorded in the control log).
        progress: called with a line while it waits (``"Asked the runner to
            stop; waiting for the current prompt to end."``), or ``None``.
        state_dir: where a packet's run keeps its state, as for :func:`start`
            (the ``run --state-dir`` it was started with).

    Returns:
        The :class:`StopReport`; ``ok`` only when no process of the run is left.

    Raises:
        ArgumentError: ``grace_s`` is negative or not a finite number (a
            ``UserError``, before anything is asked), or ``state_dir`` is
            given with a workspace.
    """
    if grace_s is not None:
        _check_span("stop(grace_s=...)", grace_s, zero=True)
    sup = _supervised("stop", target, workspace, containment=None, run=None, state_dir=state_dir)
    return stop_run(sup, after_prompt=after_prompt, grace_s=grace_s, author=author, say=progress)


def _check_span(key: str, seconds: Any, *, zero: bool) -> None:
    """Refuse a span of seconds that is not a finite number above (or at) zero.

    Raises:
        ArgumentError: naming ``key``, before anything is started or asked.
    """
    ok = isinstance(seconds, int | float) and not isinstance(seconds, bool)
    if ok and math.isfinite(seconds) and (seconds > 0 or (zero and seconds == 0)):
        return
    least = "0 or more" if zero else "more than 0"
    raise ArgumentError(
        f"must be a finite number of seconds, {least}, not {seconds!r}",
        key=key,
        fix="pass e.g. 10 or 60.0",
    )


def _supervised(
    caller: str,
    target: Any,
    workspace: Any,
    *,
    containment: str | None,
    run: tuple[bool, bool, tuple[str, ...]] | None,
    state_dir: str | os.PathLike[str] | None = None,
) -> Supervised:
    """The :class:`Supervised` run ``target`` / ``workspace`` names.

    Raises:
        ArgumentError: a value that is neither a path nor a Workspace, or a
            ``state_dir`` given for a workspace.
        UserError: no packet or workspace is found there.
    """
    if state_dir is not None and os.fspath(state_dir) != "":
        if workspace is not None or not isinstance(target, str | os.PathLike | None):
            raise ArgumentError(
                "is for a packet's run; a workspace keeps its state under its runtime root",
                key=f"{caller}(state_dir=...)",
                fix="drop --state-dir, or name the packet directory",
            )
        place = Path(os.fspath(target)) if target is not None else Path.cwd()
        return _of_packet(packet_root(place), containment, run, state_dir)
    if workspace is not None:
        return _of_workspace(_workspace(caller, workspace), containment, run)
    if isinstance(target, Workspace):
        return _of_workspace(target, containment, run)
    if target is not None and not isinstance(target, str | os.PathLike):
        raise ArgumentError(
            f"must be a packet directory, a Workspace, a manifest path or an id, not {target!r}",
            key=f"{caller}(target=...)",
            fix="pass e.g. 'path/to/packet' or 'ops/workspace.yml'",
        )
    place = Path(os.fspath(target)) if target is not None else Path.cwd()
    if (place / MANIFEST_NAME).is_file() or place.name == MANIFEST_NAME:
        return _of_packet(packet_root(place), containment, run)
    if target is not None and place.is_dir() and not _registered(os.fspath(target)):
        raise _neither(place)
    ws = resolve_workspace(None if target is None else os.fspath(target))
    return _of_workspace(ws, containment, run)


def _registered(text: str) -> bool:
    """``text`` is a registered workspace id (which a directory of that name does not hide)."""
    return not looks_like_path(text) and read_registration(registration_path(text)) is not None


def _neither(place: Path) -> UserError:
    """The error of a directory named as the run that is neither a packet nor a
    workspace manifest (a manifest is a file: one in it is named in the fix)."""
    held = place / "workspace.yml"
    return UserError(
        f"is neither a packet directory (it holds no {MANIFEST_NAME}) nor a workspace manifest",
        file=place,
        fix=f"pass its workspace manifest ({shown_path(held)})"
        if held.is_file()
        else "pass a packet directory, the workspace manifest (workspace.yml), a registered id, "
        "or run inside a prepared workspace",
    )


def _workspace(caller: str, workspace: Any) -> Workspace:
    if isinstance(workspace, Workspace):
        return workspace
    if isinstance(workspace, str | os.PathLike):
        return resolve_workspace(os.fspath(workspace))
    raise ArgumentError(
        f"must be a Workspace, a manifest path or a registered id, not {workspace!r}",
        key=f"{caller}(workspace=...)",
        fix="pass e.g. 'ops/workspace.yml'",
    )


def _of_workspace(
    ws: Workspace, containment: str | None, run: tuple[bool, bool, tuple[str, ...]] | None
) -> Supervised:
    launch = None
    if run is not None:
        # lazy: only a start reads the registry (stop and status of a workspace do not)
        from .workspace.claims import refuse_other_manifest
        from .workspace.ready import refuse_unready

        # a manifest never prepared whose id another one registered would run on
        # that one's clones and state
        refuse_other_manifest(ws, doing="starting")
        # no runner is launched into a directory that is not there: a root that
        # is not a directory, a workspace never prepared, a packet.path no packet
        refuse_unready(ws)
        new_run, remaining, extra = run
        cmd = run_command(ws, new_run=new_run, remaining=remaining, extra=extra)
        launch = Launch(cmd.argv, cmd.cwd, cmd.env)
    return Supervised(
        label=ws.id,
        state=ws.layout.state,
        files=ws.layout.supervisor,
        containment=containment or ws.containment,
        launch=launch,
    )


def _of_packet(
    root: Path,
    containment: str | None,
    run: tuple[bool, bool, tuple[str, ...]] | None,
    state_dir: str | os.PathLike[str] | None = None,
) -> Supervised:
    state = StateLayout.of_packet(root, state_dir)
    launch = None
    if run is not None:
        new_run, remaining, extra = run
        argv = [sys.executable, "-m", "prompt_runner", "run", str(root)]
        if relocated_state_dir(state_dir) is not None:  # state outside the packet: say so
            argv += ["--state-dir", str(state.root)]
        argv += ["--new-run"] if new_run else []
        argv += ["--remaining"] if remaining else []
        launch = Launch(tuple(argv + list(extra)), root)
    return Supervised(
        label=root.name,
        state=state,
        files=state.supervisor,
        containment=containment or "auto",
        launch=launch,
    )
