"""The run journal ``runs/<run_id>/journal.jsonl`` (catalog C4).

Lifecycle records of one run (``run_started``, ``run_resumed``,
``run_superseded``, ``run_finished``...), one JSON object per line::

    {"schema":1,"run_id":"R1","seq":1,"at":"2025-01-02T03:04:05.123Z","type":"run_started","data":{...}}

``seq`` counts from 1 and stays contiguous across reopenings: :class:`Journal`
reads the existing records on open and continues after the last one.

Durability rules:

* every append is fsynced before :meth:`Journal.append` returns;
* a torn final record (a writer killed mid-append) is quarantined to
  ``journal.jsonl.torn.<stamp>`` on open, then appends continue;
* any other bad line -- not JSON, not an object, or a ``seq`` out of order --
  is corruption of a record of truth and raises
  :class:`~prompt_runner.errors.StateError` ("journal corrupt at line N").
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from prompt_runner.errors import StateError
from prompt_runner.state._clock import iso_now
from prompt_runner.state._closing import Closing
from prompt_runner.state.jsonl import JsonlWriter, decode_line
from prompt_runner.state.lines import read_complete_lines

JOURNAL_SCHEMA = 1
_FIX = (
    "restore it from a backup, or delete the bad line (the journal is an audit trail; "
    "progress and state do not depend on it)"
)


class JournalLike(Protocol):
    """What the runner needs from a journal (file-backed or in memory)."""

    run_id: str

    def append(self, type: str, data: Mapping[str, Any]) -> dict[str, Any]:
        """Append one record and return it."""
        ...

    def records(self) -> list[dict[str, Any]]:
        """Every record so far, in ``seq`` order."""
        ...

    def close(self) -> None:
        """Release resources; idempotent."""
        ...


def make_record(run_id: str, seq: int, type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Build one journal record (``data`` is deep-copied)."""
    return {
        "schema": JOURNAL_SCHEMA,
        "run_id": run_id,
        "seq": seq,
        "at": iso_now(millis=True),
        "type": type,
        "data": copy.deepcopy(dict(data)),
    }


def read_journal(path: Path) -> list[dict[str, Any]]:
    """Return every complete record of the journal at ``path`` (``[]`` if missing).

    A torn final line is ignored (not repaired; see :class:`Journal`).

    Raises:
        StateError: "journal corrupt at line N" for a line that is not a JSON
            object or whose ``seq`` is not the next integer.
    """
    lines, _torn = read_complete_lines(path)
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        try:
            record = decode_line(raw)
        except ValueError as exc:
            raise _corrupt(path, number, str(exc)) from exc
        expected = len(records) + 1
        if record.get("seq") != expected:
            raise _corrupt(path, number, f"seq {record.get('seq')!r}, expected {expected}")
        records.append(record)
    return records


def _corrupt(path: Path, number: int, why: str) -> StateError:
    return StateError(f"journal corrupt at line {number} ({why})", file=path, fix=_FIX)


class Journal(Closing):
    """An open, append-only run journal.

    Args:
        path: ``<root>/runs/<run_id>/journal.jsonl``; created when missing.
        run_id: the run these records belong to.

    Opening quarantines a torn final record (see :attr:`torn_path`) and reads the
    existing records to continue ``seq``.

    Raises:
        StateError: an earlier record is corrupt ("journal corrupt at line N").
    """

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        # Validate before touching the file: a corrupt journal is left as found.
        self._seq = len(read_journal(path))
        self._writer = JsonlWriter(path)

    @property
    def torn_path(self) -> Path | None:
        """Where a torn final record was quarantined on open, or ``None``."""
        return self._writer.torn_path

    @property
    def last_seq(self) -> int:
        """The ``seq`` of the newest record (0 when empty)."""
        return self._seq

    def append(self, type: str, data: Mapping[str, Any]) -> dict[str, Any]:
        """Append a ``type`` record with payload ``data`` (JSON-safe), fsynced; returns it.

        Raises:
            TypeError / ValueError: ``data`` is not JSON-safe (nothing is written).
            OSError: the write failed.
        """
        record = make_record(self.run_id, self._seq + 1, type, data)
        self._writer.append(record)
        self._seq += 1
        return record

    def records(self) -> list[dict[str, Any]]:
        """Every record in the file (re-read from disk)."""
        return read_journal(self.path)

    def close(self) -> None:
        """Close the file; idempotent."""
        self._writer.close()


class MemoryJournal:
    """A journal kept in memory (``keep=False``: records are numbered, then dropped).

    Same contract as :class:`Journal`; used by the in-memory and no-op stores.
    """

    def __init__(self, run_id: str, *, keep: bool = True) -> None:
        self.run_id = run_id
        self._keep = keep
        self._records: list[dict[str, Any]] = []
        self._seq = 0

    def append(self, type: str, data: Mapping[str, Any]) -> dict[str, Any]:
        """Append a record (validated as JSON-safe) and return it."""
        record = make_record(self.run_id, self._seq + 1, type, data)
        json.dumps(record, allow_nan=False)
        self._seq += 1
        if self._keep:
            self._records.append(record)
        return copy.deepcopy(record)

    def records(self) -> list[dict[str, Any]]:
        """Copies of the kept records."""
        return copy.deepcopy(self._records)

    def close(self) -> None:
        """Nothing to release."""
