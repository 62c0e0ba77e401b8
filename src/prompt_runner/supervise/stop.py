"""``stop``: end a run and every process of it, politely first.

:func:`stop_run`, under the supervisor's lock:

1. find the run's processes (``supervise/members.py``: the record's runner
   and marker tokens, the runner that holds ``run.pid``, the unit's cgroup,
   and the agents and verify commands a dead runner left registered under
   ``agents/``, pid *and* start time checked); none -> nothing to stop (a
   success);
2. if a runner lives, ask it through the control plane (a ``stop`` request,
   ``after_prompt`` or not: ``control/stopping.py``) and give it ``grace_s``
   to end by itself (with ``after_prompt`` and no ``grace_s``: until the
   current prompt has ended, however long that is -- but a runner waiting
   for a usage window ends the wait on either request at once, keeping it for
   the next run, and the progress line says so). It interrupts the
   session, records the prompt ``interrupted`` and exits. A request refused
   because the run is ending already (another stop's, or its last prompt's
   end) still waits for the runner within the grace: it is not signalled
   while it shuts down. The run is over when its runner releases the run
   lock: a runner that *is* the run (``start``'s detached runner: the
   record's process, or one carrying its marker) is then waited for until it
   exits; a program hosting ``prompt_runner.run()`` (or a foreground ``run``)
   still alive :data:`HOST_EXIT_S` after it released the lock carries on with
   its own work -- no longer the run's, it is never signalled and is reported
   ``released``; the processes that counted only through it (its children,
   group and session) are not the run's either. With no runner holding the lock and
   ``runs/current.json`` recording an ended run, what is left gets
   :data:`HOST_EXIT_S` to exit by itself first (a detached runner shutting
   down after its last prompt);
3. whatever is left -- a runner that did not stop, an agent, a grandchild
   that ignores SIGTERM or left the group by ``setsid`` -- is ended group by
   group through :meth:`prompt_runner.proc.ProcessGroup.stop` (SIGTERM, then
   SIGKILL after :data:`TERM_GRACE_S`; with ``systemd_user`` the unit's
   cgroup is signalled too);
4. the scan is repeated until no process of the run is left (SIGKILL to any
   late one), at most :data:`SETTLE_S` seconds; the ``agents/`` registrations
   it read are removed once their process is gone, as the next run would.

The :class:`~.report.StopReport` says what ended how (``exited``: by itself or on the
request; ``SIGTERM``; ``SIGKILL`` -- also for a process that ignored or
blocked SIGTERM and ended before the stop's own SIGKILL: only a SIGKILL, the
runner's to its agents, ends one) and what was left; it is ``ok`` -- and the
CLI exits 0 -- only when nothing is left. The record keeps the summary.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .. import proc
from ..control.leftovers import RUN_ENDED
from ..control.requests import build_request
from ..control.runs import current_run, current_run_id, live_runner
from ..control.store import ControlStore
from ..errors import StorageError, UserError
from ..state._clock import iso_now
from ..state.atomic import read_json
from ..state.lock import PidIdentity, identity_alive
from . import systemd_user
from .guard import supervisor_lock
from .members import (
    Member,
    ProcInfo,
    Registration,
    all_processes,
    carries_marker,
    registered,
    run_members,
    still_alive,
)
from .record import SupervisorRecord, read_record, write_record
from .report import RELEASED, Ended, StopReport
from .target import Supervised

DEFAULT_GRACE_S = 10.0
"""Seconds the runner gets to stop on the request (``--grace``'s default)."""

TERM_GRACE_S = 5.0
"""Seconds each group gets between SIGTERM and SIGKILL: a runner ending on SIGTERM
still ends its agents itself (TERM, then KILL after 2 s) and records the prompt."""

SETTLE_S = 5.0
"""Longest wait, in seconds, after SIGKILL for the last processes to disappear."""

HOST_EXIT_S = 1.0
"""Seconds a runner that released the run lock gets to exit: then a host of the
library is taken to carry on (it is left alone), and what is left of a detached
run whose run has ended is signalled."""

POLL_S = 0.1
RESCAN_S = 0.5


def stop_run(
    sup: Supervised,
    *,
    after_prompt: bool = False,
    grace_s: float | None = None,
    author: str | None = None,
    say: Callable[[str], None] | None = None,
) -> StopReport:
    """End ``sup``'s run and every process of it (see the module docstring).

    Args:
        after_prompt: ask the runner to stop once the current prompt has ended
            (passed and committed, or failed), not at the next event boundary.
        grace_s: seconds the runner gets to stop on the request before
            SIGTERM. ``None``: :data:`DEFAULT_GRACE_S`, except that with
            ``after_prompt`` the wait for the prompt is then unbounded.
        author: who asks (the control log's ``author``).
        say: progress lines (``Asked the runner to stop; waiting for the
            current prompt to end.``), or ``None``.

    Returns:
        The :class:`StopReport` (``ok`` only when no process of the run is left).

    Raises:
        StateError: the supervisor record or ``runs/current.json`` is damaged.
        StorageError: the stop request or the record cannot be written.
    """
    started = time.monotonic()
    files = sup.files
    record = None
    if files.lock.parent.is_dir():  # else no run was ever started here: create nothing
        with supervisor_lock(
            files.lock
        ):  # only while the record is read: a second stop may hurry one
            record = read_record(files.record)
    scan = _Scan(sup, record)
    run_id = _run_id(sup)
    runner = live_runner(sup.state_dir)
    scan.rescan()
    if not scan.seen and runner is None and not scan.unit_running():
        scan.forget_gone()  # registrations of processes long gone
        return _report(sup, record, run_id, None, None, "nothing", scan, {}, started)
    if runner is None and _run_over(sup):
        # its runner released the run lock and is exiting (a detached runner's
        # interpreter shutting down): it ends by itself, it is not signalled
        _quiet(scan, HOST_EXIT_S)
    name = outcome = None
    carried_on: Ended | None = None
    stopped_by = "request" if runner is not None else "exited"
    if runner is not None:
        name = _ask(sup, after_prompt, author, run_id)
        wait = grace_s if grace_s is not None else (None if after_prompt else DEFAULT_GRACE_S)
        if say is not None:
            when = "the current prompt to end" if after_prompt else "the runner to stop"
            waiting = _waiting_until(sup) if after_prompt else None
            if waiting is not None:
                # the runner ends a usage wait on any stop: the prompt cannot end before
                when = (
                    f"the runner to stop (it is waiting for a usage window until {waiting}, "
                    "so it ends the wait now; the next run waits for what is left)"
                )
            limit = "" if wait is None else f" (at most {wait:g} s)"
            say(f"Asked the runner to stop; waiting for {when}{limit}.")
        # a host of the library (or a foreground ``run``) is not the run: the run
        # has ended once it released the run lock, whether or not the host goes on
        hosted = not _is_the_run(runner, record)
        released = (lambda: live_runner(sup.state_dir) != runner) if hosted else None
        _wait_for(runner, wait, scan, rejected=lambda: _rejected(sup, name), released=released)
        outcome = _outcome(sup, name)
        if released is not None and released() and not _exited(runner, HOST_EXIT_S):
            carried_on = scan.release(runner)
    how: dict[int, str] = {}
    if scan.rescan():
        stopped_by = _end_all(scan, TERM_GRACE_S, how) or stopped_by
    _settle(scan, how)
    scan.forget_gone()
    report = _report(sup, record, run_id, name, outcome, stopped_by, scan, how, started, carried_on)
    if record is not None:
        with supervisor_lock(files.lock):
            latest = read_record(files.record) or record
            if latest.marker == record.marker:  # not replaced by a start meanwhile
                summary = report.summary()
                write_record(files.record, latest.updated(stopped_at=iso_now(), stop=summary))
    return report


class _Scan:
    """The run's processes as seen so far (every member ever found is kept)."""

    def __init__(self, sup: Supervised, record: SupervisorRecord | None) -> None:
        self.tokens = record.tokens if record is not None else ()
        self.leaders: list[PidIdentity] = [record.identity] if record is not None else []
        self.unit = record.unit if record is not None else None
        holder = live_runner(sup.state_dir)
        if holder is not None:
            self.leaders.append(holder)
        # agents/verify commands a killed runner left (its run.pid may be stale)
        self.registrations: list[Registration] = registered(sup.state.agents_dir)
        self.left_behind = [r.identity for r in self.registrations if r.identity is not None]
        self.seen: dict[int, Member] = {}
        self.alive: list[ProcInfo] = []

    def unit_running(self) -> bool:
        if self.unit is None:
            return False
        state = systemd_user.unit_state(self.unit)
        return state is not None and state.running

    def cgroup(self) -> Path | None:
        if self.unit is None:
            return None
        state = systemd_user.unit_state(self.unit)
        return systemd_user.cgroup_dir(state.control_group) if state is not None else None

    def rescan(self) -> list[ProcInfo]:
        """The run's live processes now (also remembered in :attr:`seen`)."""
        found = self._members()
        for member in found:
            self.seen.setdefault(member.process.pid, member)
        self.alive = [m.process for m in found]
        return self.alive

    def release(self, runner: PidIdentity) -> Ended | None:
        """Stop counting ``runner`` -- a host whose run has ended, carrying on --
        and what was the run's only through it (its children, its group and
        session): those are the host's now. Return how the report names it."""
        self.leaders = [
            ident
            for ident in self.leaders
            if (ident.pid, ident.start_time) != (runner.pid, runner.start_time)
        ]
        host = self.seen.get(runner.pid)
        still = {m.process.pid for m in self._members()}
        alive = {info.pid for info in all_processes()}
        for pid in [pid for pid in self.seen if pid in alive and pid not in still]:
            del self.seen[pid]
        self.alive = [info for info in self.alive if info.pid in still]
        if host is None:
            return None
        return Ended(host.process.pid, host.process.command, RELEASED, host.why)

    def _members(self) -> list[Member]:
        return run_members(
            tokens=self.tokens,
            leaders=self.leaders,
            cgroup_dir=self.cgroup(),
            registered=self.left_behind,
        )

    def forget_gone(self) -> None:
        """Remove each ``agents/`` registration read whose process is gone (its
        runner is dead: nothing else would remove it), as the next run's reap
        would; one still alive is kept for the next run to stop."""
        alive = {info.pid for info in self.alive}
        for reg in self.registrations:
            if reg.identity is None or reg.identity.pid not in alive:
                with contextlib.suppress(OSError):
                    reg.path.unlink(missing_ok=True)


def _waiting_until(sup: Supervised) -> str | None:
    """When the run's recorded usage wait ends (``state.json`` ``waiting_until``),
    or ``None`` (not waiting, or unreadable)."""
    try:
        doc = read_json(sup.state.state_json)
    except Exception:  # a damaged or absent state.json says nothing of a wait
        return None
    until = doc.get("waiting_until") if isinstance(doc, dict) else None
    return until if isinstance(until, str) else None


def _ask(sup: Supervised, after_prompt: bool, author: str | None, run_id: str | None) -> str:
    """Write the stop request for the live run; return its file name."""
    request = build_request("stop", {"after_prompt": after_prompt}, run_id=run_id, author=author)
    store = ControlStore(sup.state_dir)
    try:
        return store.write_request(request)
    except OSError as exc:
        raise StorageError(Path(exc.filename or store.requests_dir), exc) from exc


def _is_the_run(runner: PidIdentity, record: SupervisorRecord | None) -> bool:
    """Whether ``runner``'s process is the run itself -- ``start``'s detached
    runner (the record's process, or one carrying its marker), which ends with
    its run -- rather than a program hosting ``prompt_runner.run()`` (or a
    foreground ``run``), whose run ends when it releases the run lock."""
    if record is None:
        return False
    if runner.pid == record.identity.pid and runner.start_time == record.identity.start_time:
        return True
    return carries_marker(runner.pid, record.tokens)


def _run_over(sup: Supervised) -> bool:
    """Whether ``runs/current.json`` records a run that has ended (not ``running``
    nor ``repairing``: a runner killed mid-run leaves it ``running``)."""
    try:
        doc = current_run(sup.state_dir)
    except UserError:
        return False
    return doc is not None and doc.get("status") not in ("running", "repairing")


def _quiet(scan: _Scan, wait_s: float) -> None:
    """Rescan until no process of the run is left, at most ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while scan.rescan() and time.monotonic() < deadline:
        time.sleep(POLL_S)


def _exited(runner: PidIdentity, wait_s: float) -> bool:
    """Whether ``runner`` is gone, waiting at most ``wait_s`` seconds for it."""
    deadline = time.monotonic() + wait_s
    while identity_alive(runner):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def _wait_for(
    runner: PidIdentity,
    wait_s: float | None,
    scan: _Scan,
    *,
    rejected: Callable[[], str | None],
    released: Callable[[], bool] | None = None,
) -> None:
    """Wait until ``runner`` has exited -- or, with ``released``, until
    ``released()`` says it no longer holds the run lock (a host of the library
    whose run has ended) -- at most ``wait_s`` seconds (``None``: no
    bound), noting the run's processes as they come and go. A refusal of the
    request (``rejected()``: its reason) ends the wait early -- except
    :data:`~prompt_runner.control.plane_requests.RUN_ENDED`: the runner is
    shutting down already (on another stop's request, or at its run's end), so
    it gets the rest of the wait (``--after-prompt`` with no bound:
    :data:`DEFAULT_GRACE_S`) before anything is signalled."""
    deadline = None if wait_s is None else time.monotonic() + wait_s
    next_scan = 0.0
    ending = False
    while identity_alive(runner):
        if released is not None and released():
            return
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return
        if now >= next_scan:
            scan.rescan()
            if not ending:
                why = rejected()
                if why is not None and why != RUN_ENDED:
                    return
                if why == RUN_ENDED and deadline is None:
                    # --after-prompt: the prompt has ended; the runner's own end is due now
                    deadline = now + DEFAULT_GRACE_S
                ending = why is not None
            next_scan = now + RESCAN_S
        time.sleep(POLL_S)


def _rejected(sup: Supervised, name: str) -> str | None:
    """Why the runner refused request ``name`` (``None``: not decided, or applied)."""
    try:
        receipt = ControlStore(sup.state_dir).read_outcome(name)
    except UserError:
        return None
    if receipt is None or receipt.get("outcome") != "rejected":
        return None
    return str(receipt.get("reason") or "")


def _outcome(sup: Supervised, name: str) -> str | None:
    try:
        receipt = ControlStore(sup.state_dir).read_outcome(name)
    except UserError:
        return None
    if receipt is None:
        return None
    outcome = str(receipt.get("outcome"))
    reason = receipt.get("reason")
    return f"{outcome}: {reason}" if reason else outcome


def _end_all(scan: _Scan, grace_s: float, how: dict[int, str]) -> str | None:
    """SIGTERM then SIGKILL every group of the run still alive (all at once, each
    through :meth:`~prompt_runner.proc.ProcessGroup.stop`); note how each
    process was ended in ``how``; return the strongest signal sent (``None``: none)."""
    deaf = {info.pid for info in scan.alive if _ignores_term(info.pid)}  # before any signal
    if scan.unit is not None and scan.unit_running():
        systemd_user.kill_unit(scan.unit, "SIGTERM")
    groups, singles = _groups(scan.alive)
    for info in singles:
        if still_alive(info):
            _signal_pid(info.pid, signal.SIGTERM)
    sent: dict[int, signal.Signals | None] = {}
    killed: list[ProcInfo] = []

    def end(pgid: int) -> None:
        sent[pgid] = proc.ProcessGroup(pgid, exited=lambda: True).stop(grace_s=grace_s)

    def end_singles() -> None:
        # the same grace as a group's: a runner that shares its parent's group
        # (started by a script) ends its agents and records the prompt on SIGTERM
        deadline = time.monotonic() + grace_s
        while any(still_alive(info) for info in singles) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        for info in singles:
            if still_alive(info):
                _signal_pid(info.pid, signal.SIGKILL)
                killed.append(info)

    threads = [threading.Thread(target=end, args=(pgid,), daemon=True) for pgid in groups]
    if singles:
        threads.append(threading.Thread(target=end_singles, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if scan.unit is not None and scan.unit_running():
        systemd_user.kill_unit(scan.unit, "SIGKILL")
    for pgid, members in groups.items():
        signum = sent.get(pgid)
        for info in members:
            how[info.pid] = signum.name if signum is not None else "exited"
    for info in singles:
        how[info.pid] = "SIGTERM"  # _settle makes it SIGKILL if it is still there
    for info in killed:
        how[info.pid] = "SIGKILL"
    for pid in deaf:
        if how.get(pid) == "SIGTERM":  # it ended, yet not on SIGTERM: a SIGKILL (the runner's)
            how[pid] = "SIGKILL"
    strongest = {s for s in sent.values() if s is not None}
    if signal.SIGKILL in strongest or killed:
        return "SIGKILL"
    return "SIGTERM" if strongest or singles else None


def _groups(alive: Iterable[ProcInfo]) -> tuple[dict[int, list[ProcInfo]], list[ProcInfo]]:
    """The run's live processes by process group, and those in a group that
    also holds a process not of the run: that group is not the run's to
    signal, so they are signalled one by one (their start time checked)."""
    members = list(alive)
    ours = {info.pid for info in members}
    everyone: dict[int, set[int]] = {}
    for info in all_processes():
        everyone.setdefault(info.pgid, set()).add(info.pid)
    groups: dict[int, list[ProcInfo]] = {}
    singles: list[ProcInfo] = []
    mine = os.getpgid(0)  # a stop run from inside the run never signals its own group
    for info in members:
        if info.pgid != mine and everyone.get(info.pgid, set()) <= ours:
            groups.setdefault(info.pgid, []).append(info)
        else:
            singles.append(info)
    return groups, singles


def _settle(scan: _Scan, how: dict[int, str]) -> None:
    """Rescan until no process of the run is left, SIGKILLing any that is (by pid,
    after checking its start time), for at most :data:`SETTLE_S` seconds."""
    deadline = time.monotonic() + SETTLE_S
    while scan.rescan() and time.monotonic() < deadline:
        for info in scan.alive:
            if still_alive(info):
                _signal_pid(info.pid, signal.SIGKILL)
                how[info.pid] = "SIGKILL"
        time.sleep(POLL_S)


def _ignores_term(pid: int) -> bool:
    """Whether ``pid`` ignores or blocks SIGTERM (``/proc/<pid>/status`` SigIgn,
    SigBlk); ``False`` when unreadable (no ``/proc``, gone)."""
    bit = 1 << (signal.SIGTERM - 1)
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("SigIgn", "SigBlk") and int(value.strip(), 16) & bit:
                    return True
    except (OSError, ValueError):
        return False
    return False


def _signal_pid(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _run_id(sup: Supervised) -> str | None:
    try:
        return current_run_id(sup.state_dir)
    except UserError:
        return None


def _report(
    sup: Supervised,
    record: SupervisorRecord | None,
    run_id: str | None,
    request: str | None,
    outcome: str | None,
    stopped_by: str,
    scan: _Scan,
    how: dict[int, str],
    started: float,
    carried_on: Ended | None = None,
) -> StopReport:
    alive = {info.pid for info in scan.alive}
    ended = tuple(
        Ended(pid, m.process.command, how.get(pid, "exited"), m.why)
        for pid, m in scan.seen.items()
        if pid not in alive and (carried_on is None or pid != carried_on.pid)
    )
    if carried_on is not None:
        ended += (carried_on,)
    left = tuple(
        Ended(pid, m.process.command, "alive", m.why)
        for pid, m in scan.seen.items()
        if pid in alive
    )
    if how and stopped_by == "request":
        stopped_by = "SIGKILL" if "SIGKILL" in how.values() else "SIGTERM"
    return StopReport(
        label=sup.label,
        state_dir=sup.state_dir,
        containment=record.containment if record is not None else None,
        run_id=run_id,
        request=request,
        request_outcome=outcome,
        stopped_by=stopped_by,
        ended=ended,
        left=left,
        duration_ms=int((time.monotonic() - started) * 1000),
    )
