"""Read a workspace manifest file into a :class:`~.model.Workspace`, validated once.

Bad input is one :class:`~prompt_runner.errors.UserError` (exit 2) naming the
file, the key path and the fix, as for packets: a missing or unreadable file,
invalid YAML, a repeated key, a document that is not a mapping, a wrong
``schema``, a key YAML did not read as a string (``on:`` is ``True`` to YAML
1.1: named by its words, with the quoting fix), a repository name with a
character a directory name should not have (the allowed characters, as a
packet's repo names), an unknown key, a value of the wrong shape, a
``notify:`` block a run would refuse (the sentences a packet's ``notify:``
gets), a reference to a repository the manifest does not declare. Loading
writes nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

from ..errors import UserError
from ..notify.config import KEYS as NOTIFY_KEYS
from ..notify.config import check_level
from ..packet.manifest_file import read_manifest, validate_manifest
from ..packet.validation import model_in, non_string_key
from .manifest import NAME_PATTERN, SCHEMA, WorkspaceManifest
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
    if isinstance(data, dict) and data.get("schema") == SCHEMA:
        _check_keys(data, where)
        _check_repository_names(data.get("repositories"), where)
    manifest = validate_manifest(
        WorkspaceManifest, data, kind="workspace", schema=SCHEMA, file=where
    )
    if manifest.notify is not None:  # the run merges it over the packet's: checked alike now
        check_level(manifest.notify, file=where, key="notify")
    _check_references(manifest, where)
    return manifest


def _check_keys(data: Any, where: str, path: str = "") -> None:
    """Refuse the first mapping key YAML did not read as a string, naming it by
    the words that become it (``on``, ``yes``, ``true`` for True) and the fix."""
    if isinstance(data, list):
        for i, item in enumerate(data):
            _check_keys(item, where, f"{path}[{i}]")
        return
    if not isinstance(data, dict):
        return
    for name, value in data.items():
        if not isinstance(name, str):
            raise _not_a_string_key(name, data, where, path)
        _check_keys(value, where, f"{path}.{name}" if path else name)


def _not_a_string_key(name: Any, mapping: dict[Any, Any], where: str, path: str) -> UserError:
    message, word = non_string_key(name)
    fix = f'quote the key: "{word}":'
    known = _known_keys(path)
    if known is not None and word not in known:
        level = f"`{path}`" if path else "the top level"
        fix = (
            f'quote the key ("{word}":) and put it where it belongs: {level} takes no '
            f"{word!r} (its keys: {', '.join(known)})"
        )
        if not path and word in NOTIFY_KEYS:
            fix += f"; notify's `{word}` goes under `notify:`"
    return UserError(message, file=where, key=path or None, fix=fix)


def _known_keys(path: str) -> list[str] | None:
    """The keys the manifest model takes at ``path`` (``None``: a mapping of free
    names, such as ``repositories``)."""
    if path == "notify":
        return sorted(NOTIFY_KEYS)
    node: Any = WorkspaceManifest
    for part in re.sub(r"\[\d+\]", "", path).split(".") if path else ():
        mapping = _mapping_in(node)
        if mapping is not None:  # a free name (a repository): its value's model next
            node = get_args(mapping)[1] if len(get_args(mapping)) == 2 else None
            continue
        model = model_in(node)
        field = model.model_fields.get(part) if model is not None else None
        if field is None:
            return None
        node = field.annotation
    model = model_in(node) if _mapping_in(node) is None else None
    fields = model.model_fields if model is not None else None
    return sorted(info.alias or name for name, info in fields.items()) if fields else None


def _mapping_in(annotation: Any) -> Any:
    """``dict[K, V]`` when ``annotation`` is one (or an optional one), else ``None``."""
    if get_origin(annotation) is dict:
        return annotation
    if isinstance(annotation, UnionType) or get_origin(annotation) is Union:
        return next((a for a in get_args(annotation) if get_origin(a) is dict), None)
    return None


_NAME = re.compile(NAME_PATTERN)


def _check_repository_names(repositories: Any, where: str) -> None:
    """Each ``repositories`` key names a clone's directory: the characters a packet's
    repo names may use (a non-string key is :func:`_check_keys`' to name)."""
    if not isinstance(repositories, dict):
        return
    for name in repositories:
        if isinstance(name, str) and (not _NAME.match(name) or len(name) > 100):
            fixed = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-_.")[:100] or "repo"
            raise UserError(
                f"repository name {name!r} may only use letters, digits, '_', '.', '-' "
                "(starting with a letter or digit, at most 100 characters: it names the "
                "clone's directory)",
                file=where,
                key="repositories",
                fix=f"rename it, e.g. {fixed!r}, and every reference to it (packet.repo, "
                "contracts.artifacts[].repo)",
            )


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
