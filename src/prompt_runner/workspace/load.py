"""Read a workspace manifest file into a :class:`~.model.Workspace`, validated once.

Bad input is one :class:`~prompt_runner.errors.UserError` (exit 2) naming the
file, the key path and the fix, as for packets: a missing or unreadable file,
invalid YAML, a repeated key, a document that is not a mapping, a wrong
``schema``, an unknown key, a value of the wrong shape, a reference to a
repository the manifest does not declare. Loading writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..packet.manifest_file import read_manifest, validate_manifest
from .manifest import SCHEMA, WorkspaceManifest
from .model import Workspace, from_manifest


def load_workspace(path: str | os.PathLike[str]) -> Workspace:
    """The workspace the manifest at ``path`` describes.

    Args:
        path: the manifest file (YAML, ``schema: prompt_runner.workspace/v1``).

    Returns:
        The frozen :class:`Workspace` (roots resolved; nothing on disk touched).

    Raises:
        UserError: the file cannot be read or the manifest is invalid (one sentence).
    """
    file = Path(path).expanduser()
    data = read_manifest(
        file,
        kind="workspace",
        missing_fix="pass the workspace manifest (workspace.yml), a registered id, or run "
        "inside a prepared workspace",
    )
    return from_manifest(parse_manifest(data, file=file), file)


def parse_manifest(data: Any, *, file: str | Path) -> WorkspaceManifest:
    """Validate parsed YAML ``data`` as a workspace manifest from ``file``.

    Raises:
        UserError: naming ``file``, the key path and the fix.
    """
    where = str(file)
    manifest = validate_manifest(
        WorkspaceManifest, data, kind="workspace", schema=SCHEMA, file=where
    )
    _check_references(manifest, where)
    return manifest


def _check_references(manifest: WorkspaceManifest, where: str) -> None:
    """Names that must point at a declared repository, and unique artifact ids."""
    known = ", ".join(manifest.repositories)
    if manifest.packet.repo not in manifest.repositories:
        raise UserError(
            f"{manifest.packet.repo!r} is not one of the repositories ({known})",
            file=where,
            key="packet.repo",
            fix="name the repository whose clone holds the packet",
        )
    seen: set[str] = set()
    for i, artifact in enumerate(manifest.contracts.artifacts):
        key = f"contracts.artifacts[{i}]"
        if artifact.repo not in manifest.repositories:
            raise UserError(
                f"{artifact.repo!r} is not one of the repositories ({known})",
                file=where,
                key=f"{key}.repo",
                fix="name the repository whose clone holds the artifact's project",
            )
        if artifact.id in seen:
            raise UserError(
                f"the id {artifact.id!r} is given twice",
                file=where,
                key=f"{key}.id",
                fix="give each artifact its own id",
            )
        seen.add(artifact.id)
