"""Which run a packet has and whether it lives: the base of the client API (SPEC 5).

Read only, from any process. ``runs/current.json`` names the packet's current
run; ``run.pid`` names the process running it; ``control/snapshot.json`` is
what the plane last wrote about it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StateError, UserError
from ..paths import layout_of, state_root
from ..state import current_run as current_run_file
from ..state.atomic import read_json_object
from ..state.layout import StateLayout

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


def snapshot(packet: str | Path) -> dict[str, Any]:
    """The run snapshot of ``packet`` (read only).

    A snapshot that says ``running`` while no live process holds the run lock
    is reported with ``status: "unknown"`` (the runner died) and
    ``recorded_status: "running"``. ``pending_requests`` counts request files
    not yet decided.

    Raises:
        UserError: no run was ever recorded for this packet (exit 2).
        StateError: ``runs/current.json`` is damaged (exit 2, as every reader of
            it says), or ``snapshot.json`` is corrupt.
        StorageError: the state root is a file (exit 3, see :func:`checked`).
    """
    # What ControlStore.read_snapshot and .pending_names read, without loading the store.
    layout = layout_of(packet)
    root = checked(layout.root)
    current_run_file.read_current_run(layout.current_run)  # damaged: its error, not a stale view
    try:
        snap = read_json_object(layout.snapshot)
    except StateError:  # left damaged by a power loss: a view, rewritten by the next run
        snap = None
    if snap is None:
        raise UserError(NO_RUN, file=root.parent, fix="start one with `run`")
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
