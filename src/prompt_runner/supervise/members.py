"""Which processes belong to a run: a scan of ``/proc`` (Linux; psutil elsewhere).

A detached runner starts with :data:`MARKER_ENV` set to a token of its own
launch; every agent, verify command and child it starts inherits it (the
runner passes its environment on), so a process that left the runner's
process group -- an agent's own session, a grandchild that called
``setsid`` -- is still found. A process is a *member* of the run when it is
alive (not a zombie) and any of these holds:

* its environment carries the marker (``/proc/<pid>/environ``, as it was at
  ``exec``: a process can change its own copy, not that record);
* it is a leader (the runner: pid and start time, so a recycled id is no
  match), whether or not it leads its own group -- a ``run`` started by a
  script shares the script's group and session;
* its session or process group is a leader's and it started after that leader;
* it is in the run's cgroup (``systemd_user``: the unit's ``cgroup.procs``);
* its parent is a member and it started after that parent;
* it is an agent or verify command registered under ``agents/`` by a runner
  that is gone (``kill -9``; :func:`registered`), still the same process (pid
  *and* start time), or in such a one's group or session.

A process that cleared its environment, left the session *and* lost its
parent to init is out of reach of a scan; only a cgroup holds it
(``systemd_user``), which is why that containment is preferred where a user
manager runs. Processes of other users cannot be read and are never members.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..state.lock import PidIdentity, parse_proc_stat

MARKER_ENV = "PROMPT_RUNNER_SUPERVISED_RUN"
"""The environment variable naming the launch a process belongs to (its token)."""

PROC = Path("/proc")
HAVE_PROC = (PROC / "self" / "stat").exists()
"""Linux: ``/proc`` is read directly; elsewhere psutil answers the same questions."""


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """One live process as ``/proc`` shows it.

    Attributes:
        pid, ppid, pgid, sid: its ids, its parent's, its group's and its session's.
        start_time: ``/proc/<pid>/stat`` field 22 (clock ticks since boot).
        command: its command line, space-joined and shortened (for reports).
    """

    pid: int
    ppid: int
    pgid: int
    sid: int
    start_time: int
    command: str

    @property
    def identity(self) -> PidIdentity:
        """Its pid and start time (what a later signal checks first)."""
        return PidIdentity(self.pid, self.start_time)


@dataclass(frozen=True, slots=True)
class Registration:
    """An agent or verify command a dead runner left registered (``agents/<pid>.json``).

    Attributes:
        path: the registration file.
        identity: the registered process as it runs now (pid and start time in
            clock ticks), or ``None`` when that process is gone (the pid is
            free or is another process now).
        kind: ``agent`` or ``verify command`` (``runner/orphans.py``).
    """

    path: Path
    identity: PidIdentity | None
    kind: str


def registered(agents_dir: Path) -> list[Registration]:
    """The registrations under ``agents_dir`` whose registering runner is gone.

    The format is ``runner/orphans.py``'s (``pid``, ``create_time`` as psutil
    reports it, ``runner_pid``, ``runner_create_time``). A registration whose
    runner still runs (pid and start time) is left out: its processes are that
    runner's (a live ``verify`` next to the run, or the run's own runner, found
    through its session). An unreadable registration is left out too (nothing in
    it identifies a process safely). Never raises.
    """
    found: list[Registration] = []
    try:
        paths = sorted(agents_dir.glob("*.json"))
    except OSError:
        return found
    for path in paths:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            pid = int(record["pid"])
            created = float(record["create_time"])
        except (OSError, ValueError, RecursionError, KeyError, TypeError):
            continue
        runner = record.get("runner_pid"), record.get("runner_create_time")
        with contextlib.suppress(TypeError, ValueError):
            if _created_at(int(runner[0]), float(runner[1])):
                continue
        identity = None
        if _created_at(pid, created):
            info = read_process(pid)
            identity = info.identity if info is not None else None
        found.append(Registration(path, identity, str(record.get("kind") or "agent")))
    return found


def _created_at(pid: int, created: float) -> bool:
    """Whether ``pid`` is alive and psutil dates it ``created`` (the registry's identity)."""
    import psutil  # lazy: only a stop that finds registrations needs it (~10 ms to import)

    try:
        process = psutil.Process(pid)
        return process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@dataclass(frozen=True, slots=True)
class Member:
    """A process of the run, and why it counts as one.

    Attributes:
        process: the process.
        why: ``marker``, ``runner``, ``registered``, ``session``, ``group``,
            ``cgroup`` or ``child``.
    """

    process: ProcInfo
    why: str


def read_process(pid: int) -> ProcInfo | None:
    """``pid`` as ``/proc`` shows it, or ``None`` (gone, a zombie, unreadable)."""
    if not HAVE_PROC:
        return _psutil_process(pid)  # pragma: no cover - no /proc (macOS, BSD)
    base = PROC / str(pid)
    try:
        text = (base / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parsed = parse_proc_stat(text)
    close = text.rfind(")")
    fields = text[close + 1 :].split()
    if parsed is None or parsed[0] in ("Z", "X", "x") or len(fields) < 4:
        return None
    try:
        raw = (base / "cmdline").read_bytes()
    except OSError:
        raw = b""
    command = raw.replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
    if not command:
        command = text[text.find("(") + 1 : close]
    if len(command) > 200:
        command = command[:197] + "..."
    return ProcInfo(
        pid=pid,
        ppid=int(fields[1]),
        pgid=int(fields[2]),
        sid=int(fields[3]),
        start_time=parsed[1],
        command=command,
    )


def all_processes() -> list[ProcInfo]:
    """Every live process ``/proc`` lists (this one left out)."""
    me = os.getpid()
    found: list[ProcInfo] = []
    try:
        names = os.listdir(PROC) if HAVE_PROC else [str(p) for p in _psutil_pids()]
    except OSError:
        return found
    for name in names:
        if name.isdigit() and int(name) != me:
            info = read_process(int(name))
            if info is not None:
                found.append(info)
    return found


def carries_marker(pid: int, tokens: Collection[str]) -> bool:
    """Whether ``pid``'s environment (at exec) sets :data:`MARKER_ENV` to one of ``tokens``."""
    if not tokens:
        return False
    try:
        environ = (PROC / str(pid) / "environ").read_bytes() if HAVE_PROC else _psutil_environ(pid)
    except OSError:
        return False
    wanted = {f"{MARKER_ENV}={token}".encode() for token in tokens}
    return any(entry in wanted for entry in environ.split(b"\0"))


def cgroup_pids(cgroup_dir: Path | None) -> set[int]:
    """The pids in ``<cgroup_dir>/cgroup.procs`` (nested cgroups too); empty when unreadable."""
    pids: set[int] = set()
    if cgroup_dir is None or not cgroup_dir.is_dir():
        return pids
    for procs in (cgroup_dir, *cgroup_dir.rglob("*")):
        with contextlib.suppress(OSError, ValueError):
            if procs.is_dir():
                text = (procs / "cgroup.procs").read_text()
                pids.update(int(line) for line in text.split() if line.isdigit())
    return pids


def run_members(
    *,
    tokens: Collection[str] = (),
    leaders: Iterable[PidIdentity] = (),
    cgroup_dir: Path | None = None,
    registered: Iterable[PidIdentity] = (),
) -> list[Member]:
    """The live processes of a run (see the module docstring), parents first.

    Args:
        tokens: the marker tokens of the run's launches.
        leaders: the runner identities whose session and group count (pid +
            start time; a leader need not be alive any more).
        cgroup_dir: the run's cgroup directory (``systemd_user``), or ``None``.
        registered: agents and verify commands a dead runner left registered
            (pid + start time); their groups and sessions count as a leader's.
    """
    processes = all_processes()
    in_cgroup = cgroup_pids(cgroup_dir)
    starts = {ident.pid: ident.start_time or 0 for ident in leaders}
    left = {ident.pid: ident.start_time or 0 for ident in registered}
    for pid, start in left.items():
        starts.setdefault(pid, start)
    members: dict[int, Member] = {}
    for info in processes:
        why = _why(info, tokens, starts, in_cgroup)
        if why is not None and left.get(info.pid) == info.start_time:
            why = "registered"
        if why is not None:
            members[info.pid] = Member(info, why)
    by_parent: dict[int, list[ProcInfo]] = {}
    for info in processes:
        by_parent.setdefault(info.ppid, []).append(info)
    queue = list(members.values())
    while queue:
        parent = queue.pop().process
        for child in by_parent.get(parent.pid, []):
            if child.pid not in members and child.start_time >= parent.start_time:
                members[child.pid] = member = Member(child, "child")
                queue.append(member)
    return sorted(members.values(), key=lambda m: (m.process.start_time, m.process.pid))


def _why(
    info: ProcInfo, tokens: Collection[str], starts: dict[int, int], in_cgroup: set[int]
) -> str | None:
    if info.pid in in_cgroup:
        return "cgroup"
    for kind, leader in (("session", info.sid), ("group", info.pgid)):
        start = starts.get(leader)
        if start is not None and info.start_time >= start:
            return kind
    if starts.get(info.pid) == info.start_time:
        # the runner itself when it leads neither: a `run` started by a script
        # or a harness shares its parent's group and session
        return "runner"
    if carries_marker(info.pid, tokens):
        return "marker"
    return None


def still_alive(info: ProcInfo) -> bool:
    """Whether the process ``info`` names still lives (same pid, same start time)."""
    now = read_process(info.pid)
    return now is not None and now.start_time == info.start_time


def _psutil_pids() -> list[int]:  # pragma: no cover - no /proc (macOS, BSD)
    import psutil  # lazy: only where there is no /proc

    return list(psutil.pids())


def _psutil_process(pid: int) -> ProcInfo | None:  # pragma: no cover - no /proc
    import psutil  # lazy: only where there is no /proc

    try:
        process = psutil.Process(pid)
        if process.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            return None
        command = " ".join(process.cmdline()) or process.name()
        return ProcInfo(
            pid=pid,
            ppid=process.ppid(),
            pgid=os.getpgid(pid),
            sid=os.getsid(pid),
            start_time=int(process.create_time() * 100),  # as state/lock.py counts it
            command=command[:200],
        )
    except (psutil.Error, OSError):
        return None


def _psutil_environ(pid: int) -> bytes:  # pragma: no cover - no /proc
    import psutil  # lazy: only where there is no /proc

    try:
        env = psutil.Process(pid).environ()
    except psutil.Error as exc:
        raise OSError(str(exc)) from exc
    return b"\0".join(f"{k}={v}".encode() for k, v in env.items())
