"""The control plane's client API (SPEC 5): read a run, follow it, send it requests.

Every function takes a packet directory (or its manifest) and works from any
process, live run or not. Reading (:func:`snapshot`, :func:`iter_events`,
:func:`iter_log`) never writes anything; sending (:func:`set_view`,
:func:`steer`) writes one request file and returns its name -- the runner
decides it at its next event boundary and records the outcome in the control
log. Amendments (:func:`amend`, :func:`relax`) are written directly to the
packet's ``amendments/`` audit file, so they work between runs too; the runner
reads them before every verification.

Reads stream: ``events.jsonl`` and ``log.jsonl`` are read in 1 MiB chunks from
a byte offset, so memory stays bounded by the chunk and the longest line
however long the file, and following costs only the new bytes. ``--follow``
waits for changes with ``watchfiles`` (inotify) and falls back to polling
when it is unavailable or fails.

The functions used by ``control status|events|log|view|steer`` import only
the standard library and the light ``control``/``state`` helpers.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..paths import state_root
from .requests import build_request, validate_steer, validate_view
from .store import ControlStore

CHUNK_BYTES = 1 << 20
NO_RUN = "this packet has no recorded run"


def control_store(packet: str | Path) -> ControlStore:
    """The transport of ``packet``'s state root (nothing is created).

    Raises:
        UserError: ``packet`` is not a packet directory.
    """
    return ControlStore(state_root(packet))


def current_run_id(root: Path) -> str | None:
    """The run id in ``<root>/runs/current.json``, or ``None`` (missing or unreadable)."""
    try:
        doc = json.loads((root / "runs" / "current.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    run_id = doc.get("run_id") if isinstance(doc, dict) else None
    return run_id if isinstance(run_id, str) else None


def unfinished_run_id(root: Path) -> str | None:
    """The current run's id if that run has not completed (a live, failed or
    interrupted run a resume continues), else ``None``."""
    try:
        doc = json.loads((root / "runs" / "current.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("status") == "completed":
        return None
    run_id = doc.get("run_id")
    return run_id if isinstance(run_id, str) else None


def run_is_live(root: Path) -> bool:
    """True when ``<root>/run.pid`` names a live process (identity incl. start time)."""
    from ..state.lock import identity_alive, read_pid_file

    try:
        ident = read_pid_file(root / "run.pid")
    except Exception:
        return False
    return ident is not None and identity_alive(ident)


def snapshot(packet: str | Path) -> dict[str, Any]:
    """The run snapshot of ``packet`` (read only).

    A snapshot that says ``running`` while no live process holds the run lock
    is reported with ``status: "unknown"`` (the runner died) and
    ``recorded_status: "running"``. ``pending_requests`` counts request files
    not yet decided.

    Raises:
        UserError: no run was ever recorded for this packet (exit 2).
        StateError: ``snapshot.json`` is corrupt.
    """
    store = control_store(packet)
    snap = store.read_snapshot()
    if snap is None:
        raise UserError(NO_RUN, file=store.state_root.parent, fix="start one with `run`")
    if snap.get("status") == "running" and not run_is_live(store.state_root):
        snap["recorded_status"] = "running"
        snap["status"] = "unknown"
    snap["pending_requests"] = len(store.pending_names())
    return snap


# -- streaming reads ------------------------------------------------------------------


def read_jsonl_stream(path: Path, offset: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Yield ``(record, offset_after_it)`` for each complete JSON-object line after ``offset``.

    Reads ``CHUNK_BYTES`` at a time; a final line without its newline is left
    for a later call; lines that are not JSON objects are skipped. A file now
    shorter than ``offset`` is read from 0 (it was replaced).
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 -- closed in finally; a generator
    except FileNotFoundError:
        return
    try:
        size = os.fstat(f.fileno()).st_size
        if offset < 0 or offset > size:
            offset = 0
        f.seek(offset)
        pos = offset
        carry = b""
        while True:
            chunk = f.read(CHUNK_BYTES)
            if not chunk:
                return
            data = carry + chunk
            start = 0
            while True:
                nl = data.find(b"\n", start)
                if nl < 0:
                    break
                line = data[start:nl]
                pos += nl + 1 - start
                start = nl + 1
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    yield value, pos
            carry = data[start:]
    finally:
        f.close()


def iter_events(
    packet: str | Path,
    *,
    from_current: bool = False,
    follow: bool = False,
    poll_s: float = 0.25,
    stop: Callable[[], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the current run's canonical events (``control/events.jsonl``).

    Args:
        from_current: skip what is already written (only new events).
        follow: keep yielding new events until the run is no longer running.
        poll_s: seconds between checks when no change is signalled.
        stop: polled while following; return early when it returns True.
    """
    store = control_store(packet)
    path = store.events_path
    offset = store.events_end_offset() if from_current else 0
    if not follow:
        for record, _ in read_jsonl_stream(path, offset):
            yield record
        return
    yield from _follow_records(store, path, offset, poll_s=poll_s, stop=stop)


