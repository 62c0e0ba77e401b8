"""Which run a packet has and whether it lives: the base of the client API (SPEC 5).

Read only, from any process. ``runs/current.json`` names the packet's current
run; ``run.pid`` names the process running it; ``control/snapshot.json`` is
what the plane last wrote about it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StateError, UserError
from ..paths import layout_of, packet_root, state_root
from ..state import current_run as current_run_file
from ..state.atomic import read_json_object
from ..state.layout import StateLayout
from ..state.layout_text import STATE_DIR_ENV

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control status`)
if TYPE_CHECKING:
    from typing import Any

    from ..state.lock import PidIdentity
    from .store import ControlStore

NO_RUN = "this packet has no recorded run"


def control_store(packet: str | Path) -> ControlStore:
    """The transport of ``packet``'s state root (nothing is created).

    Raises:
        UserError: ``packet`` is not a packet directory.
    """
    # lazy: the store loads the event stream and the inbox; control status reads
    # the snapshot and lists requests/ without it (see snapshot())
    from .store import ControlStore

    return ControlStore(checked(state_root(packet)))


def checked(root: Path) -> Path:
    """``root``, the state root, once it is a directory or absent (only read or
    written as it is used).

    Raises:
        StorageError: ``root`` is a file (exit 3): the sentence ``run`` and
            ``status`` say (``state/usable.check_state_root``).
    """
    if not os.path.isdir(root) and os.path.exists(root):
        # lazy: only a state root that is no directory pays for the sentence
        from ..state.usable import check_state_root

        check_state_root(Path(root))
    return root


def current_run(root: Path) -> dict[str, Any] | None:
    """The document of ``<root>/runs/current.json``, or ``None`` when there is none.

    Raises:
        StateError: the file is damaged -- the same error every reader of it
            gets (:func:`prompt_runner.state.current_run.read_current_run`).
    """
    return current_run_file.read_current_run(StateLayout(root).current_run)


def current_run_id(root: Path) -> str | None:
    """The run id in ``<root>/runs/current.json``, or ``None`` (no file, or no id).

    Raises:
        StateError: the file is damaged (see :func:`current_run`).
    """
    return current_run_file.current_run_id(StateLayout(root).current_run)


def unfinished_run_id(root: Path) -> str | None:
    """The current run's id if that run has not completed (a live, failed or
    interrupted run a resume continues), else ``None``.

    Raises:
        StateError: ``runs/current.json`` is damaged (see :func:`current_run`).
    """
    from ..state.records import RunStatus  # lazy: see snapshot()

    doc = current_run(root)
    if doc is None or doc.get("status") == RunStatus.COMPLETED:
        return None
    run_id = doc.get("run_id")
    return run_id if isinstance(run_id, str) else None


def live_runner(root: Path) -> PidIdentity | None:
    """The process ``<root>/run.pid`` names when it is alive (identity incl. start
    time), else ``None``."""
    # lazy: state.lock pulls in dataclasses (~6 ms); control events|log never ask
    from ..state.lock import identity_alive, read_pid_file

    try:
        ident = read_pid_file(StateLayout(root).run_pid)
    except Exception:
        return None
    return ident if ident is not None and identity_alive(ident) else None


def run_is_live(root: Path) -> bool:
    """True when ``<root>/run.pid`` names a live process (identity incl. start time)."""
    return live_runner(root) is not None


STARTING_WAIT_S = 10.0
"""How long a control command waits for a starting run to record itself
(:func:`await_recorded`)."""

_STARTING_POLL_S = 0.05


def starting_runner(root: Path) -> PidIdentity | None:
    """The live process holding ``<root>/run.pid`` while it has not recorded a run
    since it took the lock, else ``None``.

    A run takes ``run.pid`` first, then records itself in ``runs/current.json``
    (``running``) and only then writes its control snapshot. ``run.pid`` newer
    than ``runs/current.json`` (or no ``current.json``) is that window: the
    runner holds the packet and has recorded nothing yet. A run that has
    recorded itself (or ended: ``current.json`` rewritten) is not starting."""
    ident = live_runner(root)
    if ident is None:
        return None
    layout = StateLayout(root)
    try:
        locked = os.stat(layout.run_pid).st_mtime_ns
    except OSError:
        return None
    try:
        recorded = os.stat(layout.current_run).st_mtime_ns
    except FileNotFoundError:
        return ident
    except OSError:
        return None
    return ident if recorded < locked else None


def await_recorded(root: Path, *, bound: float | None = None) -> PidIdentity | None:
    """Wait (at most ``bound`` s, :data:`STARTING_WAIT_S` by default, looking every
    50 ms) while a runner holds ``<root>/run.pid`` and has not recorded its run
    (:func:`starting_runner`). Returns ``None`` at once when none is starting, or
    as soon as it recorded itself or let the packet go; else the starting
    runner's identity once the bound passed (:func:`starting_error` says it)."""
    ident = starting_runner(root)
    if ident is None:
        return None
    import time  # lazy: only a command racing a starting run waits

    deadline = time.monotonic() + (STARTING_WAIT_S if bound is None else bound)
    while ident is not None and time.monotonic() < deadline:
        time.sleep(_STARTING_POLL_S)
        ident = starting_runner(root)
    return ident


