"""File sinks for one session: the transcript (``.log``) and JSONL events.

JSONL schemas (SPEC 4): ``compact`` = ``{"e": {...}, "t": EPOCH_MS}``;
``full`` = ``{"data": {...}, "ts": ISO8601}``; ``off`` writes no event file.

Each event is JSON-encoded once; the transcript line (``[kind] {...}``) and the
JSONL line are built from that one encoding. Writes go through Python's
buffered files and are flushed at most every :data:`FLUSH_INTERVAL_S` seconds,
on every runner note, and at close, so a fast provider is not slowed by a
flush per event while a watcher still sees the files move.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import orjson

from ..errors import StorageError
from ..providers.events import Event

FLUSH_INTERVAL_S = 0.2
SENT_OPEN = "--- sent to the agent ---"
SENT_CLOSE = "--- end of what was sent ---"
"""The lines around the text a session was sent, in its transcript (:meth:`SessionFiles.sent`)."""
_OPTS = orjson.OPT_NON_STR_KEYS
_dumps = orjson.dumps
_REFUSED = (TypeError, orjson.JSONEncodeError)
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def _iso(at_ms: int) -> str:
    ts = datetime.fromtimestamp(at_ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    return ts.replace("+00:00", "Z")


def encode_body(event: Event) -> str:
    """``event.to_dict()`` as one JSON object string (the shared encoding).

    Encoded with orjson (compiled; the event path's hottest step); anything it
    cannot encode falls back to the standard library with ``default=str``.
    """
    data = event.data
    if type(data) is dict and "kind" not in data and "at_ms" not in data:
        # Encode the payload alone and splice the two header keys in front:
        # the same object as to_dict() without building it.
        try:
            body = _dumps(data)  # no options first: they cost a fifth of the call
        except _REFUSED:  # a key that is not a string, a value JSON has no type for
            try:
                body = _dumps(data, default=str, option=_OPTS)
            except _REFUSED:
                return _ENCODER.encode(event.to_dict())
        if len(body) > 2:
            return f'{{"kind":"{event.kind}","at_ms":{event.at_ms},{body[1:].decode()}'
        return f'{{"kind":"{event.kind}","at_ms":{event.at_ms}}}'
    try:
        return orjson.dumps(event.to_dict(), default=str, option=_OPTS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return _ENCODER.encode(event.to_dict())


def encode_event(event: Event, schema: str) -> str:
    """One JSONL line (without newline) for ``event`` in ``schema`` (compact|full)."""
    return _wrap(encode_body(event), event.at_ms, schema)


def _wrap(body: str, at_ms: int, schema: str) -> str:
    if schema == "full":
        return f'{{"data":{body},"ts":"{_iso(at_ms)}"}}'
    return f'{{"e":{body},"t":{at_ms}}}'


class SessionFiles:
    """Transcript + JSONL event files of one session (append-only).

    A write that fails (full or read-only disk) must not look like the
    provider's failure: events arrive on the provider's reader thread, so a
    failed event write is kept as :attr:`fault` (later events are dropped)
    and raised by the runner's next :meth:`note` or :meth:`close`.

    Raises (``__init__``, :meth:`note`, :meth:`close`):
        StorageError: a file could not be created or written.
    """

    def __init__(self, log_path: Path, events_path: Path | None, schema: str) -> None:
        self.log_path = log_path
        self.events_path = events_path
        self.fault: StorageError | None = None
        self._schema = schema
        self._lock = threading.Lock()
        try:
            try:
                self._log: TextIO = log_path.open("a", encoding="utf-8")
            except (FileNotFoundError, NotADirectoryError):  # mkdir names what is in the way
                log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = log_path.open("a", encoding="utf-8")
        except OSError as exc:
            raise StorageError(log_path, exc, doing="created") from exc
        try:
            self._events: TextIO | None = (
                events_path.open("a", encoding="utf-8") if events_path is not None else None
            )
        except OSError as exc:
            self._log.close()
            raise StorageError(events_path or log_path, exc, doing="created") from exc
        self._flushed = time.monotonic()

    def note(self, text: str) -> None:
        """A runner line in the transcript (flushed at once)."""
        with self._lock:
            self._raise_fault()
            try:
                self._log.write(text + "\n")
                self._flush()
            except OSError as exc:
                self.fault = StorageError(self.log_path, exc)
                raise self.fault from exc

    def sent(self, what: str, text: str) -> None:
        """The text a session (or a steer's resumed session) was sent, verbatim,
        between a :data:`SENT_OPEN` line naming ``what`` (the session's mode:
        ``run``, ``repair``, ``resume`` ...; or ``steer``) and its length, and a
        :data:`SENT_CLOSE` line; flushed at once. Transcript only: the JSONL
        events are unchanged.

        Raises:
            StorageError: the transcript could not be written.
        """
        body = text if text.endswith("\n") else text + "\n"
        self.note(f"{SENT_OPEN} ({what}, {len(text)} chars)\n{body}{SENT_CLOSE}")

    def event(self, event: Event, encoded: str | None = None) -> None:
        """Append ``event`` to the transcript and the JSONL log.

        ``encoded``: the caller's JSON encoding of ``event.to_dict()``, reused.
        """
        body = encoded if encoded is not None else encode_body(event)
        with self._lock:
            if self.fault is not None:
                return
            try:
                self._log.write(f"[{event.kind}] {body}\n")
                if self._events is not None:
                    self._events.write(_wrap(body, event.at_ms, self._schema) + "\n")
                if time.monotonic() - self._flushed >= FLUSH_INTERVAL_S:
                    self._flush()
            except OSError as exc:
                self.fault = StorageError(self.log_path, exc)

    def events(self, events: list[Event], encoded: list[str]) -> None:
        """Append several events; ``encoded[i]`` is ``events[i]``'s shared encoding."""
        schema = self._schema
        log = "".join([f"[{e.kind}] {body}\n" for e, body in zip(events, encoded, strict=True)])
        with self._lock:
            if self.fault is not None:
                return
            try:
                self._log.write(log)
                if self._events is not None:
                    self._events.write(
                        "".join(
                            [
                                _wrap(body, e.at_ms, schema) + "\n"
                                for e, body in zip(events, encoded, strict=True)
                            ]
                        )
                    )
                if time.monotonic() - self._flushed >= FLUSH_INTERVAL_S:
                    self._flush()
            except OSError as exc:
                self.fault = StorageError(self.log_path, exc)

    def _raise_fault(self) -> None:
        if self.fault is not None:
            raise self.fault

    def _flush(self) -> None:
        self._log.flush()
        if self._events is not None:
            self._events.flush()
        self._flushed = time.monotonic()

    def close(self) -> None:
        with self._lock:
            if self._log.closed:
                return
            files = [f for f in (self._log, self._events) if f is not None]
            for file in files:
                try:
                    file.close()
                except OSError as exc:  # the buffered tail could not be written
                    if self.fault is None:
                        self.fault = StorageError(self.log_path, exc)
            self._raise_fault()
