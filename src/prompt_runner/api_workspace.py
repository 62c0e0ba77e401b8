"""The library's operator workspaces: one call per ``workspace ...`` command.

Each call takes the workspace as a :class:`~prompt_runner.workspace.Workspace`
value, a manifest path, a registered id, or ``None`` (the registered
workspace holding the current directory), and returns a typed, frozen result
with ``to_dict()`` (what ``--json`` prints)::

    import prompt_runner
    ws = prompt_runner.load_workspace("ops/workspace.yml")
    prompt_runner.plan_workspace(ws).problems          # what prepare would refuse
    prompt_runner.prepare_workspace(ws).changed       # False the second time
    prompt_runner.doctor_workspace(ws).ready
    prompt_runner.workspace_status(ws)["state"]       # running|stopped|completed|failed|unhealthy

``docs/workspaces.md`` is the guide; ``prompt_runner.workspace.runspec.run_command``
gives the argv and environment that run the workspace's packet.
"""

from __future__ import annotations

import os
from typing import Any

from .api_calls import public
from .errors import ArgumentError
from .workspace import Workspace
from .workspace import load_workspace as _load
from .workspace.doctor import WorkspaceDoctorReport, doctor
from .workspace.import_state import ImportReceipt, import_state
from .workspace.plan import WorkspacePlan, plan
from .workspace.prepare import PrepareResult, prepare
from .workspace.registry import resolve_workspace as _resolve
from .workspace.status import workspace_status as _status

__all__ = [
    "ImportReceipt",
    "PrepareResult",
    "Workspace",
    "WorkspaceDoctorReport",
    "WorkspacePlan",
    "doctor_workspace",
    "import_workspace_state",
    "load_workspace",
    "plan_workspace",
    "prepare_workspace",
    "resolve_workspace",
    "workspace_status",
]


def _workspace(caller: str, workspace: Any) -> Workspace:
    """``workspace`` as a Workspace: as is, or resolved from a path, an id or ``None``.

    Raises:
        ArgumentError: neither.
        UserError: it cannot be found, or its manifest is invalid.
    """
    if isinstance(workspace, Workspace):
        return workspace
    if workspace is None or isinstance(workspace, str | os.PathLike):
        return _resolve(workspace)
    raise ArgumentError(
        f"must be a Workspace, a manifest path, a registered id or None, not {workspace!r}",
        key=f"{caller}(workspace=...)",
        fix="pass e.g. 'ops/workspace.yml'",
    )


@public
def load_workspace(path: str | os.PathLike[str]) -> Workspace:
    """The :class:`Workspace` the manifest at ``path`` describes (nothing is written).

    Raises:
        UserError: the file cannot be read or the manifest is invalid (one
            sentence naming the file, the key and the fix).
    """
    return _load(path)


@public
def resolve_workspace(workspace: str | os.PathLike[str] | None = None) -> Workspace:
    """The workspace ``workspace`` names: a manifest path, a registered id
    (``workspace prepare`` registers it), or ``None`` for the registered one
    holding the current directory.

    Raises:
        UserError: nothing (or more than one workspace) matches, or the manifest is invalid.
    """
    return _resolve(workspace)


@public
def plan_workspace(workspace: Any = None) -> WorkspacePlan:
    """What ``prepare`` and a run would do (read-only: no network, no writes).

    Returns:
        :class:`~prompt_runner.workspace.plan.WorkspacePlan`; ``problems`` lists
        what would stop ``prepare`` (``ok`` is True when there is none).
    """
    return plan(_workspace("plan_workspace", workspace))


@public
def prepare_workspace(workspace: Any = None) -> PrepareResult:
    """Make the clones, artifacts and runtime root; the only call that writes clones.

    Full independent clones (no hardlinks, no alternates), fast-forward-only
    updates, artifacts rebuilt when their inputs change; the workspace is
    registered under its id. A second call with nothing new upstream changes
    nothing (``changed`` is False).

    Raises:
        UserError: an unmet requirement; an existing clone that is dirty (its
            paths named), shared or foreign (nothing is written); a diverged ref.
        InfrastructureError: git or an artifact's build failed (exit 3).
    """
    return prepare(_workspace("prepare_workspace", workspace))


@public
def doctor_workspace(workspace: Any = None) -> WorkspaceDoctorReport:
    """Is the workspace ready to run? Read-only checks, each ok/warning/error.

    A dirty clone is a warning (resumable work), never an error.
    """
    return doctor(_workspace("doctor_workspace", workspace))


@public
def import_workspace_state(
    workspace: Any = None, source: str | os.PathLike[str] | None = None
) -> ImportReceipt:
    """One-time import of a packet-local ``progress.log`` into the workspace's empty runtime.

    Args:
        workspace: the workspace (see the module docstring).
        source: the packet directory (or its ``.prompt_runner/progress.log``)
            to import from; ``None``: the packet in the packet repository's ``source``.

    Only the latest ``completed`` record per prompt is imported, validated
    against the workspace's packet; a receipt with the source's sha256 is written.

    Raises:
        InfrastructureError: a live run holds the workspace or the source (exit 3).
        UserError: the workspace already has progress, or the source is
            missing, unparseable, names unknown prompts or completed nothing.
    """
    return import_state(_workspace("import_workspace_state", workspace), source)


@public
def workspace_status(workspace: Any = None) -> dict[str, Any]:
    """The workspace's status document (``schema: prompt_runner.workspace.status/v1``).

    Keys: ``state`` (running|stopped|completed|failed|unhealthy), ``run_id``,
    ``containment`` (kind, alive, pid, the supervisor's record), ``last_progress_at``,
    ``journal_seq``, ``prompts``, ``clones`` (each: branch, head, dirty, ahead,
    behind); every key is described in :mod:`prompt_runner.workspace.status`.

    Raises:
        StateError: a record of truth under the state directory is corrupt.
    """
    return _status(_workspace("workspace_status", workspace))