def starting_error(root: Path, ident: PidIdentity, command: str) -> UserError:
    """The refusal of ``command`` once :func:`await_recorded`'s bound passed: a run
    (pid N) is starting and has not recorded itself yet; try again."""
    return UserError(
        f"a run (pid {ident.pid}) is starting and has not recorded itself yet "
        "(it holds run.pid, and runs/current.json does not name it)",
        file=root,
        fix=f"try `{command}` again in a moment: the run records itself before it "
        "says `Starting run ...`",
    )


def snapshot(packet: str | Path, *, wait: bool = True) -> dict[str, Any]:
    """The run snapshot of ``packet`` (read only).

    A run that holds the packet's ``run.pid`` and has not recorded itself yet, or
    has not written its first snapshot, is waited for (at most
    :data:`STARTING_WAIT_S`, :func:`_await_view`; ``wait=False``: not): its
    snapshot is what is shown, not "no recorded run" nor the last run's. Once
    the bound passed, a run still starting is said (:func:`starting_error`).

    A snapshot that says ``running`` while no live process holds the run lock
    is reported with ``status: "unknown"`` (the runner died) and
    ``recorded_status: "running"``. ``pending_requests`` counts request files
    not yet decided.

    Raises:
        UserError: no run was ever recorded for this packet (exit 2).
        StateError: ``runs/current.json`` is damaged (exit 2, as every reader of
            it says), or it records a run whose ``snapshot.json`` is missing or
            damaged (exit 2: the sentence names the file, says the run's state
            is intact and that ``status`` shows it, :func:`snapshot_gone`).
        StorageError: the state root is a file (exit 3, see :func:`checked`).
    """
    # What ControlStore.read_snapshot and .pending_names read, without loading the store.
    layout = layout_of(packet)
    root = checked(layout.root)
    # damaged: its error, not a stale view
    current = current_run_file.read_current_run(layout.current_run)
    damage = None
    try:
        snap = read_json_object(layout.snapshot)
    except StateError as exc:  # left damaged by a power loss: a view, rewritten by the next run
        snap, damage = None, exc.reason
    if (snap is None or snap.get("status") != "running") and wait and _await_view(layout):
        return snapshot(packet, wait=False)
    if snap is None:
        run_id = current.get("run_id") if current else None
        if not isinstance(run_id, str) or not run_id:
            ident = starting_runner(root)
            if ident is not None:
                raise starting_error(root, ident, "control status")
            raise UserError(NO_RUN, file=root.parent, fix="start one with `run`")
        raise snapshot_gone(packet, run_id, damage)
    # "running" is RunStatus.RUNNING, as the snapshot's format writes it; the enums'
    # module (~0.6 ms of control status's start-up) loads only for such a snapshot
    if snap.get("status") == "running" and not run_is_live(root):
        from ..state.records import RunStatus

        snap["recorded_status"] = RunStatus.RUNNING
        snap["status"] = RunStatus.UNKNOWN
    try:
        snap["pending_requests"] = len(os.listdir(layout.requests_dir))
    except FileNotFoundError:
        snap["pending_requests"] = 0
    return snap


def _await_view(layout: StateLayout) -> bool:
    """Wait (at most :data:`STARTING_WAIT_S`) while a runner holds ``run.pid`` and
    has not recorded its run (:func:`starting_runner`), or has recorded it
    ``running`` and not yet written ``control/snapshot.json``; True when it waited."""
    root = layout.root

    def pending() -> bool:
        if starting_runner(root) is not None:
            return True
        if os.path.exists(layout.snapshot) or not run_is_live(root):
            return False
        try:
            current = current_run_file.read_current_run(layout.current_run) or {}
        except StateError:
            return False
        return current.get("status") == "running"

    if not pending():
        return False
    import time  # lazy: only a status racing a starting run waits

    deadline = time.monotonic() + STARTING_WAIT_S
    while time.monotonic() < deadline and pending():
        time.sleep(_STARTING_POLL_S)
    return True


def snapshot_gone(packet: str | Path, run_id: str, damage: str | None) -> StateError:
    """The error of a recorded run (``runs/current.json`` names ``run_id``) whose
    ``control/snapshot.json`` is missing (``damage`` ``None``) or damaged
    (``damage``: what is wrong with it, as :func:`read_json_object` says).

    The snapshot is only a view the runner replaces whole; the run's state of
    record is untouched and ``status`` shows it, so the sentence says that,
    names the file, and says what to do -- not "no recorded run".
    """
    import shlex  # lazy: only this error pays for it

    from ..errors import shown_path

    layout = layout_of(packet)
    if run_is_live(layout.root):
        fix = (
            f"it is the live view of run {run_id}, which is running and rewrites it "
            "as it goes; ask again in a moment"
        )
    else:
        shown = shlex.quote(shown_path(packet_root(packet)))
        if os.environ.get(STATE_DIR_ENV):  # the state kept elsewhere: status must look there
            shown += " --state-dir " + shlex.quote(shown_path(layout.root))
        fix = (
            f"it is only the live view of run {run_id}, whose state is intact: "
            f"`prompt-runner status {shown}` shows the run, and the next run writes a new snapshot"
        )
    return StateError(damage or "does not exist", file=layout.snapshot, fix=fix)
