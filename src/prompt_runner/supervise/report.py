"""What ``stop`` did, as values: each process it ended and how (:class:`Ended`), and
the :class:`StopReport` the CLI prints and the supervisor's record keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

RELEASED = "released"
"""``Ended.how`` of a program hosting ``prompt_runner.run()`` whose run ended on the
request while the program carries on: not signalled, not the run's any more."""


@dataclass(frozen=True)
class Ended:
    """One process of the run and how it ended.

    Attributes:
        pid: its pid; command: its command line (shortened).
        how: ``exited`` (by itself, or on the stop request), ``SIGTERM``,
            ``SIGKILL``, ``released`` (a program hosting the library whose run
            ended on the request; it carries on, unsignalled), or ``alive`` for
            one that was left.
        why: why it counted as the run's (``marker``, ``session``, ``group``,
            ``cgroup``, ``child``).
    """

    pid: int
    command: str
    how: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        """``{"pid", "command", "how", "why"}``."""
        return {"pid": self.pid, "command": self.command, "how": self.how, "why": self.why}


@dataclass(frozen=True)
class StopReport:
    """What ``stop`` did.

    Attributes:
        label: the packet's name or the workspace id.
        state_dir: the run's state root.
        containment: the record's containment (``None``: no record).
        run_id: the run it stopped, when known.
        request: the stop request's file name (``None``: no runner lived to ask).
        request_outcome: the runner's decision (``applied``, ``rejected: why``)
            or ``None`` when it decided nothing.
        stopped_by: ``nothing`` (no process was running), ``request`` (the
            runner and all its processes ended on the request), ``exited`` (no
            runner lived to ask, and what was left ended by itself), ``SIGTERM``
            or ``SIGKILL`` (the strongest signal it had to send).
        ended: every process of the run that ended, and how.
        left: the processes still alive at the end (``ok`` only when none).
        duration_ms: how long the stop took.
    """

    label: str
    state_dir: Path
    containment: str | None
    run_id: str | None
    request: str | None
    request_outcome: str | None
    stopped_by: str
    ended: tuple[Ended, ...]
    left: tuple[Ended, ...]
    duration_ms: int

    @property
    def ok(self) -> bool:
        """No process of the run is left."""
        return not self.left

    @property
    def killed(self) -> tuple[Ended, ...]:
        """The processes it had to signal (``SIGTERM`` or ``SIGKILL``)."""
        return tuple(e for e in self.ended if e.how not in ("exited", RELEASED))

    def summary(self) -> dict[str, Any]:
        """What the supervisor record keeps of this stop."""
        return {
            "stopped_by": self.stopped_by,
            "request": self.request,
            "request_outcome": self.request_outcome,
            "ended": [e.to_dict() for e in self.ended],
            "left": [e.to_dict() for e in self.left],
        }

    def to_dict(self) -> dict[str, Any]:
        """The report as ``stop --json`` prints it (``schema: prompt_runner.stop/v1``)."""
        return {
            "schema": "prompt_runner.stop/v1",
            "label": self.label,
            "state_dir": str(self.state_dir),
            "containment": self.containment,
            "run_id": self.run_id,
            "ok": self.ok,
            "duration_ms": self.duration_ms,
            **self.summary(),
        }

    def lines(self) -> list[str]:
        """The report as ``stop`` says it, one line each."""
        if self.stopped_by == "nothing":
            return [
                f"Nothing to stop: no process of {self.label}'s run is running "
                f"at the state root looked in ({self.state_dir})."
            ]
        out: list[str] = []
        if self.request is not None:
            out.append(f"Asked the runner to stop ({self.request_outcome or 'not read'}).")
        for e in self.ended:
            if e.how == RELEASED:
                out.append(
                    f"  pid {e.pid} ended the run and carries on (it hosts the run; "
                    f"not signalled): {e.command}"
                )
                continue
            verb = "exited" if e.how == "exited" else f"killed with {e.how}"
            out.append(f"  pid {e.pid} {verb}: {e.command}")
        for e in self.left:
            out.append(f"  pid {e.pid} is still running: {e.command}")
        if self.ok:
            killed = len(self.killed)
            if killed:
                how = f"{killed} process(es) had to be killed"
            elif self.request is not None and self.request_outcome is None:
                # it exited without a receipt: it ended by itself, the request unread
                how = "it ended before it read the request"
            else:
                how = "on the request"
            out.append(f"Stopped {self.label} ({how}); no process of the run is left.")
        else:
            out.append(f"{len(self.left)} process(es) of {self.label}'s run could not be ended.")
        return out
