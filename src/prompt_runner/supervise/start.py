"""``start``: launch a run detached and return once it is live.

:func:`start_run` is four steps, under the supervisor's lock for the first
three:

1. refuse a live run (:func:`live_run`): the record's runner still lives (pid
   + start time), or any process holds the state's ``run.pid`` -- exit 3,
   naming it (pid, containment, since when, run id);
2. choose the containment (``auto``: ``systemd_user`` where a user manager
   answers) and launch the runner in it, with a fresh marker token;
3. write the supervisor record (``supervise/record.py``) at once, so a
   ``stop`` or a second ``start`` sees the launch even while it starts;
4. wait (at most ``live_timeout_s``) until the run is *live*: its runner
   holds ``run.pid`` and has written the control snapshot since the launch.
   The record then gets ``live_at`` and the run id. A runner still starting
   when the wait ends is left to go on: :class:`StillStartingError` (exit 3)
   says it may become live yet and how to check.

A runner that ends before it was live is the result (exit 0: e.g. nothing
remained) or an error carrying the last line it wrote to its stderr log
(exit 2 for its bad input, 3 otherwise). One that ended, never seen holding
``run.pid``, while another process held it (a foreground ``run`` that took the
packet between step 1 and the launch) lost the packet to it: that is
:class:`RunLiveError` (exit 3) naming the other runner -- never the other
run's id as this start's.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..control.runs import current_run_id, live_runner
from ..errors import SHOWN_FROM_ENV, InfrastructureError, StorageError, UserError
from ..state._clock import iso_format, iso_now
from ..state.lock import PidIdentity, identity_alive
from .containment import Launched, choose, launch
from .guard import supervisor_lock
from .hints import command
from .members import MARKER_ENV
from .record import MAX_EARLIER_MARKERS, SupervisorRecord, read_record, write_record
from .systemd_user import unit_state
from .target import Launch, Supervised

LIVE_TIMEOUT_S = 60.0
"""Default bound, in seconds, on the wait for a launched run to be live."""

POLL_S = 0.05
HEADER = "=== "
"""How the line each ``start`` appends to the runner's logs begins."""


class RunLiveError(InfrastructureError):
    """A run of this state is live already: a second ``start`` is refused (exit 3).

    Its sentence names the commands to stop or follow the run; raised from
    here they name it by nothing (they work typed in the packet directory),
    and :meth:`naming` words them as the user named the run.

    Attributes:
        label: the packet's name or the workspace id (``""``: not said).
        render: makes the sentence from how the commands name the run (``""``,
            ``PACKET``, ``--workspace W``...); ``None`` for a fixed sentence.
    """

    def __init__(
        self, message: str, *, label: str = "", render: Callable[[str], str] | None = None
    ) -> None:
        self.label, self.render = label, render
        super().__init__(message)

    def naming(self, target: str) -> RunLiveError:
        """The same error, its commands naming ``target`` (quoted for the shell already)."""
        if self.render is None:
            return self
        return RunLiveError(self.render(target), label=self.label, render=self.render)


class StillStartingError(InfrastructureError):
    """The run was launched and its runner has not ended, but it was not live
    within ``start``'s wait (exit 3): it is still starting and may become live
    yet, so nothing is ended -- the sentence says how to check and how to stop it.

    Attributes:
        label: the packet's name or the workspace id.
        containment: how it was launched; pid: its runner (``None``: not known yet).
        waited_s: how long ``start`` waited, in seconds.
        stderr: the runner's stderr log.
    """

    def __init__(
        self,
        label: str,
        containment: str,
        pid: int | None,
        waited_s: float,
        stderr: Path,
        *,
        target: str = "",
    ) -> None:
        self.label, self.containment, self.pid = label, containment, pid
        self.waited_s, self.stderr = waited_s, stderr
        runner = f", pid {pid}" if pid else ""
        super().__init__(
            f"the run of {label} was launched ({containment}{runner}) and is still starting: "
            f"not live after {waited_s:g} s (start's --timeout), so it may become live yet; "
            f"check with `{command('control', 'status', target)}` or "
            f"`{command('status', target)}`, give start a longer --timeout next time, or "
            f"end it with `{command('stop', target)}`; its output: {stderr}"
        )

    def naming(self, target: str) -> StillStartingError:
        """The same error, its commands naming ``target`` (``PACKET``, ``--workspace W``...)."""
        return StillStartingError(
            self.label, self.containment, self.pid, self.waited_s, self.stderr, target=target
        )


