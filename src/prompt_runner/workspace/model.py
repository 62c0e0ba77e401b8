"""The workspace as a value: :class:`Workspace` (frozen), built from a manifest by
:func:`~prompt_runner.workspace.load.load_workspace` or :func:`from_manifest`.

Everything a program needs to plan, prepare, start or watch a workspace is a
field or a method here, resolved once: absolute roots (``auto`` taken from
the XDG base directories), each repository's clone path, the packet directory
inside its clone, the state directory under the runtime root, the commit and
failure settings, the artifacts. Nothing here touches the disk.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..state.workspace_layout import WorkspaceLayout
from .manifest import (
    CommitMode,
    Containment,
    PushPolicy,
    WorkspaceFailurePolicy,
    WorkspaceManifest,
)

_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


def xdg_home(variable: str, fallback: str) -> Path:
    """``$XDG_DATA_HOME`` / ``$XDG_STATE_HOME`` (absolute), else ``~/<fallback>``.

    The XDG Base Directory Specification: a relative value is invalid and ignored.
    """
    value = os.environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def auto_root(kind: str, workspace_id: str) -> Path:
    """``<XDG data or state home>/prompt_runner/workspaces/<id>`` (``kind``: data|state)."""
    home = (
        xdg_home("XDG_DATA_HOME", ".local/share")
        if kind == "data"
        else xdg_home("XDG_STATE_HOME", ".local/state")
    )
    return home / "prompt_runner" / "workspaces" / workspace_id


def is_url(text: str) -> bool:
    """True for ``scheme://...`` and scp-like ``user@host:path`` remotes (not local paths)."""
    return "://" in text or bool(_SCP_LIKE.match(text))


def local_or_url(text: str, base: Path) -> str:
    """A URL as is; a local path absolute (a relative one from ``base``)."""
    if is_url(text):
        return text
    return os.path.normpath(base / Path(text).expanduser())


@dataclass(frozen=True)
class Repository:
    """One repository of a workspace.

    Attributes:
        name: the manifest's ``repositories`` key (also the clone's directory name).
        remote: the clone's ``origin`` (a URL, or an absolute local path).
        ref: the branch, tag or commit ``prepare`` checks out.
        source: where ``prepare`` first clones from (bootstrap only), else ``None``.
        clone: the clone's directory, ``<workspace_root>/repos/<name>``.
        branch: the work branch ``prepare`` checks out (``commits.branch``), else ``None``
            (stay on ``ref``).
    """

    name: str
    remote: str
    ref: str
    source: str | None
    clone: Path
    branch: str | None


@dataclass(frozen=True)
class Artifact:
    """One contract artifact (``contracts.artifacts``).

    Attributes:
        id: the ``@artifact:ID`` name.
        repo: the repository whose clone holds the project.
        project: the clone-relative directory the build runs in.
        build: the build argv (no shell), run in the project directory.
        output: the project-relative executable the build writes.
        installed: where ``prepare`` installs it, ``<workspace_root>/artifacts/<id>``.
    """

    id: str
    repo: str
    project: str
    build: tuple[str, ...]
    output: str
    installed: Path


@dataclass(frozen=True)
class Commits:
    """``commits``: ``mode`` (runner|session), ``push`` (explicit|after_prompt), ``branch``."""

    mode: CommitMode
    push: PushPolicy
    branch: str | None

    @property
    def committer(self) -> str:
        """The run's committer: ``git`` when the runner commits (``mode: runner``),
        ``noop`` when the agent commits in its session (``mode: session``)."""
        return "git" if self.mode == "runner" else "noop"


