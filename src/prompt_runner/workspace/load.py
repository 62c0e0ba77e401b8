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
from ..packet.frontmatter import parse_yaml
from ..packet.validation import validate_model
from .manifest import SCHEMA, WorkspaceManifest
from .model import Workspace, from_manifest

MAX_BYTES = 1_000_000
"""A manifest larger than this is refused (it is a few dozen lines)."""


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
    data = parse_yaml(_read(file), file=str(file))
    return from_manifest(parse_manifest(data, file=file), file)


def parse_manifest(data: Any, *, file: str | Path) -> WorkspaceManifest:
    """Validate parsed YAML ``data`` as a workspace manifest from ``file``.

    Raises:
        UserError: naming ``file``, the key path and the fix.
    """
    where = str(file)
    if not isinstance(data, dict):
        raise UserError(
            f"a workspace manifest must be a YAML mapping, not {type(data).__name__}",
            file=where,
            fix=f"start it with `schema: {SCHEMA}` and `id: NAME`",
        )
    schema = data.get("schema")
    if schema != SCHEMA:
        raise UserError(
            "is missing"
            if schema is None
            else f"{schema!r} is not a workspace schema this build reads",
            file=where,
            key="schema",
            fix=f"write `schema: {SCHEMA}`",
        )
    manifest = validate_model(WorkspaceManifest, data, file=where)
    _check_references(manifest, where)
    return manifest


def _read(file: Path) -> str:
    try:
        if not file.is_file():
            raise UserError(
                "is not a file" if file.exists() else "does not exist",
                file=file,
                fix="pass the workspace manifest (workspace.yml), a registered id, or run "
                "inside a prepared workspace",
            )
        if file.stat().st_size > MAX_BYTES:
            raise UserError(
                f"is larger than {MAX_BYTES} bytes", file=file, fix="pass the workspace manifest"
            )
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError("is not UTF-8 text", file=file, fix="save it as UTF-8") from None
    except OSError as exc:
        raise UserError(
            f"cannot be read ({exc.strerror or exc})", file=file, fix="check its permissions"
        ) from None


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
