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
from ..state.records import RunStatus
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
    if not isinstance(doc, dict) or doc.get("status") == RunStatus.COMPLETED:
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
    if snap.get("status") == RunStatus.RUNNING and not run_is_live(store.state_root):
        snap["recorded_status"] = RunStatus.RUNNING
        snap["status"] = RunStatus.UNKNOWN
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

    Each event carries ``prompt_id`` and ``run_id``. Each runner invocation
    ends its part of the stream with ``{"kind": "run_finished", "run_id",
    "status", "at_ms"}``.

    Args:
        from_current: skip what is already written (only new events).
        follow: keep yielding new events until the run is no longer running;
            the last record yielded then names the run and how it ended: its
            ``run_finished``, or -- when the runner died without writing one
            -- a ``run_finished`` made here with ``status: "unknown"``,
            ``recorded: false`` and a ``reason``.
        poll_s: seconds between checks when no change is signalled.
        stop: polled while following; return early (no end record) when it
            returns True.
    """
    store = control_store(packet)
    path = store.events_path
    offset = store.events_end_offset() if from_current else 0
    if not follow:
        for record, _ in read_jsonl_stream(path, offset):
            yield record
        return
    yield from _follow_records(store, path, offset, poll_s=poll_s, stop=stop, events=True)


def iter_log(
    packet: str | Path,
    *,
    follow: bool = False,
    poll_s: float = 0.25,
    stop: Callable[[], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield control log entries (every command and its outcome, refusals too).

    Following ends when the run does, with a last record naming the run and
    how it ended (``{"kind": "run_finished", "run_id", "status", ...}``, see
    :func:`iter_events`); it is no log entry (it has no ``command``).
    """
    store = control_store(packet)
    if not follow:
        for record, _ in read_jsonl_stream(store.log_path, 0):
            yield record
        return
    yield from _follow_records(store, store.log_path, 0, poll_s=poll_s, stop=stop, events=False)


def _follow_records(
    store: ControlStore,
    path: Path,
    offset: int,
    *,
    poll_s: float,
    stop: Callable[[], bool] | None,
    events: bool,
) -> Iterator[dict[str, Any]]:
    """Yield records of ``path`` from ``offset`` as they are appended, until the run
    ends; then the run's end record (``events``: the stream's own when it has one)."""
    watcher_state: dict[str, Any] = {}
    last: dict[str, Any] | None = None
    while True:
        got = 0
        for record, end in read_jsonl_stream(path, offset):
            offset = end
            got += 1
            last = record
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
                last = record
                yield record
            if not (events and last is not None and last.get("kind") == RUN_FINISHED):
                yield run_end_record(store)
            return
        _wait_for_change(path, poll_s, watcher_state)


RUN_FINISHED = "run_finished"


def run_end_record(store: ControlStore) -> dict[str, Any]:
    """How the current run ended, from its snapshot: ``{"kind": "run_finished",
    "run_id", "status", "recorded"}`` (+ ``reason`` when the runner recorded no end)."""
    try:
        snap = store.read_snapshot() or {}
    except Exception:
        snap = {}
    run_id = snap.get("run_id") or current_run_id(store.state_root)
    status = snap.get("status")
    try:
        current = json.loads((store.state_root / "runs" / "current.json").read_text("utf-8"))
    except (OSError, ValueError):
        current = None
    if isinstance(current, dict) and current.get("run_id") == run_id:
        status = current.get("status", status)  # the run's own word (e.g. interrupted)
    record: dict[str, Any] = {
        "kind": RUN_FINISHED,
        "run_id": run_id,
        "status": status if status not in (None, RunStatus.RUNNING) else RunStatus.UNKNOWN,
        "prompt_id": None,
        "recorded": status not in (None, RunStatus.RUNNING),
    }
    if not record["recorded"]:
        record["reason"] = "the runner is no longer running and recorded no end (was it killed?)"
    return record


def _run_over(store: ControlStore) -> bool:
    try:
        snap = store.read_snapshot()
    except Exception:
        return False
    if snap is None:
        return False
    return snap.get("status") != RunStatus.RUNNING or not run_is_live(store.state_root)


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


@contextlib.contextmanager
def refusals_logged(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any] | None = None,
    *,
    author: str | None = None,
) -> Iterator[None]:
    """Log a control command the block refuses with a :class:`UserError`, then re-raise it.

    The control log keeps every command, refusals too (SPEC 5): a command
    refused before any request was written (a bad ``set_view``, a blank steer,
    an amendment without ``--reason``...) is appended as ``{"command",
    "outcome": "rejected", "reason", "via": "cli", "author", "params",
    "run_id", "at"}``. Nothing else is written (no request, no receipt). A
    packet path that is no packet has no log; a log that cannot be written
    is skipped (the refusal itself still reaches the caller).
    """
    try:
        yield
    except UserError as exc:
        log_refusal(packet, command, params, str(exc), author=author)
        raise


