"""The local engine: a bounded pool of supervised detached runs on this machine.

``fleet submit`` (:func:`submit_local`) holds ``submit.pid`` (one driver per
fleet) and drives one submission of the queue (:mod:`.queue`): a thread pool
of ``concurrency`` workers, each taking one member at a time through

1. *settled?* -- the open submission finished or skipped it already: nothing;
2. *halted?* -- ``fleet stop`` asked, or ``failure_policy: stop`` tripped: skipped;
3. *live?* -- a run of it lives (started by a killed submit, or by hand):
   followed (``adopted``), never started twice; a run the open submission
   started that has ended since is recorded as it ended (``finished``), unless
   its runner died (``unhealthy``, or no record of the run): then it goes on;
4. *completed?* -- every prompt is: skipped;
5. otherwise its manifest is written (a template member), it is prepared when a
   clone is missing, and started detached (``start``, ``run --remaining``); a
   run still starting when ``live_timeout_s`` ends (``StillStartingError``) goes
   on, so it is ``started`` too (``starting: true`` in the queue) and followed;
   one ``fleet stop`` ended before it was live is ``stopped``, not ``error``;
6. the worker waits until no run of it lives, and records how it ended from
   the workspace's own state (``finished``).

Members that live already are handed to the pool first, so a continued
submission never has more than ``concurrency`` runs at once. Nothing here
schedules beyond that: the pool is the only bound, each member's run is
an ordinary supervised ``start``, and the truth of its work is its own state.

``fleet stop`` (:func:`.stopping.stop_local`) closes the submission in the queue, then
stops every live member (``stop``, optionally after the current prompt) until
the driver has ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LockHeldError, PromptRunnerError
from ..state.atomic import write_text_atomic
from ..state.lock import RunLock
from ..state.usable import prepare_state_dir
from ..supervise import RunLiveError, StillStartingError, start_run
from ..workspace.prepare import prepare
from ..workspace.status import workspace_status
from .model import Fleet, Member
from .queue import QueueState, append_event, driver_fields, host_name, read_queue
from .supervising import live, supervised

POLL_S = 0.2
"""Seconds between two looks at a running member."""

Say = Callable[[str], None]


@dataclass(frozen=True)
class MemberOutcome:
    """How one member's part of a submission ended.

    Attributes:
        workspace: its id.
        state: ``completed``, ``failed``, ``stopped``, ``unhealthy``, ``error``
            (it could not be started), ``skipped`` (not started: the fleet was
            stopped or ``failure_policy: stop`` tripped), or ``running`` (the
            Temporal engine, or a local submit interrupted while it ran).
        action: ``started``, ``adopted`` (it was live already), ``none``.
        reason: why it failed, errored or was skipped, else ``None``.
    """

    workspace: str
    state: str
    action: str
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SubmitResult:
    """What ``fleet submit`` did.

    Attributes:
        fleet: the fleet id; engine: local|temporal.
        outcome: ``completed`` (every member completed), ``failed`` (some did
            not), ``stopped`` (``fleet stop``), ``driving`` (a live submit drives
            this fleet already: nothing was done), ``submitted`` (Temporal: the
            workflows are started or were running).
        submission: the local submission number (Temporal: ``None``).
        resumed: it continued a submission a killed submit had left open.
        driver: the pid of the submit already driving it (``driving``), else ``None``.
        members: one :class:`MemberOutcome` per member, in manifest order.
    """

    fleet: str
    engine: str
    outcome: str
    submission: int | None
    resumed: bool
    driver: int | None
    members: tuple[MemberOutcome, ...]

    @property
    def exit_code(self) -> int:
        """0 completed, submitted or driven already; 1 failed or stopped."""
        return 0 if self.outcome in ("completed", "submitted", "driving") else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "prompt_runner.fleet.submit/v1",
            "fleet": self.fleet,
            "engine": self.engine,
            "outcome": self.outcome,
            "submission": self.submission,
            "resumed": self.resumed,
            "driver": self.driver,
            "members": [m.to_dict() for m in self.members],
        }


def submit_local(
    fleet: Fleet,
    *,
    poll_s: float = POLL_S,
    live_timeout_s: float = 60.0,
    say: Say | None = None,
) -> SubmitResult:
    """Run every unfinished member of ``fleet``, at most ``concurrency`` at once,
    until each has ended (see the module docstring).

    Args:
        fleet: a fleet with ``engine: local``.
        poll_s: seconds between two looks at a running member.
        live_timeout_s: longest wait, in seconds, for a started run to be live
            (one still starting after it is followed all the same).
        say: one line per event (``started migrate-api``...), or ``None``.

    Returns:
        The :class:`SubmitResult`; ``outcome: driving`` (nothing done) when
        another ``fleet submit`` drives this fleet now.

    Raises:
        StorageError: the queue or the lock cannot be written.
        KeyboardInterrupt: re-raised once the workers have let go (the runs
            go on; the next submit continues the submission).
    """
    prepare_state_dir(fleet.layout.root)
    lock = RunLock(fleet.layout.submit_pid)
    try:
        lock.acquire()
    except LockHeldError as exc:
        return SubmitResult(fleet.id, fleet.engine, "driving", None, False, exc.pid, ())
    try:
        queue = read_queue(fleet.layout.queue)
        resumed = not queue.closed
        number = queue.submission if resumed else queue.submission + 1
        append_event(
            fleet.layout.queue,
            "resumed" if resumed else "submission",
            submission=number,
            **driver_fields(),
        )
        driver = _Driver(fleet, number, read_queue(fleet.layout.queue), poll_s, live_timeout_s, say)
        return driver.run(resumed)
    finally:
        lock.release()


class _Driver:
    """One submission's pool (see the module docstring)."""

    def __init__(
        self,
        fleet: Fleet,
        number: int,
        queue: QueueState,
        poll_s: float,
        live_timeout_s: float,
        say: Say | None,
    ) -> None:
        self.fleet = fleet
        self.number = number
        self.queue = queue
        self.poll_s = poll_s
        self.live_timeout_s = live_timeout_s
        self.say = say or (lambda _line: None)
        self.tripped = threading.Event()
        self.abandon = threading.Event()

    def event(self, event: str, **fields: Any) -> None:
        append_event(self.fleet.layout.queue, event, submission=self.number, **fields)

    def run(self, resumed: bool) -> SubmitResult:
        members = list(self.fleet.members)
        lives = {m.id: _live_or_none(m) is not None for m in members}
        order = [m for m in members if lives[m.id]] + [m for m in members if not lives[m.id]]
        outcomes: dict[str, MemberOutcome] = {}
        pool = ThreadPoolExecutor(max_workers=self.fleet.concurrency, thread_name_prefix="fleet")
        try:
            futures = {m.id: pool.submit(self.member, m) for m in order}
            for member_id, future in futures.items():
                outcomes[member_id] = future.result()
        except BaseException:
            self.abandon.set()  # the workers stop waiting; the runs go on
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        ordered = tuple(outcomes[m.id] for m in members)
        outcome = self.outcome(ordered)
        self.event("ended", outcome=outcome)
        return SubmitResult(
            self.fleet.id, self.fleet.engine, outcome, self.number, resumed, None, ordered
        )

    def outcome(self, outcomes: tuple[MemberOutcome, ...]) -> str:
        if self.stopped():
            return "stopped"
        return "completed" if all(o.state == "completed" for o in outcomes) else "failed"

    def stopped(self) -> bool:
        return read_queue(self.fleet.layout.queue).stopped

    def member(self, member: Member) -> MemberOutcome:
        """Take one member through the steps of the module docstring (never raises
        a :class:`PromptRunnerError`: it becomes the ``error`` outcome)."""
        try:
            return self._member(member)
        except PromptRunnerError as exc:
            self.event("finished", member=member.id, state="error", reason=str(exc))
            self.say(f"{member.id}: error: {exc}")
            return MemberOutcome(member.id, "error", "none", str(exc))

    def _member(self, member: Member) -> MemberOutcome:
        entry = self.queue.members.get(member.id)
        last = entry.last if entry is not None else None
        if self.queue.done_in_submission(member.id) and last is not None:
            state = "skipped" if last["event"] == "skipped" else str(last.get("state"))
            return MemberOutcome(member.id, state, "none", last.get("reason"))
        if self.abandon.is_set():
            return MemberOutcome(member.id, "running", "none")
        sup = supervised(member.workspace)
        if live(sup) is not None:
            return self.follow(member, sup, "adopted")
        in_submission = last is not None and last.get("submission") == self.number
        ran = in_submission and last is not None and last.get("event") in ("started", "adopted")
        if ran and not _runner_died(member):
            # it ended while no submit was driving: how it ended on its own is its
            # outcome; a run whose runner died (unhealthy, or no record) is started again
            return self.finish(member, "started")
        halted = self.halted()
        if halted is not None:
            self.event("skipped", member=member.id, reason=halted)
            return MemberOutcome(member.id, "skipped", "none", halted)
        if _completed(member):
            self.event("skipped", member=member.id, reason="completed")
            return MemberOutcome(member.id, "completed", "none", "completed before")
        _materialize(member)
        if any(not r.clone.is_dir() for r in member.workspace.repositories.values()):
            prepare(member.workspace)
        try:
            started = start_run(sup, live_timeout_s=self.live_timeout_s)
        except RunLiveError:
            return self.follow(member, sup, "adopted")
        except StillStartingError as exc:
            # Launched and not ended, only not live within the wait: its run goes on,
            # so it is followed as a started one (the record written at the launch
            # names its runner), never reported failed while it runs.
            self.event(
                "started",
                member=member.id,
                pid=exc.pid,
                run_id=None,
                host=host_name(),
                starting=True,
            )
            runner = f"pid {exc.pid}, " if exc.pid else ""
            self.say(f"{member.id}: started ({runner}still starting after {exc.waited_s:g} s)")
            return self.follow(member, sup, "started", record=False, log=exc.stderr)
        except PromptRunnerError as exc:
            if not self.stopped():
                raise
            # ``fleet stop`` ended it before it was live (exit 143): stopped, not an error
            reason = f"fleet stop ended it before it was live ({exc})"
            self.event("finished", member=member.id, state="stopped", reason=reason)
            self.say(f"{member.id}: stopped")
            return MemberOutcome(member.id, "stopped", "started", reason)
        self.event(
            "started", member=member.id, pid=started.pid, run_id=started.run_id, host=host_name()
        )
        self.say(f"{member.id}: started (pid {started.pid})")
        return self.follow(member, sup, "started", record=False)

    def follow(
        self,
        member: Member,
        sup: Any,
        action: str,
        *,
        record: bool = True,
        log: Path | None = None,
    ) -> MemberOutcome:
        """Wait until no run of ``member`` lives, then record how it ended
        (``log``: the runner's stderr log, named when it ended without a record)."""
        if record:
            found = live(sup)
            self.event("adopted", member=member.id, pid=found.pid if found else None)
            self.say(f"{member.id}: running already, followed")
        while live(sup) is not None:
            if self.abandon.wait(self.poll_s):
                return MemberOutcome(member.id, "running", action)
        return self.finish(member, action, log=log)

    def finish(self, member: Member, action: str, *, log: Path | None = None) -> MemberOutcome:
        doc = workspace_status(member.workspace)
        state = str(doc["state"])
        reason = None
        if state == "failed":
            reason = f"its run ended {doc['run_status']}"
            if self.fleet.failure_policy == "stop":
                self.tripped.set()
        elif state != "completed":
            reason = f"its run ended {doc['run_status'] or 'without a record'}"
            if log is not None and doc["run_status"] is None:
                reason += f" (it was still starting; see {log})"
        self.event("finished", member=member.id, state=state, reason=reason)
        self.say(f"{member.id}: {state}")
        return MemberOutcome(member.id, state, action, reason)

    def halted(self) -> str | None:
        """Why no member may be started now, else ``None``."""
        if self.tripped.is_set():
            return "failure_policy"
        return "stopped" if self.stopped() else None


