"""Streaming reads of a run's control files: ``events.jsonl`` and ``log.jsonl`` (SPEC 5).

Files are read in 1 MiB chunks from a byte offset, so memory stays bounded by
the chunk and the longest line however long the file, and following costs
only the new bytes. ``--follow`` waits for changes with ``watchfiles``
(inotify) and falls back to polling when it is unavailable or fails; it ends
when the run does, with a record naming the run and how it ended.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..state.jsonl import CHUNK_BYTES as CHUNK_BYTES  # re-exported by client
from ..state.jsonl import dumps_lenient, iter_from
from ..state.records import RunStatus
from .runs import control_store, current_run, current_run_id, run_is_live

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control events`)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any

    from .store import ControlStore

RUN_FINISHED = "run_finished"

Block = bytes | memoryview
"""A block of whole lines as :func:`event_json_blocks` yields it (any bytes-like
object: ``sys.stdout.buffer.write`` and ``b"".join`` take either)."""


def read_jsonl_stream(path: Path, offset: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Yield ``(record, offset_after_it)`` for each complete JSON-object line after ``offset``.

    :func:`prompt_runner.state.jsonl.iter_from`: ``CHUNK_BYTES`` at a time; a
    final line without its newline is left for a later call; lines that are
    not JSON objects are skipped; a file now shorter than ``offset`` is read
    from 0 (it was replaced).
    """
    return iter_from(path, offset)


def event_json_blocks(
    packet: str | Path,
    *,
    from_current: bool = False,
    follow: bool = False,
    poll_s: float = 0.25,
    stop: Callable[[], bool] | None = None,
) -> Iterator[Block]:
    """What ``control events --json`` prints: the stream's lines, a block of whole lines
    at a time (UTF-8, each line ending in a newline; bytes or a memoryview of them).

    One line per event :func:`iter_events` yields (same arguments), printed as
    stored in ``events.jsonl`` once it has been decoded to a JSON object:
    every line the runner writes is the compact JSON encoding of its record,
    and comes out byte for byte; a line another tool wrote comes out as it
    stands too (its spacing, a key it repeats: Python's ``json``, like most
    readers, keeps the last). Only a line in UTF-16 or UTF-32 (the standard
    library reads those; the runner never writes them) is printed as the
    runner's standard-library encoder writes its record, in UTF-8. Blank
    lines, lines that are not JSON objects and a final line without its
    newline are not printed, as :func:`iter_events` skips them. Following,
    the run's end record when the runner wrote none (:func:`run_end_record`)
    is printed as that encoder writes it.

    Read a 1 MiB chunk at a time, so memory stays bounded by the chunk and
    the longest line. A line is decoded by ``orjson`` in place, and by the
    standard library where orjson refuses it (``NaN``, lone surrogates),
    which is what :func:`iter_events` reads it with; a small block (a
    follower's new events) by the standard library alone while orjson is not
    loaded (:data:`SMALL_BLOCK`). Either way the same lines come out.

    Raises:
        UserError: not a packet; StateError: ``runs/current.json`` is damaged;
            StorageError: the state root is a file (each at the first ``next()``).
    """
    store = control_store(packet)
    current_run(store.state_root)  # damaged: its error (exit 2), not the stale stream
    path = store.events_path
    offset = store.events_end_offset() if from_current else 0
    if not follow:
        for block, _end, _last in _json_blocks(path, offset):
            yield block
        return
    for item in _follow(store, path, offset, _json_blocks, poll_s=poll_s, stop=stop, events=True):
        yield _json_line(item) if isinstance(item, dict) else item


def _json_line(record: dict[str, Any]) -> bytes:
    """``record`` as the runner's standard-library encoder writes it, and a newline."""
    return dumps_lenient(record).encode("utf-8") + b"\n"


SMALL_BLOCK = 64 << 10
"""A block shorter than this (what a follower reads as events arrive) is read with
the standard library while orjson is not loaded yet: importing it (it loads
``dataclasses``, ``uuid``, ``datetime``...) costs tens of milliseconds, most of
``--from current``'s start."""


