"""``workspace import-state``: a one-time bridge from a packet-local ``progress.log``.

A packet run before it had a workspace kept its progress in
``<packet>/.prompt_runner/progress.log``. Importing carries exactly one thing
into the workspace's empty runtime: for each prompt whose *latest* record
there is ``completed``, one ``completed`` line (suffix ``no_session``: no
session of this workspace ran it). Failed, interrupted and running work is
never marked complete; it runs again.

Refused, with nothing written: a live run (of the workspace, or of the source
packet), progress already in the workspace, a source that does not parse, a
prompt id the workspace's packet does not have, a source with nothing
completed. The workspace's run lock is held while importing, so no run can
start halfway. A receipt (``<runtime_root>/imports/<stamp>-<digest>.json``,
``schema: prompt_runner.workspace.import/v1``) records the source, its sha256,
and what was imported and skipped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InfrastructureError, LockHeldError, UserError
from ..packet.loader import load_packet
from ..paths import MANIFEST_NAME
from ..state.atomic import write_bytes_atomic, write_json_atomic
from ..state.layout import STATE_DIR, StateLayout
from ..state.lock import RunLock, identity_alive, read_pid_file
from ..state.progress import ProgressRecord, make_progress_record, read_progress
from ..state.usable import prepare_state_dir
from .model import Workspace, is_url

IMPORT_SCHEMA = "prompt_runner.workspace.import/v1"


@dataclass(frozen=True)
class ImportReceipt:
    """What was imported: ``receipt`` (its file), ``source`` and ``source_sha256``,
    ``imported`` (prompt ids), ``skipped`` (id -> the latest status there)."""

    workspace: str
    receipt: Path
    source: Path
    source_sha256: str
    imported: tuple[str, ...]
    skipped: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": IMPORT_SCHEMA,
            "workspace": self.workspace,
            "receipt": str(self.receipt),
            "source": str(self.source),
            "source_sha256": self.source_sha256,
            "imported": list(self.imported),
            "skipped": dict(self.skipped),
        }


def default_source(ws: Workspace) -> Path | None:
    """The author's packet-local progress log: the packet repository's local
    ``source`` + ``packet.path`` + ``.prompt_runner/progress.log`` (``None``
    when that repository has no local source)."""
    source = ws.repositories[ws.packet_repo].source
    if source is None or is_url(source):
        return None
    return StateLayout(Path(source) / ws.packet_path / STATE_DIR).progress_log


def source_log(given: str | os.PathLike[str]) -> Path:
    """``given`` as a progress log: a packet directory's ``.prompt_runner/progress.log``,
    a state directory's ``progress.log``, or the file itself."""
    path = Path(given).expanduser().absolute()
    if path.is_dir():
        if (path / MANIFEST_NAME).is_file():
            return StateLayout(path / STATE_DIR).progress_log
        return StateLayout(path).progress_log
    return path


def import_state(ws: Workspace, source: str | os.PathLike[str] | None = None) -> ImportReceipt:
    """Import the latest completed records of ``source`` into ``ws``'s empty runtime.

    Args:
        ws: the workspace (its packet's clone must exist: ``prepare`` first).
        source: a packet directory, a state directory or a ``progress.log``;
            ``None``: :func:`default_source`.

    Raises:
        InfrastructureError: a live run holds the workspace or the source (exit 3).
        UserError: the workspace already has progress, the source is missing,
            unparseable, empty of completions or names prompts the packet lacks.
        StorageError: the progress or receipt could not be written.
    """
    log = source_log(source) if source is not None else default_source(ws)
    if log is None:
        raise UserError(
            "no source to import from",
            key="--source",
            fix="pass the packet directory (or its .prompt_runner/progress.log) to import",
        )
    if not log.is_file():
        raise UserError("does not exist", file=log, fix="pass the packet whose progress to import")
    _refuse_live(
        log.parent,
        f"{log.parent}: a live run (pid {{pid}}) is still writing this "
        "progress; let it finish or stop it before importing",
    )
    state = ws.layout.state
    _refuse_live(
        state.root,
        f"workspace {ws.id!r}: a live run (pid {{pid}}) holds its state; stop it before importing",
    )
    _refuse_progress(ws, state)
    raw = log.read_bytes()
    records = _checked_records(ws, log)
    prepare_state_dir(state.root)
    lock = RunLock(state.run_pid)
    try:
        lock.acquire()
    except LockHeldError as exc:
        raise InfrastructureError(
            f"workspace {ws.id!r}: a live run (pid {exc.pid}) holds its state; stop it before "
            "importing"
        ) from None
    try:
        _refuse_progress(ws, state)  # a run that started and ended meanwhile
        return _write(ws, log, raw, records, state)
    finally:
        lock.release()


def _refuse_live(root: Path, message: str) -> None:
    ident = read_pid_file(StateLayout(root).run_pid)
    if ident is not None and identity_alive(ident):
        raise InfrastructureError(message.format(pid=ident.pid))


def _refuse_progress(ws: Workspace, state: StateLayout) -> None:
    if state.progress_log.exists() and state.progress_log.stat().st_size > 0:
        raise UserError(
            "already has progress; import-state is a one-time bridge into an empty runtime",
            file=state.progress_log,
            fix="nothing to do if it was imported before (see the receipts in "
            f"{ws.layout.imports_dir}); else move the workspace's state aside first",
        )


def _checked_records(ws: Workspace, log: Path) -> dict[str, ProgressRecord]:
    records = read_progress(log)
    known = {p.id for p in load_packet(ws.packet_dir).prompts}
    unknown = sorted(set(records) - known)
    if unknown:
        raise UserError(
            f"names prompt(s) the workspace's packet does not have: {', '.join(unknown)}",
            file=log,
            fix="import from the same packet (or remove those lines from a copy and pass it)",
        )
    if not any(r.status == "completed" for r in records.values()):
        raise UserError(
            "holds no completed prompt; there is nothing to import",
            file=log,
            fix="run the workspace from the start instead",
        )
    return records


def _write(
    ws: Workspace, log: Path, raw: bytes, records: dict[str, ProgressRecord], state: StateLayout
) -> ImportReceipt:
    completed = [r for r in records.values() if r.status == "completed"]
    digest = hashlib.sha256(raw).hexdigest()
    now = dt.datetime.now(dt.UTC)
    lines = "".join(
        make_progress_record(r.prompt_id, "completed", "no_session", at=r.at).render()
        for r in completed
    )
    receipt_path = ws.layout.import_receipt(now.strftime("%Y%m%dT%H%M%SZ"), digest)
    skipped = {r.prompt_id: r.status for r in records.values() if r.status != "completed"}
    write_json_atomic(
        receipt_path,
        {
            "schema": IMPORT_SCHEMA,
            "schema_version": 1,
            "workspace": ws.id,
            "packet": str(ws.packet_dir),
            "source": str(log),
            "source_sha256": digest,
            "destination": str(state.progress_log),
            "imported_at": now.isoformat(timespec="seconds"),
            "policy": "latest_completed_only",
            "imported": [
                {"id": r.prompt_id, "source_at": r.at, "source_suffix": r.suffix} for r in completed
            ],
            "skipped": skipped,
        },
    )
    write_bytes_atomic(state.progress_log, lines.encode("utf-8"))
    return ImportReceipt(
        ws.id, receipt_path, log, digest, tuple(r.prompt_id for r in completed), skipped
    )