def _live_or_none(member: Member) -> Any:
    try:
        return live(supervised(member.workspace))
    except PromptRunnerError:
        return None


def _runner_died(member: Member) -> bool:
    """Its run ended without ending on its own: its runner died while the run said
    ``running`` (``unhealthy``), or before it wrote any record of the run."""
    doc = workspace_status(member.workspace)
    return doc["state"] == "unhealthy" or (doc["state"] == "stopped" and not doc["run_status"])


def _completed(member: Member) -> bool:
    if not member.workspace.packet_dir.is_dir():
        return False
    prompts = workspace_status(member.workspace)["prompts"]
    return bool(prompts["total"]) and prompts["completed"] == prompts["total"]


def _materialize(member: Member) -> None:
    """Write a template member's manifest where its workspace says it is (once)."""
    if member.manifest_text is None:
        return
    path = member.workspace.manifest_path
    try:
        current = path.read_text(encoding="utf-8")
    except OSError:
        current = None
    if current != member.manifest_text:
        write_text_atomic(path, member.manifest_text)


@dataclass(frozen=True)
class FleetStopResult:
    """What ``fleet stop`` did.

    Attributes:
        fleet: the fleet id.
        submission: the local submission it closed (``None``: none was open, or Temporal).
        after_prompt: each member was let finish its current prompt.
        members: member -> what stopping it did (local: ``stop``'s report
            document plus a one-line ``summary``; Temporal: the workflow id and
            the signal sent), for each member that was running.
        ok: nothing of a stopped member is left running.
    """

    fleet: str
    submission: int | None
    after_prompt: bool
    members: Mapping[str, Mapping[str, Any]]
    ok: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "prompt_runner.fleet.stop/v1",
            "fleet": self.fleet,
            "submission": self.submission,
            "after_prompt": self.after_prompt,
            "ok": self.ok,
            "members": {k: dict(v) for k, v in self.members.items()},
        }
