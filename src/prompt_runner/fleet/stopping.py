"""``fleet stop`` of the local engine: close the open submission, then stop every
live member until the driver has ended (see :mod:`.local`).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ..supervise import StopReport, stop_run
from .local import POLL_S, FleetStopResult, _live_or_none
from .model import Fleet, Member
from .queue import append_event, read_queue
from .status import driver_pid
from .supervising import supervised

STOP_SETTLE_S = 30.0
"""Longest time ``fleet stop`` keeps stopping members a still-live driver starts."""


def stop_local(
    fleet: Fleet,
    *,
    after_prompt: bool = False,
    grace_s: float | None = None,
    author: str | None = None,
) -> FleetStopResult:
    """Close the open submission and stop every live member (see the module docstring).

    Raises:
        StorageError: the queue cannot be written.
        StateError: a member's supervisor record is damaged.
    """
    queue = read_queue(fleet.layout.queue)
    submission = None
    if not queue.closed:
        submission = queue.submission
        append_event(
            fleet.layout.queue,
            "stop",
            submission=submission,
            after_prompt=after_prompt,
            author=author,
        )
    reports: dict[str, StopReport] = {}
    lock = threading.Lock()

    def stop_one(member: Member) -> None:
        report = stop_run(
            supervised(member.workspace), after_prompt=after_prompt, grace_s=grace_s, author=author
        )
        if report.stopped_by != "nothing":
            with lock:
                reports[member.id] = report

    deadline = time.monotonic() + STOP_SETTLE_S
    while True:
        running = [m for m in fleet.members if _live_or_none(m) is not None]
        if running:
            with ThreadPoolExecutor(max_workers=min(len(running), 32)) as pool:
                list(pool.map(stop_one, running))
        if driver_pid(fleet.layout.submit_pid) is None or time.monotonic() > deadline:
            members = {
                k: {**r.to_dict(), "summary": (r.lines() or [""])[-1]} for k, r in reports.items()
            }
            ok = all(r.ok for r in reports.values())
            return FleetStopResult(fleet.id, submission, after_prompt, members, ok)
        time.sleep(POLL_S)
