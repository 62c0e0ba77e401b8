"""Containment ``systemd_user``: the run as a transient ``systemd --user`` service.

``start`` asks the user's service manager for a transient unit
(``systemd-run --user``, systemd >= 240 for ``--setenv=NAME`` without a
value and ``Type=exec``; see ``systemd-run(1)``)::

    systemd-run --user --unit=prompt-runner-<label>-<digest>.service --collect --quiet
        --description=prompt-runner run <label>
        --property=Type=exec --property=KillMode=control-group
        --property=SuccessExitStatus=143 --property=StandardInput=null
        --property=StandardOutput=append:<logs>/runner.out.log
        --property=StandardError=append:<logs>/runner.err.log
        --working-directory=<cwd> --setenv=NAME ... -- <runner argv>

The environment goes by *name*: ``--setenv=NAME`` makes systemd-run copy the
variable's value from its own environment (which ``start`` gives it) into
the unit over D-Bus, so no value -- an API key -- is ever on a command line
(``ps`` shows argv to every user). ``KillMode=control-group`` puts every
process the runner starts in the unit's cgroup, which no ``setsid`` leaves:
``stop`` signals the cgroup (``systemctl --user kill --kill-whom=all``) and
succeeds only once the unit is inactive and its cgroup holds no process.
``SuccessExitStatus=143``: a stopped run ends as a polite SIGTERM does, with
exit status 143 (by design), which systemd would otherwise count a failure and
leave the unit ``failed`` (``systemd.service(5)``); other statuses still fail it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import proc
from ..errors import InfrastructureError

SYSTEMCTL_TIMEOUT_MS = 15_000
"""Longest wait, in milliseconds, for one ``systemctl --user`` / ``systemd-run`` call."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNIT_PART = re.compile(r"[^A-Za-z0-9_.-]+")
NOT_PASSED = frozenset({"_", "PWD", "OLDPWD", "SHLVL", "INVOCATION_ID", "JOURNAL_STREAM"})
"""Variables of the starter's own shell, not of the run: never passed to the unit."""

CGROUP_ROOTS = (
    Path("/sys/fs/cgroup"),
    Path("/sys/fs/cgroup/unified"),
    Path("/sys/fs/cgroup/systemd"),
)
"""Where a unit's ``ControlGroup`` is mounted: cgroup v2, the hybrid layout, v1's name=systemd."""


@dataclass(frozen=True)
class UnitState:
    """A unit as ``systemctl --user show`` reports it.

    Attributes:
        load_state: ``loaded``, ``not-found``...
        active_state: ``active``, ``activating``, ``deactivating``, ``inactive``, ``failed``.
        main_pid: its main process (0: none).
        control_group: its cgroup path below the cgroup root ('' when it has none).
        exit_status: its main process's exit status once it has exited, else ``None``.
    """

    load_state: str
    active_state: str
    main_pid: int
    control_group: str
    exit_status: int | None = None

    @property
    def running(self) -> bool:
        """The unit is loaded and not (yet, or any more) inactive."""
        return self.load_state == "loaded" and self.active_state not in ("inactive", "failed")


def user_manager() -> str | None:
    """``None`` when ``systemd-run`` is on PATH and ``systemctl --user`` answers,
    else why not (one line)."""
    if shutil.which("systemd-run") is None:
        return "systemd-run is not on PATH"
    result = proc.run(
        ["systemctl", "--user", "show", "--property=Version"],
        cwd=Path("/"),
        timeout_ms=SYSTEMCTL_TIMEOUT_MS,
    )
    if result.missing:
        return "systemctl is not on PATH"
    if result.ok and result.stdout.startswith("Version="):
        return None
    said = (result.stderr or result.stdout).strip().splitlines()
    return said[-1] if said else f"systemctl --user exited {result.returncode}"


