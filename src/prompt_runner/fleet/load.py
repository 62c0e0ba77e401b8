"""Read a fleet manifest into a :class:`~.model.Fleet`, validated once; nothing is written.

Bad input is one :class:`~prompt_runner.errors.UserError` (exit 2) naming the
file, the key path and the fix: a missing or unreadable file, invalid YAML, a
wrong ``schema``, an unknown key, a value of the wrong shape, no member at
all, a member manifest that is missing or invalid (its own sentence, naming
its file), a template whose ``repository`` it does not have, two members
with one workspace id, or two members sharing a workspace or runtime root.

A template member is the template workspace manifest with the member's
repository put in: its ``remote`` (relative paths taken from the fleet file),
its ``ref`` (default: the template's), no ``source``; the member's id and
work branch from the template's patterns; every other relative remote or
source made absolute from the template's directory; an absolute
``workspace_root`` / ``runtime_root`` gets ``/<member id>`` appended (so the
members never share a clone). Its manifest is kept as YAML in the
:class:`~.model.Member` for ``fleet submit`` to write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import UserError
from ..packet.manifest_file import read_manifest, validate_manifest
from ..state.fleet_layout import FleetLayout
from ..workspace import Workspace, load_workspace
from ..workspace.load import parse_manifest
from ..workspace.manifest import NAME_PATTERN
from ..workspace.model import from_manifest, local_or_url
from .manifest import SCHEMA, FleetManifest, TemplateSpec
from .model import Fleet, Member, TemporalSettings, fleet_root

_NAME = re.compile(NAME_PATTERN)


def load_fleet(path: str | os.PathLike[str]) -> Fleet:
    """The fleet the manifest at ``path`` describes, every member loaded.

    Args:
        path: the fleet manifest (YAML, ``schema: prompt_runner.fleet/v1``).

    Raises:
        UserError: the file or a member's manifest cannot be read or is
            invalid (one sentence, naming the file and the key).
    """
    file = Path(os.path.abspath(Path(path).expanduser()))
    data = read_manifest(file, kind="fleet", missing_fix="pass the fleet manifest (fleet.yml)")
    manifest = parse_fleet(data, file=file)
    layout = FleetLayout(fleet_root(manifest.id))
    members = [
        Member(ws.id, ws, f"workspaces[{i}]") for i, ws in enumerate(_listed(manifest, file))
    ]
    if manifest.template is not None:
        members += _expanded(manifest.id, manifest.template, file, layout)
    _check_members(members, file)
    temporal = manifest.temporal
    return Fleet(
        id=manifest.id,
        manifest_path=file,
        engine=manifest.engine,
        concurrency=manifest.concurrency,
        failure_policy=manifest.failure_policy,
        temporal=TemporalSettings(**temporal.model_dump()) if temporal else TemporalSettings(),
        members=tuple(members),
        layout=layout,
        manifest=manifest,
    )


def parse_fleet(data: Any, *, file: str | Path) -> FleetManifest:
    """Validate parsed YAML ``data`` as a fleet manifest from ``file``.

    Raises:
        UserError: naming ``file``, the key path and the fix.
    """
    where = str(file)
    manifest = validate_manifest(FleetManifest, data, kind="fleet", schema=SCHEMA, file=where)
    if not manifest.workspaces and manifest.template is None:
        raise UserError(
            "names no workspace",
            file=where,
            key="workspaces",
            fix="list workspace manifests under `workspaces:` or give a `template:`",
        )
    return manifest


def _member_file(base: Path, given: str, file: Path, key: str) -> Path:
    path = Path(os.path.normpath(base / Path(given).expanduser()))
    if not path.is_file():
        raise UserError(
            f"{given!r} is not a file ({path})" if path.exists() else f"{given!r} does not exist",
            file=file,
            key=key,
            fix="give the path of a workspace manifest, relative to the fleet file",
        )
    return path


def _listed(manifest: FleetManifest, file: Path) -> list[Workspace]:
    return [
        load_workspace(_member_file(file.parent, given, file, f"workspaces[{i}]"))
        for i, given in enumerate(manifest.workspaces)
    ]


def _expanded(fleet_id: str, spec: TemplateSpec, file: Path, layout: FleetLayout) -> list[Member]:
    """The template's members (see the module docstring)."""
    template_file = _member_file(file.parent, spec.workspace, file, "template.workspace")
    template = load_workspace(template_file).manifest
    if spec.repository not in template.repositories:
        known = ", ".join(template.repositories)
        raise UserError(
            f"{spec.repository!r} is not one of the template's repositories ({known})",
            file=file,
            key="template.repository",
            fix="name the repository of the template workspace that each entry replaces",
        )
    base = template.model_dump(mode="json", by_alias=True, exclude_none=True)
    for repo in base["repositories"].values():
        repo["remote"] = local_or_url(repo["remote"], template_file.parent)
        if "source" in repo:
            repo["source"] = local_or_url(repo["source"], template_file.parent)
    members: list[Member] = []
    for j, entry in enumerate(spec.repositories):
        key = f"template.repositories[{j}]"
        member_id = spec.id.format(fleet=fleet_id, name=entry.name)
        if not _NAME.match(member_id) or len(member_id) > 100:
            raise UserError(
                f"the workspace id {member_id!r} made from template.id is not a valid id",
                file=file,
                key=f"{key}.name",
                fix="use letters, digits, '-', '_' and '.' (at most 100 characters)",
            )
        doc = _member_doc(base, spec, entry.remote, entry.ref, member_id, file)
        doc["commits"]["branch"] = spec.branch.format(fleet=fleet_id, name=entry.name)
        target = layout.member_manifest(member_id)
        try:
            ws_manifest = parse_manifest(doc, file=target)
        except UserError as exc:
            raise UserError(
                f"the template applied to {entry.name!r} is not a valid workspace ({exc.reason}"
                + (f" at {exc.key}" if exc.key else "")
                + ")",
                file=file,
                key=key,
                fix=exc.fix or "correct the entry or the template",
            ) from None
        members.append(
            Member(
                member_id,
                from_manifest(ws_manifest, target),
                key,
                yaml.safe_dump(doc, sort_keys=False, allow_unicode=True),
            )
        )
    return members