def iter_log(
    packet: str | Path,
    *,
    follow: bool = False,
    poll_s: float = 0.25,
    stop: Callable[[], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield control log entries (every command and its outcome, refusals too)."""
    store = control_store(packet)
    if not follow:
        for record, _ in read_jsonl_stream(store.log_path, 0):
            yield record
        return
    yield from _follow_records(store, store.log_path, 0, poll_s=poll_s, stop=stop)


def _follow_records(
    store: ControlStore,
    path: Path,
    offset: int,
    *,
    poll_s: float,
    stop: Callable[[], bool] | None,
) -> Iterator[dict[str, Any]]:
    """Yield records of ``path`` from ``offset`` as they are appended, until the run ends."""
    watcher_state: dict[str, Any] = {}
    while True:
        got = 0
        for record, end in read_jsonl_stream(path, offset):
            offset = end
            got += 1
            yield record
        if got == 0:
            with contextlib.suppress(FileNotFoundError):
                if os.stat(path).st_size < offset:
                    offset = 0  # a new run's stream replaced this one
        if stop is not None and stop():
            return
        if got:
            continue
        if _run_over(store):
            for record, end in read_jsonl_stream(path, offset):
                offset = end
                yield record
            return
        _wait_for_change(path, poll_s, watcher_state)


def _run_over(store: ControlStore) -> bool:
    try:
        snap = store.read_snapshot()
    except Exception:
        return False
    if snap is None:
        return False
    return snap.get("status") != "running" or not run_is_live(store.state_root)


def _wait_for_change(path: Path, poll_s: float, state: dict[str, Any]) -> None:
    """Block until something changes in ``path``'s directory, or ``poll_s`` passes."""
    watcher = state.get("watcher")
    if watcher is None and not state.get("failed") and path.parent.is_dir():
        try:
            from watchfiles import watch

            watcher = iter(
                watch(
                    str(path.parent),
                    debounce=20,
                    step=20,
                    rust_timeout=max(1, int(poll_s * 1000)),
                    yield_on_timeout=True,
                    raise_interrupt=False,
                    recursive=False,
                )
            )
            state["watcher"] = watcher
        except Exception:
            state["failed"] = True
            watcher = None
    if watcher is not None:
        try:
            next(watcher)
            return
        except Exception:
            state["watcher"] = None
            state["failed"] = True
    time.sleep(poll_s)


# -- requests ----------------------------------------------------------------------------


def submit(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any],
    *,
    author: str | None = None,
    run_id: str | None = None,
) -> str:
    """Validate and write one request for the packet's current run; return its file name.

    Args:
        run_id: the run to target; default: the current run of ``runs/current.json``
            (``None`` when no run was recorded: the next run takes it).

    Raises:
        UserError: the command or params are invalid; nothing is written.
        InfrastructureError: the request cannot be written.
    """
    store = control_store(packet)
    target = run_id if run_id is not None else current_run_id(store.state_root)
    return _write(store, command, params, author=author, run_id=target)


def _write(
    store: ControlStore,
    command: str,
    params: Mapping[str, Any],
    *,
    author: str | None,
    run_id: str | None,
) -> str:
    """Build and write one request for ``run_id`` (``None``: whichever run consumes it)."""
    request = build_request(command, params, run_id=run_id, author=author)
    try:
        return store.write_request(request)
    except (OSError, ValueError) as exc:
        from ..errors import InfrastructureError

        raise InfrastructureError(
            f"{store.requests_dir}: the request could not be written ({exc})"
        ) from exc


def set_view(packet: str | Path, settings: Mapping[str, Any], *, author: str | None = None) -> str:
    """Queue a view change (``log_mode``, ``tool_output``, ``thinking``, ``diff``).

    See :func:`queue_view`; returns the request's file name.

    Raises:
        UserError: no setting, an unknown setting or an invalid value (nothing written).
    """
    return queue_view(packet, settings, author=author)[0]


def queue_view(
    packet: str | Path, settings: Mapping[str, Any], *, author: str | None = None
) -> tuple[str, str | None]:
    """Queue a view change; return ``(request name, run id it targets)``.

    With a live run (a process holds ``run.pid``) the request targets that
    run, which applies it at its next event boundary. With none, it targets
    no run (``None``): it waits in ``control/requests/`` and the next run of
    the packet -- a resume or a new one -- applies it as its first prompt
    starts. (Targeting an ended run would only get it refused by the next.)

    Raises:
        UserError: no setting, an unknown setting or an invalid value (nothing written).
    """
    params = validate_view(settings)
    store = control_store(packet)
    root = store.state_root
    target = unfinished_run_id(root) if run_is_live(root) else None
    return _write(store, "set_view", params, author=author, run_id=target), target


def steer(packet: str | Path, text: str, *, author: str | None = None) -> str:
    """Queue a steer for the running prompt of the current run.

    A steer targets a run that is live, or unfinished (failed or interrupted:
    the resume delivers it); a packet that never ran or whose last run
    completed has no session a steer could reach.

    Raises:
        UserError: the text is blank (``a steer needs something to say``), or
            there is no live or unfinished run.
    """
    params = validate_steer({"text": text})
    root = control_store(packet).state_root
    target = unfinished_run_id(root)
    if target is None:
        raise UserError(
            "there is no live or unfinished run to steer",
            file=root,
            fix="start the run first (`prompt-runner run`), then steer it while it works",
        )
    return submit(packet, "steer", params, author=author, run_id=target)


def outcome(packet: str | Path, name: str) -> dict[str, Any] | None:
    """The outcome receipt of request ``name`` once the runner decided it, else ``None``."""
    return control_store(packet).read_outcome(name)


# -- contract and amendments (loads the packet) ---------------------------------------------


def contract(packet: str | Path, prompt_id: str) -> dict[str, Any]:
    """A prompt's contract as the runner enforces it, with its amendment history.

    Returns:
        ``{"prompt_id", "file", "base", "contract", "amended", "amendments",
        "amendments_file", "lines"}`` -- ``base`` is the prompt file's contract,
        ``contract`` the effective one, ``lines`` its human view.

    Raises:
        UserError: bad packet or unknown prompt id.
    """
    from .amendments import (
        amendments_path,
        apply_record,
        contract_lines,
        effective_raw,
        in_force,
        pending,
        read_amendments,
    )

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
) -> dict[str, Any]:
    """Add requirements to a prompt's contract (see :func:`_change`)."""
    params: dict[str, Any] = {"prompt_id": prompt_id, "add": dict(add), "reason": reason}
    if persist:
        params["persist"] = True
    return _change(packet, "amend", params, author=author)


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
) -> dict[str, Any]:
    """Remove requirements (needs ``confirm``; see :func:`_change`)."""
    params: dict[str, Any] = {"prompt_id": prompt_id, "reason": reason, "confirm": confirm}
    if drop:
        params["drop"] = list(drop)
    if remove:
        params["remove"] = dict(remove)
    if persist:
        params["persist"] = True
    return _change(packet, "relax", params, author=author)