@dataclass(frozen=True)
class LiveRun:
    """The live run a ``start`` found.

    Attributes:
        pid: the runner's pid.
        since: when it started (ISO 8601 UTC), or ``None`` when unknown.
        containment: ``process_group``, ``systemd_user``, or ``None`` when it
            was not started by ``start`` (a foreground ``run``).
        run_id: the run it runs, when known.
        unit: its unit (``systemd_user``).
    """

    pid: int
    since: str | None
    containment: str | None
    run_id: str | None
    unit: str | None = None

    def sentence(self) -> str:
        """``pid 4242 (process_group, since 2026-..., run R)``."""
        parts = [self.containment or "not started by `start`"]
        if self.unit:
            parts.append(f"unit {self.unit}")
        if self.since:
            parts.append(f"since {self.since}")
        if self.run_id:
            parts.append(f"run {self.run_id}")
        return f"pid {self.pid} ({', '.join(parts)})"


@dataclass(frozen=True)
class StartResult:
    """What ``start`` launched.

    Attributes:
        label: the packet's name or the workspace id.
        state_dir: the run's state root.
        containment: ``process_group`` or ``systemd_user``.
        pid: the runner's pid; unit: its unit (``systemd_user``).
        run_id: the run id it runs (``None`` if it ended before saying).
        started_at: when it was launched (ISO 8601 UTC).
        live: it was seen live (holding ``run.pid``, writing its snapshot).
        exit_code: its exit status when it had already ended, else ``None``.
        stdout, stderr: its log files.
        record: the supervisor record's path.
    """

    label: str
    state_dir: Path
    containment: str
    pid: int
    unit: str | None
    run_id: str | None
    started_at: str
    live: bool
    exit_code: int | None
    stdout: Path
    stderr: Path
    record: Path

    def to_dict(self) -> dict[str, Any]:
        """The result as ``start --json`` prints it (``schema: prompt_runner.start/v1``)."""
        return {
            "schema": "prompt_runner.start/v1",
            "label": self.label,
            "state_dir": str(self.state_dir),
            "containment": self.containment,
            "pid": self.pid,
            "unit": self.unit,
            "run_id": self.run_id,
            "started_at": self.started_at,
            "live": self.live,
            "exit_code": self.exit_code,
            "stdout": str(self.stdout),
            "stderr": str(self.stderr),
            "record": str(self.record),
        }


def live_run(sup: Supervised, record: SupervisorRecord | None) -> LiveRun | None:
    """The run of ``sup`` that lives now, or ``None``: the record's runner (pid +
    start time; a unit that still runs), else whatever holds ``run.pid``."""
    if record is not None:
        alive = identity_alive(record.identity) if record.pid > 0 else False
        if not alive and record.unit is not None:
            state = unit_state(record.unit)
            alive = state is not None and state.running
        if alive:
            return LiveRun(
                record.pid, record.started_at, record.containment, record.run_id, record.unit
            )
    holder = live_runner(sup.state_dir)
    if holder is None:
        return None
    try:
        run_id = current_run_id(sup.state_dir)
    except UserError:
        run_id = None
    return LiveRun(holder.pid, _since(holder.pid), None, run_id)