def _json_blocks(path: Path, offset: int) -> Iterator[tuple[Block, int, dict[str, Any] | None]]:
    """``(block, offset after it, its last record)`` for the complete lines after
    ``offset`` (see :func:`event_json_blocks`); a file now shorter than ``offset``
    is read from 0 (it was replaced)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return
    try:
        if offset < 0 or offset > os.fstat(fd).st_size:
            offset = 0
        size = CHUNK_BYTES
        while True:
            # Each read starts at the first line not yet printed, so no partial line is
            # carried over and joined to the next chunk, and the block printed is a view
            # of the bytes read: each byte is copied once, by the read.
            data = os.pread(fd, size, offset)
            end = data.rfind(b"\n")
            if end < 0:
                if len(data) < size:
                    return  # nothing, or a final line without its newline
                size *= 2  # a line longer than a chunk: read it whole
                continue
            offset += end + 1
            block: Block
            if _small(end):
                block, last = _small_block(data, end)
            else:
                block, last = _fast_block(data, end)
            yield block, offset, last
            if len(data) < size:
                return  # the end of the file as it was read
            size = CHUNK_BYTES
    finally:
        os.close(fd)


def _small(end: int) -> bool:
    """Whether a block of ``end`` bytes is read with the standard library alone."""
    return end < SMALL_BLOCK and "orjson" not in sys.modules


def _fast_block(data: bytes, end: int) -> tuple[Block, dict[str, Any] | None]:
    """The lines of ``data[:end]`` as :func:`event_json_blocks` prints them, and the
    last record, each line decoded by orjson in place (never copied)."""
    import orjson  # lazy: only this command's fast path

    loads, refused = orjson.loads, orjson.JSONDecodeError
    view = memoryview(data)
    out: list[Block] | None = None  # pieces, once a line is left out or re-encoded
    kept = start = 0  # where the run of lines printed as stored began; this line
    last: Any = None
    while start <= end:
        nl = data.find(b"\n", start)
        try:
            value = loads(view[start:nl])
        except refused:
            value = None
        if type(value) is dict:
            last = value
        else:  # not an object, or one for the standard library (NaN, lone surrogates)
            line = data[start:nl]
            record = _standard_record(line) if value is None else None
            if record is not None and _utf8(line):
                last = record  # as stored
            else:
                if out is None:
                    out = []
                out.append(view[kept:start])
                if record is not None:  # UTF-16/32: as the runner writes its record
                    last = record
                    out.append(_json_line(record))
                kept = nl + 1
        start = nl + 1
    if out is None:
        return view[: end + 1], last
    out.append(view[kept : end + 1])
    return b"".join(out), last  # b"" when every line was left out


def _small_block(data: bytes, end: int) -> tuple[bytes, dict[str, Any] | None]:
    """:func:`_fast_block` with the standard library alone: the same bytes."""
    out: list[bytes] = []
    last: dict[str, Any] | None = None
    for line in data[:end].split(b"\n"):
        record = _standard_record(line)
        if record is not None:
            last = record
            out.append(line + b"\n" if _utf8(line) else _json_line(record))
    return b"".join(out), last


def _standard_record(line: bytes) -> dict[str, Any] | None:
    """The record of ``line`` as :func:`iter_events` reads it (the standard
    library), or ``None`` when it is no JSON object."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if type(record) is dict else None


def _utf8(line: bytes) -> bool:
    """Whether the standard library read ``line`` as UTF-8 (not UTF-16/32, nor with
    a byte order mark): then it is printed as stored."""
    return json.detect_encoding(line) == "utf-8"


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
    current_run(store.state_root)  # damaged: its error (exit 2), not the stale stream
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
    current_run(store.state_root)  # damaged: its error (exit 2), not the stale stream
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

    def records(path: Path, offset: int) -> Iterator[tuple[Any, int, dict[str, Any]]]:
        for record, end in read_jsonl_stream(path, offset):
            yield record, end, record

    return _follow(store, path, offset, records, poll_s=poll_s, stop=stop, events=events)


def _follow(
    store: ControlStore,
    path: Path,
    offset: int,
    read: Callable[[Path, int], Iterator[tuple[Any, int, dict[str, Any] | None]]],
    *,
    poll_s: float,
    stop: Callable[[], bool] | None,
    events: bool,
) -> Iterator[Any]:
    """Yield what ``read(path, offset)`` yields (``(item, offset after it, last
    record in it)``: its items) as ``path`` grows, until the run ends; then the
    run's end record (``events``: the stream's own when it has one), a dict."""
    watcher_state: dict[str, Any] = {}
    last: dict[str, Any] | None = None
    waited = False  # whether the run is over is first asked after one wait: the
    # first new line does not wait for its answer (run.pid's check loads state.lock)
    while True:
        got = 0
        for item, end, record in read(path, offset):
            offset = end
            got += 1
            last = record if record is not None else last
            yield item
        if got == 0:
            try:
                if os.stat(path).st_size < offset:
                    offset = 0  # a new run's stream replaced this one
            except FileNotFoundError:
                pass
        if stop is not None and stop():
            return
        if got:
            continue
        if waited and _run_over(store):
            for item, end, record in read(path, offset):
                offset = end
                last = record if record is not None else last
                yield item
            if not (events and last is not None and last.get("kind") == RUN_FINISHED):
                yield run_end_record(store)
            return
        _wait_for_change(path, poll_s, watcher_state)
        waited = True


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
        recorded = current.get("status")
        if recorded not in (None, RunStatus.RUNNING, "repairing"):
            # the run's own word (e.g. interrupted); else the snapshot's end stands:
            # finish_run writes current.json last
            status = recorded
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
    """Whether the run followed is over: its snapshot says it ended, or no live
    runner holds it. With no snapshot (never written: no run yet; or deleted, or
    damaged by a power loss) ``runs/current.json`` decides: a run it records is
    over once no runner lives (a runner holds ``run.pid`` before it writes
    ``current.json``); with no run recorded the follower waits for one."""
    try:
        snap = store.read_snapshot()
    except Exception:
        return False
    if snap is None:
        try:
            recorded = current_run_id(store.state_root)
        except Exception:
            return False
        return recorded is not None and not run_is_live(store.state_root)
    return snap.get("status") != RunStatus.RUNNING or not run_is_live(store.state_root)


def waits_for_a_run(packet: str | Path) -> bool:
    """Whether following ``packet`` now waits for a run to start: no run is
    recorded (``runs/current.json`` names none) and no snapshot is readable --
    what :func:`_run_over` waits on. ``False`` when anything is wrong (not a
    packet, damaged state): the stream's own call says what."""
    try:
        store = control_store(packet)
        return current_run_id(store.state_root) is None and store.read_snapshot() is None
    except Exception:
        return False


EARLY_POLLS = 100
EARLY_POLL_S = 0.005
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
