"""What ``start`` and ``stop`` work on: one run's state, its supervisor's files, its launch.

The supervision layer knows nothing of packets or workspaces: a
:class:`Supervised` value says where the run's state lives (its
``run.pid``, its control plane), where the supervisor keeps its record and
the runner's logs, the containment asked for, and -- for ``start`` -- the
command to launch (:class:`Launch`). The library (``api_supervise.py``)
builds one from a packet directory or from a workspace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from ..state.layout import StateLayout, SupervisorLayout

CONTAINMENTS: tuple[str, ...] = ("auto", "process_group", "systemd_user")
"""What ``containment`` takes: ``auto`` is ``systemd_user`` where a user manager
answers (``systemctl --user``), else ``process_group``."""


@dataclass(frozen=True)
class Launch:
    """The runner command ``start`` launches.

    Attributes:
        argv: the full argv (``python -m prompt_runner run ...``).
        cwd: its working directory.
        env: variables to add to the starter's environment (names -> values;
            the starter's own variables are passed on as they are). With
            ``systemd_user`` every variable is passed by name, never by value
            on the command line.
    """

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Supervised:
    """One run as the supervisor sees it.

    Attributes:
        label: what it is called in messages and unit names (the packet's
            name, the workspace id).
        state: the run's state root (``run.pid``, ``control/``...).
        files: the supervisor's record, lock and the runner's logs.
        containment: ``auto``, ``process_group`` or ``systemd_user``.
        launch: the command ``start`` launches (``None``: ``stop`` only).
    """

    label: str
    state: StateLayout
    files: SupervisorLayout
    containment: str = "auto"
    launch: Launch | None = None

    @property
    def state_dir(self) -> Path:
        """The run's state root."""
        return self.state.root
