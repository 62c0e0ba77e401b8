"""Packet files prompt-runner itself rewrites: written through symlinks, and recorded.

The commands that edit an existing packet file (``control amend|relax
--persist``, ``packet add-repo``, ``packet migrate --write``) write it with
:func:`write_packet_file`:

* A symlinked prompt or manifest (a packet may link a shared file) is written
  through: the link's target is replaced atomically and the link stays, so the
  shared file gets the edit and the packet keeps following it.
* With an existing state root, the write is recorded in ``<state_root>/packet-edits.jsonl``
  (one JSON line per write)::

      {"schema_version": 1, "path": "/abs/resolved/file", "sha256": "<hex of the bytes>",
       "by": "control --persist", "run_id": "<runs/current.json's run id>"|null,
       "at": ISO8601}

  A packet tracked inside a target repo shows such an edit as a change made
  during whichever session ran then; it is the operator's packet edit, never
  that session's work. :func:`edited_during` tells the runner a session of
  its run may hold such an edit (so it must look before committing), and
  :func:`own_edit_paths` which dirty paths are still exactly what
  prompt-runner wrote (a path the agent edited after is its work again).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import StateError
from ..state._clock import iso_now
from ..state.atomic import write_bytes_atomic
from ..state.current_run import current_run_id
from ..state.layout import StateLayout
from ..state.lines import append_line_shared

LEDGER_NAME = "packet-edits.jsonl"
"""The record of prompt-runner's own packet-file writes, directly under the state root."""
SCHEMA_VERSION = 1


def ledger_path(state_root: Path) -> Path:
    """``<state_root>/packet-edits.jsonl``."""
    return Path(state_root) / LEDGER_NAME


def written_path(path: Path) -> Path:
    """The file a write of ``path`` replaces: a symlink's final target (absolute),
    else ``path`` itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_packet_file(
    path: Path, text: str, *, state_root: Path | None = None, by: str = "prompt-runner"
) -> Path:
    """Replace the packet file ``path`` with ``text`` (UTF-8) atomically, through a symlink.

    Args:
        path: the packet file (a prompt, the manifest); may be a symlink.
        text: the new content.
        state_root: the packet's state root; when given and it exists, the
            write is recorded in its ``packet-edits.jsonl`` (see the module
            doc). A packet with no state has no run whose session could take
            the edit, and no state root is created for the record (it would
            be an untracked directory without its ``.gitignore``).
        by: the command that writes (recorded as ``by``).

    Returns:
        The file actually replaced (the symlink's target, or ``path``).

    Raises:
        StorageError: the file or the record cannot be written.
    """
    target = written_path(path)
    data = text.encode("utf-8")
    write_bytes_atomic(target, data)
    if state_root is not None and Path(state_root).is_dir():
        record = {
            "schema_version": SCHEMA_VERSION,
            "path": str(Path(os.path.abspath(target))),
            "sha256": hashlib.sha256(data).hexdigest(),
            "by": by,
            "run_id": _current_run_id(Path(state_root)),
            "at": iso_now(),
        }
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        append_line_shared(ledger_path(state_root), line.encode("utf-8"))
    return target


def _current_run_id(state_root: Path) -> str | None:
    """The id ``runs/current.json`` names (``None``: none, or unreadable)."""
    try:
        return current_run_id(StateLayout(state_root).current_run)
    except (StateError, OSError):
        return None


def _records(state_root: Path | None) -> list[dict[str, Any]]:
    """The ledger's records, oldest first (``[]`` without one; a line that does not
    parse is skipped: the ledger only ever narrows what is committed)."""
    if state_root is None:
        return []
    try:
        raw = ledger_path(state_root).read_bytes()
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for line in raw.split(b"\n"):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def edited_during(state_root: Path | None, run_id: str) -> bool:
    """Whether prompt-runner wrote a packet file while run ``run_id`` was the
    current run (a session of it may show that edit as its own change).

    Never raises; ``False`` without a ledger (one failed ``open``)."""
    return any(r.get("run_id") == run_id for r in _records(state_root))


def recorded_edits(state_root: Path | None) -> dict[str, str]:
    """Resolved absolute path -> sha256 of prompt-runner's latest write of it
    (``{}`` without a ledger)."""
    out: dict[str, str] = {}
    for value in _records(state_root):
        path, digest = value.get("path"), value.get("sha256")
        if isinstance(path, str) and isinstance(digest, str):
            out[os.path.realpath(path)] = digest
    return out


def own_edit_paths(state_root: Path | None, repo_root: Path, paths: Iterable[str]) -> set[str]:
    """Those of ``paths`` (relative to the work-tree root ``repo_root``) whose file
    is still byte for byte what prompt-runner itself last wrote there.

    Such a path is the runner's packet edit (``control amend --persist`` during
    a session): leave it out of what a prompt commits. A path changed since
    (the agent edited it too) is not returned; nor is a symlink in the repo.
    Never raises: an unreadable file is simply not the runner's.
    """
    edits = recorded_edits(state_root)
    if not edits:
        return set()
    out: set[str] = set()
    for rel in paths:
        file = Path(repo_root) / rel
        digest = edits.get(os.path.realpath(file))
        if digest is None or file.is_symlink():
            continue
        try:
            if hashlib.sha256(file.read_bytes()).hexdigest() == digest:
                out.add(rel)
        except OSError:
            continue
    return out