def _change(
    packet: str | Path, command: str, params: dict[str, Any], *, author: str | None
) -> dict[str, Any]:
    """Validate, record and (with ``persist``) write back one amendment.

    Returns:
        ``{"record", "diff": [lines], "file_diff": unified diff or None,
        "amendments_file"}``.

    Raises:
        UserError: no reason, relax without confirm, nothing named, an
            unknown clause, an invalid entry; nothing is written then.
    """
    from ..runner.engine import packet_fingerprint
    from ..verifier import contract_keys
    from .amendments import (
        amendment_lock,
        append_record,
        apply_record,
        diff_lines,
        make_record,
        persist_to_prompt_file,
        phase_of,
    )
    from .requests import validate_amendment

    if not params.get("confirm"):
        params.pop("confirm", None)
    clean = validate_amendment(command, params, known_clauses=contract_keys())
    _prompt(packet, clean["prompt_id"])  # a bad packet or prompt id: refused before locking
    with amendment_lock(state_root(packet)):
        # Read, decide and write under the lock: the prompt file and the
        # records are read afresh, so a concurrent amendment is never lost.
        loaded, prompt, root = _load(packet, clean["prompt_id"])
        record_doc: dict[str, Any] = {}
        if (root / "prompts").is_dir():
            from ..state.store import FileStore

            record_doc = FileStore(root).load_prompt(prompt.id)
        record = make_record(
            prompt,
            command,
            clean,
            state_root=root,
            author=author,
            phase=phase_of(record_doc),
            run_id=unfinished_run_id(root),
        )
        file_diff = None
        if record["persist"]:
            before = packet_fingerprint(loaded)
            file_diff = persist_to_prompt_file(
                prompt.file, apply_record(prompt.contract.to_raw(), record)
            )
            if record.get("run_id"):
                _carry_fingerprint(root, record["run_id"], before, packet)
        path = append_record(root, record)
        _log_cli_amendment(root, command, record, author)
    return {
        "record": record,
        "diff": diff_lines(record["before"], record["after"]),
        "file_diff": file_diff,
        "amendments_file": str(path),
    }


