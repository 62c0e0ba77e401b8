"""Launching the runner in its containment: ``process_group`` or ``systemd_user``.

* ``process_group`` works everywhere: the runner is a detached child in a
  new session (:func:`prompt_runner.proc.detach`): stdin ``/dev/null``,
  output appended to the runtime's logs, no controlling terminal (closing the
  starting terminal, or SIGHUP to its session, never reaches it). Its
  identity is its pid and start time.
* ``systemd_user``: a transient user service (:mod:`.systemd_user`), its
  cgroup holding every process of the run.
* ``auto``: ``systemd_user`` when ``systemctl --user`` answers, else
  ``process_group``.

Either way every process of the launch inherits :data:`.members.MARKER_ENV`
set to the launch's token, which ``stop`` finds them by.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import proc
from ..errors import InfrastructureError, UserError
from ..state.lock import PidIdentity, process_start_time
from . import systemd_user
from .target import CONTAINMENTS, Launch, Supervised


@dataclass(frozen=True)
class Launched:
    """A runner just launched.

    Attributes:
        containment: ``process_group`` or ``systemd_user``.
        unit: the unit's name (``systemd_user``), else ``None``.
        runner: returns the runner's identity once it is known (``None`` before:
            a unit's main pid appears once it has started).
        ended: returns ``None`` while the runner may still run, else its exit
            status (``-N``: killed by signal N; a unit's unknown status: ``-1``).
        env_names: the variable names the runner was given.
    """

    containment: str
    unit: str | None
    runner: Callable[[], PidIdentity | None]
    ended: Callable[[], int | None]
    env_names: tuple[str, ...]


def choose(requested: str) -> str:
    """The containment to use for ``requested`` (``auto`` decided here).

    Raises:
        UserError: ``requested`` is not a containment.
        InfrastructureError: ``systemd_user`` was asked for and no user
            manager answers (the sentence says what ``systemctl --user`` said).
    """
    if requested not in CONTAINMENTS:
        raise UserError(
            f"unknown containment `{requested}`",
            key="containment",
            fix="use auto, process_group or systemd_user",
        )
    if requested == "process_group":
        return requested
    why_not = systemd_user.user_manager()
    if why_not is None:
        return "systemd_user"
    if requested == "auto":
        return "process_group"
    raise InfrastructureError(
        f"containment systemd_user needs a user service manager, and `systemctl --user` "
        f"says: {why_not}; use `containment: process_group` (or auto) on this machine"
    )


def launch(sup: Supervised, containment: str, env: Mapping[str, str]) -> Launched:
    """Start ``sup.launch`` in ``containment`` with the whole environment ``env``.

    Raises:
        InfrastructureError: the runner could not be started (why: its working
            directory missing or not a directory is named as such, never as
            the interpreter's fault).
    """
    command = sup.launch
    assert command is not None
    _check_cwd(sup.label, command)
    if containment == "systemd_user":
        return _launch_unit(sup, command, env)
    child = proc.detach(
        command.argv, cwd=command.cwd, env=env, stdout=sup.files.stdout, stderr=sup.files.stderr
    )
    if isinstance(child, proc.ProcResult):
        raise InfrastructureError(f"the runner could not be started: {child.start_error}")
    identity = PidIdentity(child.pid, process_start_time(child.pid))
    return Launched(
        containment="process_group",
        unit=None,
        runner=lambda: identity,
        ended=child.poll,
        env_names=tuple(sorted(env)),
    )


def _launch_unit(sup: Supervised, command: Launch, env: Mapping[str, str]) -> Launched:
    unit = systemd_user.unit_name(sup.label, sup.state_dir)
    names = systemd_user.passed_names(env)
    for log in (sup.files.stdout, sup.files.stderr):
        log.parent.mkdir(parents=True, exist_ok=True)
    argv = systemd_user.systemd_run_argv(
        unit,
        command.argv,
        cwd=command.cwd,
        env_names=names,
        stdout=sup.files.stdout,
        stderr=sup.files.stderr,
        description=f"prompt-runner run {sup.label}",
    )
    systemd_user.start_unit(argv, env)
    known: list[PidIdentity] = []

    def runner() -> PidIdentity | None:
        if not known:
            state = systemd_user.unit_state(unit)
            if state is not None and state.main_pid > 0:
                start = process_start_time(state.main_pid)
                if start is not None:
                    known.append(PidIdentity(state.main_pid, start))
        return known[0] if known else None

    def ended() -> int | None:
        state = systemd_user.unit_state(unit)
        if state is None or state.running:
            return None
        return state.exit_status if state.exit_status is not None else -1

    return Launched("systemd_user", unit, runner, ended, names)


def _check_cwd(label: str, command: Launch) -> None:
    """Refuse a launch whose working directory is missing or not a directory.

    The OS would report it as the program's fault (``Not a directory:
    .../python``), so it is told here, naming the directory.

    Raises:
        InfrastructureError: naming the directory and what is wrong with it.
    """
    cwd = command.cwd
    try:
        if cwd.is_dir():
            return
        what = "is not a directory" if cwd.exists() else "does not exist"
    except OSError as exc:
        what = f"cannot be read ({exc.strerror or exc})"
    if what == "does not exist":
        blocker = next((p for p in cwd.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            what = f"cannot exist: {blocker} is not a directory"
    raise InfrastructureError(
        f"the runner of {label} could not be started: its working directory {cwd} {what}"
    )
