"""A prompt's contract from the client: read it with its history, amend it, relax it (SPEC 5).

Amendments (:func:`amend`, :func:`relax`) are written directly to the packet's
``amendments/`` audit file, so they work between runs too; the runner reads
them before every verification. These load the packet, so the modules they
need are heavy: ``control/client.py`` imports this module only when one of
them is first used, so the control CLI's other commands start fast.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..packet.cached_source import cached_source
from ..packet.loader import Packet, Prompt, load_packet, packet_of
from ..packet.source import read_packet_source, with_prompt_text
from ..planning.selection import normalize_id
from ..runner.identity import packet_fingerprint
from ..state.layout import StateLayout
from ..state.store import FileStore
from ..verifier import contract_keys
from .amendments import (
    amendments_path,
    append_record,
    apply_record,
    effective_raw,
    in_force,
    make_record,
    pending,
    phase_of,
    read_amendments,
    refused_amendment,
)
from .applies_to import target
from .audit import amendment_lock
from .requests import validate_amendment
from .runs import await_recorded, checked, starting_error, unfinished_run_id
from .sending import StateDir, append_log_line, refusals_logged


def contract(packet: str | Path, prompt_id: str) -> dict[str, Any]:
    """A prompt's contract as the runner enforces it, with its amendment history.

    Returns:
        ``{"prompt_id", "file", "base", "contract", "amended", "amendments",
        "amendments_file", "lines"}`` -- ``base`` is the prompt file's contract,
        ``contract`` the effective one, ``lines`` its human view.

    Raises:
        UserError: bad packet or unknown prompt id.
    """
    prompt, root = _prompt(packet, prompt_id)
    run_id = unfinished_run_id(root)
    everything = read_amendments(root, prompt.id)
    records = in_force(everything, run_id) + pending(everything)
    effective = effective_raw(root, prompt, run_id)
    for record in pending(everything):
        effective = apply_record(effective, record)  # what the next run will enforce
    return {
        "prompt_id": prompt.id,
        "file": str(prompt.file),
        "base": prompt.contract.to_raw(),
        "contract": effective,
        "amended": bool(records),
        "amendments": records,
        "amendments_file": str(amendments_path(root, prompt.id)) if records else None,
        "lines": contract_lines(effective),
    }


def amend(
    packet: str | Path,
    prompt_id: str,
    *,
    add: Mapping[str, Any],
    reason: str | None,
    author: str | None = None,
    persist: bool = False,
    state_dir: StateDir = None,
) -> dict[str, Any]:
    """Add requirements to a prompt's contract (see :func:`_change`)."""
    params: dict[str, Any] = {"prompt_id": prompt_id, "add": dict(add), "reason": reason}
    if persist:
        params["persist"] = True
    with refusals_logged(packet, "amend", params, author=author, state_dir=state_dir):
        return _change(packet, "amend", dict(params), author=author, state_dir=state_dir)


def relax(
    packet: str | Path,
    prompt_id: str,
    *,
    drop: Sequence[str] = (),
    remove: Mapping[str, Any] | None = None,
    reason: str | None,
    confirm: bool = False,
    author: str | None = None,
    persist: bool = False,
    state_dir: StateDir = None,
) -> dict[str, Any]:
    """Remove requirements (needs ``confirm``; see :func:`_change`)."""
    params: dict[str, Any] = {"prompt_id": prompt_id, "reason": reason, "confirm": confirm}
    if drop:
        params["drop"] = list(drop)
    if remove:
        params["remove"] = dict(remove)
    if persist:
        params["persist"] = True
    with refusals_logged(packet, "relax", params, author=author, state_dir=state_dir):
        return _change(packet, "relax", dict(params), author=author, state_dir=state_dir)


def _change(
    packet: str | Path,
    command: str,
    params: dict[str, Any],
    *,
    author: str | None,
    state_dir: StateDir = None,
) -> dict[str, Any]:
    """Validate, record and (with ``persist``) write back one amendment, in
    ``state_dir`` (default: the packet's state root, see :meth:`StateLayout.of_packet`).

    Returns:
        ``{"record", "diff": [lines], "file_diff": unified diff or None,
        "amendments_file"}``.

    Raises:
        UserError: no reason, relax without confirm, nothing named, an
            unknown clause, an invalid entry, an amended contract (or, with
            ``persist``, prompt file) the packet loader would refuse, or a
            run that holds ``run.pid`` still had not recorded itself once
            ``STARTING_WAIT_S`` passed (``control/runs.py``); nothing is
            written then.
    """
    if not params.get("confirm"):
        params.pop("confirm", None)
    clean = validate_amendment(command, params, known_clauses=contract_keys())
    _, root = _prompt(packet, clean["prompt_id"], state_dir)  # bad input: refused before locking
    # A run holding run.pid that has not recorded itself yet has already claimed
    # the amendments waiting for a new run: wait until its id is in current.json
    starting = await_recorded(root)
    if starting is not None:
        raise starting_error(root, starting, f"control {command}")
    with amendment_lock(root):
        # Read, decide and write under the lock: the prompt file and the
        # records are read afresh, so a concurrent amendment is never lost,
        # and a verification in progress is either judged with this record or
        # has settled before it (control/verifying.py).
        loaded, prompt, root = _load(packet, clean["prompt_id"], state_dir)
        record_doc: dict[str, Any] = {}
        if StateLayout(root).prompts_dir.is_dir():
            record_doc = FileStore(root).load_prompt(prompt.id)
        run_id = unfinished_run_id(root)
        applies_to, phase = target(
            root, prompt.id, run_id=run_id, record=record_doc, persist=bool(clean.get("persist"))
        )
        record = make_record(
            prompt,
            command,
            clean,
            state_root=root,
            author=author,
            phase=phase or phase_of(record_doc),
            run_id=run_id,
            applies_to=applies_to,
            repos=loaded.repos,
        )
        if record["persist"]:
            file_diff, path = _persist(loaded, prompt, record, root, packet)
        else:
            file_diff, path = None, append_record(root, record)
        _log_cli_amendment(root, command, record, author)
    return {
        "record": record,
        "diff": diff_lines(record["before"], record["after"]),
        "file_diff": file_diff,
        "amendments_file": str(path),
    }


