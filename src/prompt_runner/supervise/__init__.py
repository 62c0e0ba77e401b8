"""Detached, supervised runs: ``start`` and ``stop`` (``docs/workspaces.md``, "Detached runs").

``start`` launches the runner so it outlives the terminal that started it
and returns once the run is live; ``stop`` ends it -- through the control
plane first, then SIGTERM and SIGKILL -- and succeeds only when no process
of the run is left. The pieces:

* :mod:`.target` -- what is supervised: the run's state root, the
  supervisor's files, the containment asked for, the launch command;
* :mod:`.containment` -- ``process_group`` (a new session, everywhere) or
  ``systemd_user`` (:mod:`.systemd_user`, a transient user service);
  ``auto`` chooses;
* :mod:`.record` -- the durable supervisor record: the runner's pid and
  start time, the containment, the marker tokens;
* :mod:`.members` -- which processes are the run's (a ``/proc`` scan: an
  environment marker every child inherits, the runner's session and group,
  the unit's cgroup, descendants);
* :mod:`.start` and :mod:`.stop` -- the two commands, under one lock
  (:mod:`.guard`).

Nothing here knows packets or workspaces: ``api_supervise.py`` builds the
:class:`Supervised` value from either.
"""

from __future__ import annotations

from .members import MARKER_ENV
from .record import SupervisorRecord, read_record
from .report import Ended, StopReport
from .start import (
    LiveRun,
    RunLiveError,
    StartResult,
    StillStartingError,
    live_run,
    start_run,
)
from .stop import stop_run
from .target import CONTAINMENTS, Launch, Supervised

__all__ = [
    "CONTAINMENTS",
    "MARKER_ENV",
    "Ended",
    "Launch",
    "LiveRun",
    "RunLiveError",
    "StartResult",
    "StillStartingError",
    "StopReport",
    "Supervised",
    "SupervisorRecord",
    "live_run",
    "read_record",
    "start_run",
    "stop_run",
]
