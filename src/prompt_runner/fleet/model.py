"""The fleet as a value: :class:`Fleet` (frozen), built by :func:`~.load.load_fleet`.

A fleet is its members -- one :class:`Member` per workspace, each a fully
resolved :class:`~prompt_runner.workspace.Workspace` -- plus how they are run:
the engine, the concurrency, the failure policy and, for Temporal, where the
service is. Nothing here touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..state.fleet_layout import FleetLayout
from ..workspace import Workspace
from ..workspace.model import xdg_home
from .manifest import Engine, FleetFailurePolicy, FleetManifest

WORKFLOW_PREFIX = "prompt-runner"
"""The first part of every member's workflow id: ``prompt-runner/<fleet>/<workspace>``."""


def fleet_root(fleet_id: str) -> Path:
    """``$XDG_STATE_HOME/prompt_runner/fleets/<id>`` (``~/.local/state/...`` by default)."""
    return xdg_home("XDG_STATE_HOME", ".local/state") / "prompt_runner" / "fleets" / fleet_id


@dataclass(frozen=True)
class Member:
    """One workspace of a fleet.

    Attributes:
        id: the workspace id (unique in the fleet).
        workspace: the resolved workspace.
        origin: where the fleet manifest names it: ``workspaces[0]`` or
            ``template.repositories[2]``.
        manifest_text: a template member's workspace manifest as YAML (``fleet
            submit`` writes it to ``workspace.manifest_path``); ``None`` for a
            member that has its own manifest file.
    """

    id: str
    workspace: Workspace
    origin: str
    manifest_text: str | None = None


@dataclass(frozen=True)
class TemporalSettings:
    """Where the fleet's workflows run: ``address`` (HOST:PORT), ``namespace``,
    ``task_queue``; ``heartbeat_timeout_s`` (seconds) and ``max_attempts`` of each
    member's activity; how to connect: ``tls`` (``None``: on only with an API
    key), the PEM files ``tls_ca`` / ``tls_cert`` / ``tls_key`` as written
    (relative to the fleet file) and ``api_key_env``, the variable the API key
    is read from (see :func:`~.temporal.connect.connect_options`)."""

    address: str = "localhost:7233"
    namespace: str = "default"
    task_queue: str = "prompt-runner"
    heartbeat_timeout_s: int = 30
    max_attempts: int = 10
    tls: bool | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    api_key_env: str | None = None


@dataclass(frozen=True)
class Fleet:
    """One fleet, fully resolved.

    Attributes:
        id: the fleet id.
        manifest_path: the fleet manifest (absolute).
        engine: ``local`` (a bounded pool of detached runs on this machine) or
            ``temporal`` (one workflow per member, run by ``fleet worker``\\ s).
        concurrency: at most this many members run at once.
        failure_policy: ``continue`` (a failed member never stops the others) or
            ``stop`` (no member is started after one failed; running ones finish).
        temporal: the Temporal service (defaults when the manifest has none).
        members: the members, in manifest order (``workspaces`` first, then the template's).
        layout: this machine's files of the fleet (queue, template members' manifests).
        manifest: the validated manifest model.
    """

    id: str
    manifest_path: Path
    engine: Engine
    concurrency: int
    failure_policy: FleetFailurePolicy
    temporal: TemporalSettings
    members: tuple[Member, ...]
    layout: FleetLayout
    manifest: FleetManifest

    def member(self, workspace_id: str) -> Member:
        """The member whose workspace id is ``workspace_id``.

        Raises:
            UserError: no member has that id (the sentence lists them).
        """
        for member in self.members:
            if member.id == workspace_id:
                return member
        known = ", ".join(m.id for m in self.members)
        raise UserError(
            f"fleet {self.id!r} has no workspace {workspace_id!r} (its workspaces: {known})",
            file=self.manifest_path,
            key="--workspace",
            fix="name one of its workspaces",
        )

    def workflow_id(self, workspace_id: str) -> str:
        """``prompt-runner/<fleet>/<workspace>``: the member's one workflow id."""
        return f"{WORKFLOW_PREFIX}/{self.id}/{workspace_id}"