def unit_name(label: str, state_dir: Path) -> str:
    """``prompt-runner-<label>-<12 hex of the state dir's path>.service``: one
    unit per state root."""
    digest = hashlib.sha256(str(state_dir).encode("utf-8")).hexdigest()[:12]
    part = _UNIT_PART.sub("-", label).strip("-.")[:60] or "run"
    return f"prompt-runner-{part}-{digest}.service"


def passed_names(env: Mapping[str, str]) -> tuple[str, ...]:
    """The names of ``env`` the unit gets (sorted; shell bookkeeping and names
    systemd cannot take left out)."""
    return tuple(sorted(n for n in env if _NAME.match(n) and n not in NOT_PASSED))


def systemd_run_argv(
    unit: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    env_names: Sequence[str],
    stdout: Path,
    stderr: Path,
    description: str,
) -> tuple[str, ...]:
    """The ``systemd-run`` command line that starts ``argv`` as ``unit`` (see the
    module docstring); every variable as ``--setenv=NAME``, never a value."""
    return (
        "systemd-run",
        "--user",
        f"--unit={unit}",
        "--collect",
        "--quiet",
        f"--description={description}",
        "--property=Type=exec",
        "--property=KillMode=control-group",
        "--property=SuccessExitStatus=143",  # a requested stop's exit (128 + SIGTERM)
        "--property=StandardInput=null",
        f"--property=StandardOutput=append:{stdout}",
        f"--property=StandardError=append:{stderr}",
        f"--working-directory={cwd}",
        *(f"--setenv={name}" for name in env_names),
        "--",
        *argv,
    )


def start_unit(argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Run ``systemd-run`` (``argv`` from :func:`systemd_run_argv`) with ``env``,
    the environment the ``--setenv=NAME`` values are read from.

    Raises:
        InfrastructureError: systemd-run is missing or refused (its sentence).
    """
    result = proc.run(argv, cwd=Path("/"), env=dict(env), timeout_ms=SYSTEMCTL_TIMEOUT_MS)
    if not result.ok:
        said = (result.stderr or result.stdout).strip() or result.start_error or "no output"
        raise InfrastructureError(f"systemd-run could not start the run: {said}")


def unit_state(unit: str) -> UnitState | None:
    """``unit`` as the user manager reports it, or ``None`` when it cannot be asked."""
    result = proc.run(
        [
            "systemctl",
            "--user",
            "show",
            unit,
            "--property=LoadState,ActiveState,MainPID,ControlGroup,ExecMainCode,ExecMainStatus",
        ],
        cwd=Path("/"),
        timeout_ms=SYSTEMCTL_TIMEOUT_MS,
    )
    if not result.ok:
        return None
    values = dict(line.partition("=")[::2] for line in result.stdout.splitlines())
    pid = values.get("MainPID", "0")
    status = values.get("ExecMainStatus", "")
    exited = values.get("ExecMainCode", "0") not in ("", "0")  # 1 exited, 2 killed...
    return UnitState(
        load_state=values.get("LoadState", ""),
        active_state=values.get("ActiveState", ""),
        main_pid=int(pid) if pid.isdigit() else 0,
        control_group=values.get("ControlGroup", ""),
        exit_status=int(status) if exited and status.isdigit() else None,
    )


def kill_unit(unit: str, signal_name: str) -> None:
    """Send ``signal_name`` (``SIGTERM``, ``SIGKILL``) to every process of ``unit``'s cgroup."""
    proc.run(
        ["systemctl", "--user", "kill", "--kill-whom=all", f"--signal={signal_name}", unit],
        cwd=Path("/"),
        timeout_ms=SYSTEMCTL_TIMEOUT_MS,
    )


def cgroup_dir(control_group: str) -> Path | None:
    """The directory of cgroup ``control_group`` (``/user.slice/...``), or ``None``."""
    if not control_group:
        return None
    for root in CGROUP_ROOTS:
        path = root / control_group.lstrip("/")
        if (path / "cgroup.procs").is_file():
            return path
    return None
