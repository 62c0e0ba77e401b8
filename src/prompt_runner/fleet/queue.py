"""The local engine's durable queue: ``<fleet root>/queue.jsonl``, one line per event.

A ``fleet submit`` on the local engine drives one *submission*: it starts
each member that is not completed (at most ``concurrency`` at once) and
waits for it to end. Every step is a line, appended and fsynced before the
step is taken for done, by whichever process takes it (the submit driver,
``fleet stop``)::

    {"schema": "prompt_runner.fleet.queue/v1", "schema_version": 1, "at": ISO,
     "event": "submission", "submission": 3, "pid": 4242, "host": "box"}
    {"event": "resumed",   "submission": 3, "pid": ...}   a submit continues a killed one
    {"event": "started",   "submission": 3, "member": "migrate-api", "pid": 5151,
     "run_id": "...", "host": "box"}                          a detached run was started
                          (``"starting": true``, ``run_id`` null: not live yet when
                          start's wait ended; it is followed all the same)
    {"event": "adopted",   "submission": 3, "member": ..., "pid": ...}  found live, followed
    {"event": "finished",  "submission": 3, "member": ..., "state": "completed" | "failed"
     | "stopped" | "unhealthy" | "error", "reason": "..."}  the member's run has ended
    {"event": "skipped",   "submission": 3, "member": ..., "reason": "completed" |
     "stopped" | "failure_policy"}                           not started in this submission
    {"event": "stop",      "submission": 3, "after_prompt": false}  ``fleet stop`` asked
    {"event": "ended",     "submission": 3, "outcome": "completed" | "failed" | "stopped"}

The truth of each member's work stays in its workspace's own state (progress
log, prompt records, run lock): the queue only says which submission is
open and what it has done, so a submit that was killed is continued -- a
member it finished (failed) is not started again in that submission, a run it
started and that still lives is followed, not started twice -- and a later
submission resumes whatever is unfinished. A submission is *closed* by its
``ended`` line or by a ``stop``.

Lines are appended with :func:`~prompt_runner.state.lines.append_line_shared`
(several processes append); a torn line left by a killed writer is skipped
on reading, and the step it was recording is taken again from the
workspace's own state.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..state._clock import iso_now
from ..state.jsonl import encode_record, read_records
from ..state.lines import append_line_shared

SCHEMA = "prompt_runner.fleet.queue/v1"
SCHEMA_VERSION = 1

DONE_EVENTS = frozenset({"finished", "skipped"})
"""A member with one of these in the open submission is not started again in it."""


def host_name() -> str:
    """This machine's name, as the queue and ``fleet status`` show it."""
    return socket.gethostname()


def append_event(path: Path, event: str, **fields: Any) -> dict[str, Any]:
    """Append one queue line (``schema``, ``schema_version``, ``at``, ``event``,
    ``fields``) durably; returns the record.

    Raises:
        StorageError: it cannot be written.
    """
    record: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "at": iso_now(),
        "event": event,
        **fields,
    }
    try:
        append_line_shared(path, encode_record(record))
    except OSError as exc:
        raise StorageError(path, exc) from exc
    return record


@dataclass
class MemberQueue:
    """What the queue says of one member.

    Attributes:
        starts: how many times a submit started its run (every submission).
        last: its last event in the open (or last) submission, or ``None``.
        host: the machine its last start ran on.
        state: the state its last ``finished`` line recorded.
    """

    starts: int = 0
    last: Mapping[str, Any] | None = None
    host: str | None = None
    state: str | None = None


@dataclass
class QueueState:
    """The queue folded.

    Attributes:
        submission: the last submission's number (0: never submitted).
        closed: that submission has ended or was stopped.
        stopped: it was stopped (``fleet stop``).
        after_prompt: the stop let the current prompts finish.
        members: member id -> :class:`MemberQueue`.
    """

    submission: int = 0
    closed: bool = True
    stopped: bool = False
    after_prompt: bool = False
    members: dict[str, MemberQueue] = field(default_factory=dict)

    def member(self, member_id: str) -> MemberQueue:
        """The member's entry (an empty one when the queue never named it)."""
        return self.members.setdefault(member_id, MemberQueue())

    def done_in_submission(self, member_id: str) -> bool:
        """The open submission has finished or skipped the member already."""
        last = self.members.get(member_id, MemberQueue()).last
        return (
            last is not None
            and last.get("submission") == self.submission
            and last.get("event") in DONE_EVENTS
        )


def read_queue(path: Path) -> QueueState:
    """Fold ``queue.jsonl`` into a :class:`QueueState` (a missing file: never submitted).

    Lines that are not JSON objects (a torn line a killed writer left) are skipped.
    """
    return fold(read_records(path, strict=False))


def fold(records: Iterable[Mapping[str, Any]]) -> QueueState:
    """The :class:`QueueState` of queue records, in file order."""
    state = QueueState()
    for record in records:
        event = record.get("event")
        number = record.get("submission")
        if not isinstance(number, int):
            continue
        if event in ("submission", "resumed"):
            if number != state.submission:
                state.stopped = state.after_prompt = False
            state.submission, state.closed = number, False
        elif event == "ended" and number == state.submission:
            state.closed = True
        elif event == "stop" and number == state.submission:
            state.closed = state.stopped = True
            state.after_prompt = bool(record.get("after_prompt"))
        member_id = record.get("member")
        if isinstance(member_id, str):
            entry = state.member(member_id)
            entry.last = record
            if event == "started":
                entry.starts += 1
                entry.host = record.get("host") if isinstance(record.get("host"), str) else None
            elif event == "finished" and isinstance(record.get("state"), str):
                entry.state = record["state"]
    return state


def driver_fields() -> dict[str, Any]:
    """``{"pid", "host"}`` of this process, for the submission lines."""
    return {"pid": os.getpid(), "host": host_name()}