def log_refusal(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any] | None,
    reason: str,
    *,
    author: str | None = None,
) -> None:
    """Append a refused command to the packet's control log (see :func:`refusals_logged`);
    never raises."""
    from ..state._clock import iso_now

    try:
        root = state_root(packet)
    except UserError:
        return
    try:
        shown = json.loads(json.dumps(dict(params or {}), default=str))
    except (TypeError, ValueError):
        shown = {}
    now = iso_now(millis=True)
    entry = {
        "command": command,
        "outcome": "rejected",
        "reason": reason,
        "via": "cli",
        "author": author,
        "params": shown,
        "run_id": current_run_id(root),
        "requested_at": now,
        "at": now,
    }
    with contextlib.suppress(OSError, ValueError):
        append_log_line(root, entry)


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
    with refusals_logged(packet, command, params, author=author):
        store = control_store(packet)
        target = run_id if run_id is not None else current_run_id(store.state_root)
        request = build_request(command, params, run_id=target, author=author)
    return _write_request(store, request)


def _write(
    store: ControlStore,
    command: str,
    params: Mapping[str, Any],
    *,
    author: str | None,
    run_id: str | None,
) -> str:
    """Build and write one request for ``run_id`` (``None``: whichever run consumes it)."""
    return _write_request(store, build_request(command, params, run_id=run_id, author=author))


def _write_request(store: ControlStore, request: Mapping[str, Any]) -> str:
    """Write a built request; an I/O failure is an infrastructure fault."""
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
    with refusals_logged(packet, "set_view", settings, author=author):
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
    with refusals_logged(packet, "steer", {"text": text}, author=author):
        params = validate_steer({"text": text})
        store = control_store(packet)
        target = unfinished_run_id(store.state_root)
        if target is None:
            raise UserError(
                "there is no live or unfinished run to steer",
                file=store.state_root,
                fix="start the run first (`prompt-runner run`), then steer it while it works",
            )
    return _write(store, "steer", params, author=author, run_id=target)


def steer_stage(packet: str | Path) -> dict[str, Any]:
    """Where a steer sent now would land (read only; for the sender's message).

    Returns:
        ``{"live", "prompt_id", "attempt", "stage"}``: ``stage`` is
        ``verifying`` when the live run is judging a prompt's last session (a
        steer then goes to that prompt's next session, or is refused when none
        follows), ``running`` when the live run shows a prompt, else ``None``.
    """
    from .verifying import JUDGING, locked_marker

    root = control_store(packet).state_root
    live = run_is_live(root)
    doc: dict[str, Any] = {"live": live, "prompt_id": None, "attempt": None, "stage": None}
    if not live:
        return doc
    marker = locked_marker(root)
    if (
        marker is not None
        and marker.get("stage") in JUDGING
        and marker.get("run_id") == unfinished_run_id(root)
    ):
        doc.update(prompt_id=marker.get("prompt"), attempt=marker.get("attempt"))
        doc["stage"] = "verifying"
        return doc
    try:
        snap = control_store(packet).read_snapshot() or {}
    except Exception:
        snap = {}
    if snap.get("status") == RunStatus.RUNNING and snap.get("prompt_id"):
        doc.update(prompt_id=snap["prompt_id"], attempt=snap.get("attempt"), stage="running")
    return doc


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
    with refusals_logged(packet, "amend", params, author=author):
        return _change(packet, "amend", dict(params), author=author)


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
    with refusals_logged(packet, "relax", params, author=author):
        return _change(packet, "relax", dict(params), author=author)


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
    from .verifying import target

    if not params.get("confirm"):
        params.pop("confirm", None)
    clean = validate_amendment(command, params, known_clauses=contract_keys())
    _prompt(packet, clean["prompt_id"])  # a bad packet or prompt id: refused before locking
    with amendment_lock(state_root(packet)):
        # Read, decide and write under the lock: the prompt file and the
        # records are read afresh, so a concurrent amendment is never lost,
        # and a verification in progress is either judged with this record or
        # has settled before it (control/verifying.py).
        loaded, prompt, root = _load(packet, clean["prompt_id"])
        record_doc: dict[str, Any] = {}
        if (root / "prompts").is_dir():
            from ..state.store import FileStore

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


def append_log_line(root: Path, entry: Mapping[str, Any]) -> None:
    """Append one entry to ``<root>/control/log.jsonl`` from outside the runner.

    The runner owns the log's torn-tail repair; another process only appends
    (one ``O_APPEND`` write, after a newline when the last line lacks one, then
    fsync), so it never cuts a line the runner is writing.

    Raises:
        OSError: the line cannot be written.
    """
    from .amendments import append_record_line

    append_record_line(ControlStore(root).log_path, {"schema_version": 1, **entry})


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