@dataclass(frozen=True)
class Workspace:
    """One operator workspace, fully resolved (see the module docstring).

    Attributes:
        id: the workspace id.
        manifest_path: the manifest file (absolute).
        layout: the workspace and runtime roots and every path below them.
        repositories: name -> :class:`Repository`, in manifest order.
        packet_repo: the repository whose clone holds the packet.
        packet_path: the packet directory relative to that clone.
        containment: ``auto|process_group|systemd_user`` as written (``start`` chooses for auto).
        commits: the commit settings.
        failure_policy: ``stop|continue_independent``, or ``None`` (the packet's own).
        artifacts: the contract artifacts, in manifest order.
        requires_version: the ``requires.prompt_runner`` range, or ``None``.
        requires_capabilities: the ``requires.capabilities`` ids.
        notify: the ``notify`` mapping as written (read by the notifications), or ``None``.
        manifest: the validated manifest model.
    """

    id: str
    manifest_path: Path
    layout: WorkspaceLayout
    repositories: Mapping[str, Repository]
    packet_repo: str
    packet_path: str
    containment: Containment
    commits: Commits
    failure_policy: WorkspaceFailurePolicy | None
    artifacts: tuple[Artifact, ...]
    requires_version: str | None
    requires_capabilities: tuple[str, ...]
    notify: Mapping[str, Any] | None
    manifest: WorkspaceManifest = field(repr=False, compare=False)

    @property
    def workspace_root(self) -> Path:
        """Where the clones and artifacts live."""
        return self.layout.workspace_root

    @property
    def runtime_root(self) -> Path:
        """Where the runtime state lives (outside every clone)."""
        return self.layout.runtime_root

    @property
    def state_dir(self) -> Path:
        """The packet's state root, ``<runtime_root>/state``."""
        return self.layout.state_dir

    @property
    def packet_dir(self) -> Path:
        """The packet directory inside its clone."""
        return Path(os.path.normpath(self.repositories[self.packet_repo].clone / self.packet_path))

    def clone(self, name: str) -> Path:
        """Repository ``name``'s clone directory.

        Raises:
            KeyError: no repository has that name.
        """
        return self.repositories[name].clone

    def artifact(self, artifact_id: str) -> Artifact:
        """The artifact ``artifact_id``.

        Raises:
            KeyError: no artifact has that id.
        """
        for artifact in self.artifacts:
            if artifact.id == artifact_id:
                return artifact
        raise KeyError(artifact_id)


def from_manifest(manifest: WorkspaceManifest, manifest_path: Path) -> Workspace:
    """The :class:`Workspace` of a validated manifest read from ``manifest_path``.

    ``auto`` roots are read from ``$XDG_DATA_HOME`` / ``$XDG_STATE_HOME`` now;
    relative ``remote`` and ``source`` paths are taken from the manifest's directory.
    """
    manifest_path = Path(os.path.abspath(manifest_path))
    base = manifest_path.parent
    op = manifest.operator
    layout = WorkspaceLayout(
        _root(op.workspace_root, "data", manifest.id), _root(op.runtime_root, "state", manifest.id)
    )
    repositories = {
        name: Repository(
            name=name,
            remote=local_or_url(spec.remote, base),
            ref=spec.ref,
            source=local_or_url(spec.source, base) if spec.source is not None else None,
            clone=layout.clone(name),
            branch=manifest.commits.branch,
        )
        for name, spec in manifest.repositories.items()
    }
    artifacts = tuple(
        Artifact(
            id=a.id,
            repo=a.repo,
            project=a.project,
            build=tuple(a.build),
            output=a.output,
            installed=layout.artifact(a.id),
        )
        for a in manifest.contracts.artifacts
    )
    return Workspace(
        id=manifest.id,
        manifest_path=manifest_path,
        layout=layout,
        repositories=MappingProxyType(repositories),
        packet_repo=manifest.packet.repo,
        packet_path=manifest.packet.path,
        containment=op.containment,
        commits=Commits(manifest.commits.mode, manifest.commits.push, manifest.commits.branch),
        failure_policy=manifest.failure_policy,
        artifacts=artifacts,
        requires_version=manifest.requires.prompt_runner,
        requires_capabilities=tuple(manifest.requires.capabilities),
        notify=MappingProxyType(dict(manifest.notify)) if manifest.notify is not None else None,
        manifest=manifest,
    )


def _root(value: str, kind: str, workspace_id: str) -> Path:
    if value == "auto":
        return auto_root(kind, workspace_id)
    return Path(os.path.normpath(Path(value).expanduser()))