def _persist(
    loaded: Packet, prompt: Prompt, record: dict[str, Any], root: Path, packet: str | Path
) -> tuple[str, Path]:
    """Write a persisted amendment into its prompt file, then record it.

    The new text is first loaded by the packet loader (:func:`packet_of` on
    the packet's files with this one replaced), so a file the packet would not
    load with is never written; if anything fails once it is written (the
    run's fingerprint, the record), the file gets its old bytes back.

    Returns:
        ``(unified diff of the prompt file, amendments file)``.

    Raises:
        UserError: the packet would not load with the new text (nothing written).
        StorageError: the file or the record cannot be written (the file as it was).
    """
    from .persist import amended_text, restore_prompt_file, write_prompt_file  # lazy: ruamel.yaml

    old, new_text = amended_text(prompt.file, apply_record(prompt.contract.to_raw(), record))
    source = cached_source(loaded.root) or read_packet_source(loaded.root)
    try:
        packet_of(with_prompt_text(source, prompt.file, new_text))
    except UserError as exc:
        raise refused_amendment(
            exc, "the packet would not load with it, so nothing is written"
        ) from None
    before = packet_fingerprint(loaded)
    carried = None
    try:
        file_diff = write_prompt_file(prompt.file, old, new_text, state_root=root)
        if record.get("run_id"):
            carried = _carry_fingerprint(root, record["run_id"], before, packet)
        path = append_record(root, record)
    except BaseException:
        restore_prompt_file(prompt.file, old)
        if carried is not None:
            FileStore(root).write_current_run(carried)
        raise
    return file_diff, path


def _carry_fingerprint(
    root: Path, run_id: str, before: str, packet: str | Path
) -> dict[str, Any] | None:
    """A persisted amendment made during unfinished run ``run_id`` changed the
    packet on purpose: move that run's recorded fingerprint along (only if it
    still matched the packet before the edit), so the run can be resumed.

    Returns:
        The run's ``current`` record as it was before (to put back if the
        persist is undone), or ``None`` when nothing was changed.
    """
    store = FileStore(root)
    current = store.read_current_run()
    if current is None or current.get("run_id") != run_id or current.get("fingerprint") != before:
        return None
    was = dict(current)
    current["fingerprint"] = packet_fingerprint(load_packet(packet))  # the edited file
    store.write_current_run(current)
    return was


def _log_cli_amendment(
    root: Path, command: str, record: Mapping[str, Any], author: str | None
) -> None:
    """Every command is logged: an amendment written from the CLI too (the plane
    logs the ones that arrive as requests)."""
    entry = {
        "command": command,
        "outcome": "applied",
        "via": "cli",
        "author": author,
        "prompt_id": record.get("prompt"),
        "run_id": record.get("run_id"),
        "params": {
            k: record.get(k) for k in ("operation", "add", "drop", "remove", "reason", "persist")
        },
        "phase": record.get("phase"),
        "applies_to": record.get("applies_to"),
        "at": record.get("at"),
    }
    append_log_line(root, entry)


def _prompt(packet: str | Path, prompt_id: str, state_dir: StateDir = None) -> tuple[Prompt, Path]:
    _, prompt, root = _load(packet, prompt_id, state_dir)
    return prompt, root


def _load(
    packet: str | Path, prompt_id: str, state_dir: StateDir = None
) -> tuple[Packet, Prompt, Path]:
    """``(packet, prompt, state root)``; raises the loader's UserError for bad input,
    and StorageError (exit 3) for a state root that is a file (``runs.checked``)."""
    loaded = load_packet(packet)
    prompt = loaded.prompt(normalize_id(prompt_id, loaded.ids()))
    return loaded, prompt, checked(StateLayout.of_packet(loaded.root, state_dir).root)


def contract_lines(raw: Mapping[str, Sequence[Any]]) -> list[str]:
    """One ``clause: entry`` line per contract entry (the human contract view)."""
    return [f"{clause}: {_entry_text(e)}" for clause, entries in raw.items() for e in entries]


def diff_lines(
    before: Mapping[str, Sequence[Any]], after: Mapping[str, Sequence[Any]]
) -> list[str]:
    """The contract change as ``  kept`` / ``+ added`` / ``- removed`` lines."""
    old = contract_lines(before)
    new = contract_lines(after)
    out = [f"  {line}" if line in new else f"- {line}" for line in old]
    out.extend(f"+ {line}" for line in new if line not in old)
    return out


def _entry_text(entry: Any) -> str:
    if isinstance(entry, Mapping):
        if set(entry) == {"path"}:
            return str(entry["path"])
        if set(entry) <= {"path", "text"}:
            return f"{entry.get('path')} contains {entry.get('text')!r}"
        if "exec" in entry:
            return " ".join([str(entry["exec"]), *map(str, entry.get("args") or [])])
    return json.dumps(entry, ensure_ascii=False, sort_keys=True)
