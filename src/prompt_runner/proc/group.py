"""A child's whole process group, and the one way it is ended.

Every child starts in a new session, so its pid is also the id of a process
group that holds it and every grandchild that did not leave it.
:meth:`ProcessGroup.stop` is the only place the runner signals a group: it
escalates INT -> TERM -> KILL (INT only when asked for), moving on to the
next signal when the leader has not exited, or the group is not empty, once
that signal's grace has passed. Timeouts, Ctrl-C of the runner, a user's
cancel, an interrupted agent turn, what a finished command left behind and
the agents a dead runner left running (:mod:`prompt_runner.runner.orphans`)
all end this way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable

from .values import DEFAULT_GRACE_S

POLL_S = 0.02
"""Seconds between checks that a signalled group is gone."""


class ProcessGroup:
    """The process group ``pgid`` (its leader's pid).

    Args:
        pgid: the process-group id.
        exited: returns True once the leader has exited (and, for a child of
            this process, has been reaped: a zombie leader keeps the group).
    """

    def __init__(self, pgid: int, exited: Callable[[], bool]) -> None:
        self.pgid = pgid
        self._exited = exited

    def alive(self) -> bool:
        """Whether any process of the group still exists (zombies included)."""
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def gone(self) -> bool:
        """The leader has exited and nothing is left in its group."""
        return self._exited() and not self.alive()

    def stop(
        self, *, grace_s: float = DEFAULT_GRACE_S, interrupt_grace_s: float | None = None
    ) -> signal.Signals | None:
        """End the whole group: SIGINT (if ``interrupt_grace_s`` is given), SIGTERM, SIGKILL.

        Args:
            grace_s: seconds to wait after SIGTERM before SIGKILL.
            interrupt_grace_s: seconds to wait after SIGINT before SIGTERM;
                ``None`` starts at SIGTERM.

        Each signal goes to the whole group. A group that is already
        :meth:`gone` gets no signal; one still there when the last grace has
        passed gets SIGKILL, so grandchildren that ignore SIGTERM or outlive
        the leader are gone too. Blocks for at most the sum of the graces.
        Never raises for a group that has gone or cannot be signalled.

        Returns:
            The last signal sent -- the one the group ended on, or SIGKILL
            (sent without waiting) -- or ``None`` when it was gone already.
        """
        steps = [(signal.SIGTERM, grace_s)]
        if interrupt_grace_s is not None:
            steps.insert(0, (signal.SIGINT, interrupt_grace_s))
        sent: signal.Signals | None = None
        for signum, grace in steps:
            if self.gone():
                return sent
            self._signal(signum)
            sent = signum
            if self._wait_gone(grace):
                return sent
        self._signal(signal.SIGKILL)
        return signal.SIGKILL

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signum)

    def _wait_gone(self, grace_s: float) -> bool:
        deadline = time.monotonic() + grace_s
        while not self.gone():
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)
        return True