def _carry_fingerprint(root: Path, run_id: str, before: str, packet: str | Path) -> None:
    """A persisted amendment made during unfinished run ``run_id`` changed the
    packet on purpose: move that run's recorded fingerprint along (only if it
    still matched the packet before the edit), so the run can be resumed."""
    from ..state.store import FileStore

    store = FileStore(root)
    current = store.read_current_run()
    if current is None or current.get("run_id") != run_id or current.get("fingerprint") != before:
        return
    from ..packet.loader import load_packet
    from ..runner.engine import packet_fingerprint

    current["fingerprint"] = packet_fingerprint(load_packet(packet))  # the edited file
    store.write_current_run(current)


def _log_cli_amendment(
    root: Path, command: str, record: Mapping[str, Any], author: str | None
) -> None:
    """Every command is logged: an amendment written from the CLI too (the plane
    logs the ones that arrive as requests)."""
    from .store import ControlStore

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
        "at": record.get("at"),
    }
    store = ControlStore(root)
    store.init()
    store.append_log(entry)


def _prompt(packet: str | Path, prompt_id: str) -> tuple[Any, Path]:
    _, prompt, root = _load(packet, prompt_id)
    return prompt, root


def _load(packet: str | Path, prompt_id: str) -> tuple[Any, Any, Path]:
    """``(packet, prompt, state root)``; raises the loader's UserError for bad input."""
    from ..packet.loader import load_packet
    from ..runner.selection import normalize_id

    loaded = load_packet(packet)
    prompt = loaded.prompt(normalize_id(prompt_id, loaded.ids()))
    return loaded, prompt, loaded.root / ".prompt_runner"
