"""Which workspace ``W`` names: a manifest path, a registered id, or the one found here.

``workspace prepare`` registers a workspace: one small JSON file per id,
``$XDG_STATE_HOME/prompt_runner/registry/<id>.json`` (``schema:
prompt_runner.workspace.registration/v1``), naming its manifest and roots.
Resolution of ``W`` (:func:`resolve_workspace`):

1. ``W`` is an existing file, or looks like a path (has a ``/``, or ends in
   ``.yml``/``.yaml``): that manifest.
2. else ``W`` is an id: the registered manifest of that id (it must still load
   and still carry that id).
3. ``W`` not given: the registered workspace whose manifest directory, clone,
   or runtime root holds the current directory; none or several is an error
   naming them.

A registration whose manifest is gone or no longer loads is skipped when
searching, and named when asked for by id.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..state.atomic import read_json_object, write_json_atomic
from .load import load_workspace
from .model import Workspace, xdg_home

REGISTRATION_SCHEMA = "prompt_runner.workspace.registration/v1"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def registry_dir() -> Path:
    """``$XDG_STATE_HOME/prompt_runner/registry`` (``~/.local/state/...`` by default)."""
    return xdg_home("XDG_STATE_HOME", ".local/state") / "prompt_runner" / "registry"


def registration_path(workspace_id: str) -> Path:
    """``<registry>/<id>.json``."""
    return registry_dir() / f"{workspace_id}.json"


@dataclass(frozen=True)
class Registration:
    """One registry entry: ``id``, ``manifest`` (absolute), ``registered_at`` (ISO 8601)."""

    id: str
    manifest: Path
    registered_at: str


def register_workspace(ws: Workspace) -> Path:
    """Record ``ws`` in the registry (replacing an earlier entry of its id).

    Returns the registration file. Raises StorageError when it cannot be written.
    """
    path = registration_path(ws.id)
    write_json_atomic(
        path,
        {
            "schema": REGISTRATION_SCHEMA,
            "schema_version": 1,
            "id": ws.id,
            "manifest": str(ws.manifest_path),
            "workspace_root": str(ws.workspace_root),
            "runtime_root": str(ws.runtime_root),
            "registered_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        },
    )
    return path


def registrations() -> list[Registration]:
    """Every readable registry entry, by id (unreadable ones are skipped)."""
    out: list[Registration] = []
    directory = registry_dir()
    if not directory.is_dir():
        return out
    for path in sorted(directory.glob("*.json")):
        entry = read_registration(path)
        if entry is not None:
            out.append(entry)
    return out


def read_registration(path: Path) -> Registration | None:
    """The registry entry in ``path``, or ``None`` when absent or unreadable."""
    try:
        doc = read_json_object(path)
    except UserError:
        return None
    if (
        not doc
        or doc.get("schema") != REGISTRATION_SCHEMA
        or doc.get("id") != path.stem
        or not isinstance(doc.get("manifest"), str)
    ):
        return None
    return Registration(path.stem, Path(doc["manifest"]), str(doc.get("registered_at", "")))


def looks_like_path(text: str) -> bool:
    """True when ``text`` names a file rather than an id."""
    return "/" in text or os.sep in text or text.endswith((".yml", ".yaml"))


def resolve_workspace(reference: str | os.PathLike[str] | None = None) -> Workspace:
    """The workspace ``reference`` names (see the module docstring).

    Args:
        reference: a manifest path, a registered id, or ``None`` (find it from the
            current directory).

    Raises:
        UserError: nothing matches, several do, or the manifest is invalid.
    """
    if reference is None:
        return _discover(Path.cwd())
    text = os.fspath(reference)
    if os.path.isfile(text) or looks_like_path(text) or not _ID.match(text):
        return load_workspace(text)
    entry = read_registration(registration_path(text))
    if entry is None:
        raise UserError(
            f"no workspace {text!r} is registered (and there is no file of that name)",
            key="--workspace",
            fix="pass the manifest path, or run `prompt-runner workspace prepare MANIFEST` once "
            "to register it",
        )
    ws = load_workspace(entry.manifest)
    if ws.id != text:
        raise UserError(
            f"the manifest registered as {text!r} now has the id {ws.id!r}",
            file=entry.manifest,
            key="id",
            fix=f"pass the manifest path, or prepare it again to register {ws.id!r}",
        )
    return ws


def _discover(cwd: Path) -> Workspace:
    here = cwd.resolve()
    found: list[Workspace] = []
    for entry in registrations():
        try:
            ws = load_workspace(entry.manifest)
        except UserError:
            continue
        if ws.id == entry.id and any(_within(here, p) for p in _homes(ws)):
            found.append(ws)
    if len(found) == 1:
        return found[0]
    if not found:
        raise UserError(
            f"the current directory ({here}) is not a packet, and no registered workspace holds it",
            fix="name the run: the packet directory (e.g. `prompt-runner stop PACKET`), or "
            "the workspace (its manifest or id); or cd into the packet or a workspace's clone",
        )
    names = ", ".join(ws.id for ws in found)
    raise UserError(
        f"several registered workspaces hold the current directory ({names})",
        key="--workspace",
        fix="pass --workspace with one of them",
    )


def _homes(ws: Workspace) -> list[Path]:
    return [ws.manifest_path.parent, ws.runtime_root, *(r.clone for r in ws.repositories.values())]


def _within(path: Path, home: Path) -> bool:
    try:
        home = home.resolve()
    except OSError:
        return False
    return path == home or home in path.parents
