"""Streaming reads of a run's control files: ``events.jsonl`` and ``log.jsonl`` (SPEC 5).

Files are read in 1 MiB chunks from a byte offset, so memory stays bounded by
the chunk and the longest line however long the file, and following costs
only the new bytes. ``--follow`` waits for changes with ``watchfiles``
(inotify) and falls back to polling when it is unavailable or fails; it ends
when the run does, with a record naming the run and how it ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..state.jsonl import CHUNK_BYTES as CHUNK_BYTES  # re-exported by client
from ..state.jsonl import iter_from
from ..state.records import RunStatus
from .runs import control_store, current_run, current_run_id, run_is_live
from .store import ControlStore

RUN_FINISHED = "run_finished"


def read_jsonl_stream(path: Path, offset: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Yield ``(record, offset_after_it)`` for each complete JSON-object line after ``offset``.

    :func:`prompt_runner.state.jsonl.iter_from`: ``CHUNK_BYTES`` at a time; a
    final line without its newline is left for a later call; lines that are
    not JSON objects are skipped; a file now shorter than ``offset`` is read
    from 0 (it was replaced).
    """
    return iter_from(path, offset)


_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_NUMBER = b"0" * 19  # 19 digits in a row: maybe an integer past 64 bits


def event_json_blocks(packet: str | Path, *, from_current: bool = False) -> Iterator[str]:
    """What ``control events --json`` prints, as blocks of whole lines.

    Each event of the stream (the records :func:`iter_events` yields, without
    following) is one line, byte for byte ``json.dumps(record,
    ensure_ascii=False, default=str)`` and a newline (the same encoder,
    built once). Read a 1 MiB chunk at a time, so memory stays bounded; each
    line is decoded by ``orjson``, except where it differs from the standard
    library, which decodes those as before: a line it refuses (``NaN``, lone
    surrogates) and a line with 19 digits in a row (``orjson`` reads an
    integer past 64 bits as a float).

    Raises:
        UserError: not a packet (at the first ``next()``).
    """
    import orjson  # lazy: only this command's fast path

    store = control_store(packet)
    path = store.events_path
    offset = store.events_end_offset() if from_current else 0
    try:
        f = open(path, "rb")  # noqa: SIM115 -- closed in finally; a generator
    except FileNotFoundError:
        return
    loads, refused = orjson.loads, orjson.JSONDecodeError
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode  # = json.dumps(...)
    try:
        if offset < 0 or offset > os.fstat(f.fileno()).st_size:
            offset = 0
        f.seek(offset)
        carry = b""
        while chunk := f.read(CHUNK_BYTES):
            data = carry + chunk
            end = data.rfind(b"\n")
            if end < 0:
                carry = data
                continue
            carry = data[end + 1 :]
            long_numbers = _LONG_NUMBER in data[:end].translate(_DIGITS)
            out: list[str] = []
            for line in data[:end].split(b"\n"):
                try:
                    if long_numbers and _LONG_NUMBER in line.translate(_DIGITS):
                        raise refused("a long number", "", 0)
                    value = loads(line)
                except refused:
                    try:
                        value = json.loads(line)
                    except ValueError:
                        continue
                if type(value) is dict:
                    out.append(encode(value))
            if out:
                out.append("")
                yield "\n".join(out)
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


def run_end_record(store: ControlStore) -> dict[str, Any]:
    """How the current run ended, from its snapshot: ``{"kind": "run_finished",
    "run_id", "status", "recorded"}`` (+ ``reason`` when the runner recorded no end)."""
    try:
        snap = store.read_snapshot() or {}
    except Exception:
        snap = {}
    run_id = snap.get("run_id") or current_run_id(store.state_root)
    status = snap.get("status")
    current = current_run(store.state_root)
    if current is not None and current.get("run_id") == run_id:
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


EARLY_POLLS = 50
EARLY_POLL_S = 0.01
"""A follower's first :data:`EARLY_POLLS` waits are short sleeps (0.5 s in all):
the first new record prints without waiting for ``watchfiles`` to import
(~35 ms) and report a change; the watch takes over after them."""


def _wait_for_change(path: Path, poll_s: float, state: dict[str, Any]) -> None:
    """Block until something changes in ``path``'s directory, or ``poll_s`` passes."""
    early = state.get("early", 0)
    if early < EARLY_POLLS and poll_s > EARLY_POLL_S:
        state["early"] = early + 1
        time.sleep(EARLY_POLL_S)
        return
    watcher = state.get("watcher")
    if watcher is None and not state.get("failed") and path.parent.is_dir():
        try:
            from watchfiles import watch  # lazy: only --follow waits, and it is heavy

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