def start_run(
    sup: Supervised,
    *,
    live_timeout_s: float = LIVE_TIMEOUT_S,
    environ: Mapping[str, str] | None = None,
) -> StartResult:
    """Launch ``sup.launch`` detached and wait until it is live (see the module docstring).

    Args:
        sup: the run; ``sup.launch`` must be set.
        live_timeout_s: longest wait, in seconds, for the run to be live.
        environ: the environment the runner inherits (default ``os.environ``);
            ``sup.launch.env`` and the marker are laid over it.

    Raises:
        RunLiveError: a run of this state is live (exit 3, naming it), also
            one that took ``run.pid`` while this runner started, so that it
            ended without running (naming the other runner).
        UserError: the containment is unknown, or the runner refused its
            input before it was live (its sentence).
        StillStartingError: the runner has not ended but was not live within
            ``live_timeout_s`` (exit 3; it may become live yet, and is left running).
        InfrastructureError: systemd_user was asked for without a user
            manager; the runner could not start, or ended before it was live.
        StorageError: the record or the logs cannot be written.
    """
    command = sup.launch
    if command is None:
        raise UserError("nothing to start", fix="give the run's launch command")
    files = sup.files
    with supervisor_lock(files.lock):
        earlier = read_record(files.record)
        found = live_run(sup, earlier)
        if found is not None:
            render = _live_sentence(sup.label, found)
            raise RunLiveError(render(""), label=sup.label, render=render)
        containment = choose(sup.containment)
        marker = uuid.uuid4().hex
        env = {**(os.environ if environ is None else environ), **command.env, MARKER_ENV: marker}
        env.update(_shown_from())  # its sentences name files as the starter sees them
        offset = _log_header(files.stderr, files.stdout, command.argv)
        started_at = iso_now()
        launched_ns = time.time_ns()
        launched = launch(sup, containment, env)
        record = _first_record(sup, command, launched, earlier, marker, started_at)
        write_record(files.record, record)
    ident, live, code = _wait_live(sup, launched, launched_ns, live_timeout_s)
    run_id = _run_id(sup) if live else None
    if ident is not None or live:
        record = record.updated(
            pid=ident.pid if ident else record.pid,
            start_time=ident.start_time if ident else record.start_time,
            live_at=iso_now() if live else None,
            run_id=run_id,
        )
        with supervisor_lock(files.lock):
            write_record(files.record, record)
    if not live:
        _never_live(sup, code, offset)
    return StartResult(
        label=sup.label,
        state_dir=sup.state_dir,
        containment=record.containment,
        pid=record.pid,
        unit=record.unit,
        run_id=run_id,
        started_at=started_at,
        live=live,
        exit_code=code,
        stdout=files.stdout,
        stderr=files.stderr,
        record=files.record,
    )


def _first_record(
    sup: Supervised,
    command: Launch,
    launched: Launched,
    earlier: SupervisorRecord | None,
    marker: str,
    started_at: str,
) -> SupervisorRecord:
    """The record of a run just launched (before it is live): what was started,
    how it is contained, the runner as first seen, and the earlier markers."""
    files = sup.files
    ident = launched.runner()
    return SupervisorRecord(
        containment=launched.containment,
        pid=ident.pid if ident else 0,
        start_time=ident.start_time if ident else None,
        unit=launched.unit,
        marker=marker,
        earlier_markers=earlier.tokens[:MAX_EARLIER_MARKERS] if earlier else (),
        argv=command.argv,
        cwd=str(command.cwd),
        env_names=launched.env_names,
        state_dir=str(sup.state_dir),
        stdout=str(files.stdout),
        stderr=str(files.stderr),
        started_at=started_at,
    )


def _wait_live(
    sup: Supervised, launched: Launched, launched_ns: int, timeout_s: float
) -> tuple[PidIdentity | None, bool, int | None]:
    """``(runner identity, live, exit status)`` once the run is live or has ended.

    Raises:
        StillStartingError: neither within ``timeout_s`` (it may still become
            live: nothing is ended, and the record lets ``stop`` end it).
    """
    deadline = time.monotonic() + timeout_s
    seen = False  # this runner was seen holding run.pid
    other: PidIdentity | None = None  # another process was, and this runner never was
    while True:
        ident = launched.runner()
        code = launched.ended()
        went_live = _snapshot_since(sup, launched_ns)
        holder = live_runner(sup.state_dir)
        if holder is not None and ident is not None and holder == ident:
            seen = True
        elif holder is not None and ident is not None and not seen:
            other = holder  # (not while this runner is unknown: it may be the holder)
        if code is not None:
            if other is not None and not seen and code != 0:
                # It lost the packet to a runner that took run.pid after the
                # check above (a foreground ``run``): the snapshot since the
                # launch is that runner's, and so is the run id.
                _lost_race(sup, other, code)
            return ident, went_live, code  # a run that ended after going live still ran
        if ident is not None and went_live and holder == ident:
            return ident, True, None
        if time.monotonic() >= deadline:
            pid = ident.pid if ident is not None else None
            raise StillStartingError(
                sup.label, launched.containment, pid, timeout_s, sup.files.stderr
            )
        time.sleep(POLL_S)


