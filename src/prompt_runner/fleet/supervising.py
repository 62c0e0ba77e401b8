"""A member workspace as the supervisor sees it (``supervise/``), and its liveness.

The library's ``start``/``stop`` (``api_supervise.py``) build the same
:class:`~prompt_runner.supervise.Supervised` value from a workspace; the fleet
sits below the library, so it builds it here, from the same
:func:`~prompt_runner.workspace.runspec.run_command`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..supervise import Launch, LiveRun, Supervised, live_run, read_record
from ..workspace import Workspace
from ..workspace.runspec import run_command


def supervised(ws: Workspace, *, remaining: bool = True, extra: Sequence[str] = ()) -> Supervised:
    """``ws``'s run as ``start``/``stop`` take it: ``run --remaining`` by default."""
    cmd = run_command(ws, remaining=remaining, extra=extra)
    return Supervised(
        label=ws.id,
        state=ws.layout.state,
        files=ws.layout.supervisor,
        containment=ws.containment,
        launch=Launch(cmd.argv, cmd.cwd, cmd.env),
    )


def live(sup: Supervised) -> LiveRun | None:
    """The live run of ``sup`` (its supervisor record, or whatever holds ``run.pid``).

    Raises:
        StateError: the supervisor record is damaged.
    """
    return live_run(sup, read_record(sup.files.record))