def _member_doc(
    base: dict[str, Any],
    spec: TemplateSpec,
    remote: str,
    ref: str | None,
    member_id: str,
    file: Path,
) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(yaml.safe_dump(base))  # a deep copy of plain data
    doc["id"] = member_id
    repo = doc["repositories"][spec.repository]
    repo["remote"] = local_or_url(remote, file.parent)
    repo.pop("source", None)
    if ref is not None:
        repo["ref"] = ref
    operator = doc.setdefault("operator", {})
    for root in ("workspace_root", "runtime_root"):
        value = operator.get(root, "auto")
        if value != "auto":
            operator[root] = os.path.join(value, member_id)
    doc.setdefault("commits", {})
    return doc


def _check_members(members: list[Member], file: Path) -> None:
    """Unique workspace ids, and no two members sharing a workspace or runtime root."""
    seen: dict[str, str] = {}
    roots: dict[Path, str] = {}
    for member in members:
        if member.id in seen:
            raise UserError(
                f"the workspace id {member.id!r} is given twice (also by {seen[member.id]})",
                file=file,
                key=member.origin,
                fix="give each member workspace its own id",
            )
        seen[member.id] = member.origin
        for root in (member.workspace.workspace_root, member.workspace.runtime_root):
            if root in roots:
                raise UserError(
                    f"workspace {member.id!r} shares the directory {root} with {roots[root]}",
                    file=file,
                    key=member.origin,
                    fix="give each member workspace its own workspace_root and runtime_root "
                    "(or `auto`)",
                )
            roots[root] = member.id