def _lost_race(sup: Supervised, other: PidIdentity, code: int) -> None:
    """Raise :class:`RunLiveError`: this runner ended (``code``) without ever
    holding ``run.pid``, which ``other`` held meanwhile."""
    holder = live_runner(sup.state_dir)
    found = LiveRun(
        other.pid,
        _since(other.pid) if holder == other else None,
        None,
        _run_id(sup),
    )
    now = "holds" if holder == other else "held"

    def render(target: str) -> str:
        return (
            f"the run of {sup.label} could not start: another runner took the packet first "
            f"and {now} it: {found.sentence()}; the started runner ended "
            f"({describe_exit(code)}) without running anything, see {sup.files.stderr}; "
            f"follow the other run (`{command('watch', target)}`), or stop it first "
            f"(`{command('stop', target)}`)"
        )

    raise RunLiveError(render(""), label=sup.label, render=render)


def _live_sentence(label: str, found: LiveRun) -> Callable[[str], str]:
    """The refusal of a second ``start``, by how its commands name the run."""

    def render(target: str) -> str:
        return (
            f"a run of {label} is live: {found.sentence()}; stop it first "
            f"(`{command('stop', target)}`), or follow it (`{command('watch', target)}`)"
        )

    return render


def _snapshot_since(sup: Supervised, launched_ns: int) -> bool:
    """The control snapshot was written after the launch (by this runner)."""
    try:
        return sup.state.snapshot.stat().st_mtime_ns >= launched_ns
    except OSError:
        return False


def _run_id(sup: Supervised) -> str | None:
    try:
        return current_run_id(sup.state_dir)
    except UserError:
        return None


def _never_live(sup: Supervised, code: int | None, offset: int) -> None:
    """A runner that ended before it was live: exit 0 is a result; else raise."""
    if code == 0:
        return
    said = _relayed(_last_line(sup.files.stderr, offset) or _last_line(sup.files.stdout, 0))
    detail = f": {said}" if said else f"; see {sup.files.stderr}"
    message = f"the run of {sup.label} ended ({describe_exit(code)}) before it was live{detail}"
    if code == 2:
        raise UserError(message, fix="fix what it names, then start again")
    raise InfrastructureError(message)


def _relayed(line: str) -> str:
    """The runner's last line as a clause of ``start``'s own sentence: without
    the ``error: `` its CLI put before it and the full stop after it."""
    if line.startswith(_ERROR_PREFIX):
        line = line[len(_ERROR_PREFIX) :]
    return line[:-1] if line.endswith(".") else line


_ERROR_PREFIX = "error: "
"""How the CLI begins the sentence of an error on stderr (``cli/exits.py``)."""


def _shown_from() -> dict[str, str]:
    """``{SHOWN_FROM_ENV: the current directory}`` (``{}`` when it is gone)."""
    try:
        return {SHOWN_FROM_ENV: os.getcwd()}
    except OSError:
        return {}


def describe_exit(code: int | None) -> str:
    """``exit 2``, ``killed by signal 9``, or ``status unknown`` (a unit's, or ``None``)."""
    if code is None or code == -1:
        return "status unknown"
    return f"exit {code}" if code >= 0 else f"killed by signal {-code}"


def _log_header(stderr: Path, stdout: Path, argv: tuple[str, ...]) -> int:
    """Append a line naming this start to both logs; return the stderr log's
    offset after it (where this runner's own lines begin)."""
    line = f"{HEADER}{iso_now()} prompt-runner start: {shlex.join(argv)}\n".encode()
    offset = 0
    for path in (stdout, stderr):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "ab") as log:
                log.write(line)
                offset = log.tell()
        except OSError as exc:
            raise StorageError(path, exc) from exc
    return offset


def _last_line(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            text = log.read()[-8192:].decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.startswith(HEADER)  # not a start's own line
    ]
    return lines[-1] if lines else ""


def _since(pid: int) -> str | None:
    """When process ``pid`` started (ISO 8601 UTC), or ``None``."""
    import psutil  # lazy: only a refusal names the time

    try:
        return iso_format(datetime.fromtimestamp(psutil.Process(pid).create_time(), UTC))
    except psutil.Error:
        return None
