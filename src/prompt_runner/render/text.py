"""The Console: the one door for human output (SPEC 4 rendering).

Output goes only through :class:`Console`, which takes an injectable stream
and renders each event with :func:`~.lines.format_event` under its current
view (the control plane swaps ``Console.view`` mid-run). Every line it prints
passes :func:`.printable.printable`: control characters from agents' text,
tool output, patches and file names are shown escaped (``\x1b``), never sent
to the terminal raw. On a terminal (or with ``styled=True``) lines are styled
with ``rich`` (:mod:`.styled`; imported then, never at module import);
anything else -- pipes, files, CI, tests -- gets the same text, plain.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from ..providers.events import Event
from .current_state import with_current_state
from .diff import MAX_PATCH_LINES, patch_body
from .lines import MAX_TOOL_OUTPUT_LINES, format_event
from .printable import printable
from .studio import SessionNotes
from .styled import Styler

# format_event and the caps are also importable from here, where they lived before
__all__ = [
    "EVENT_FLUSH_S",
    "MAX_PATCH_LINES",
    "MAX_TOOL_OUTPUT_LINES",
    "Console",
    "format_event",
    "patch_body",
]

EVENT_FLUSH_S = 0.1


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Console:
    """The one door for human output. Thread-safe; ``stream=None`` discards.

    Runner messages are written and flushed at once. Plain event lines are
    gathered and written together at most every :data:`EVENT_FLUSH_S` seconds
    (and before the next runner message, and by :meth:`flush`, which the
    runner calls while a session is silent), so a provider streaming thousands
    of events costs one write per batch, not one per line, whatever buffering
    the stream has (``PYTHONUNBUFFERED=1`` makes stdout write through).
    """

    def __init__(
        self,
        stream: TextIO | None,
        view: Mapping[str, Any] | None = None,
        styled: bool | None = None,
        roots: Mapping[str, Path] | None = None,
    ) -> None:
        """``styled``: ``True`` styles lines with rich, ``False`` never, ``None`` when a TTY.

        ``roots``: prompt id -> the session's working directory, against which
        a relative path of a patchless change is looked up in git under
        ``diff: full`` (see :mod:`.current_state`).
        """
        self.stream = stream
        self.view: dict[str, Any] = dict(view or {})
        self.roots: dict[str, Path] = dict(roots or {})
        self._lock = threading.Lock()
        self._flushed = time.monotonic()
        self._pending: list[str] = []
        self._notes = SessionNotes()
        self._styler: Styler | None = None
        if stream is not None and (_isatty(stream) if styled is None else styled):
            self._styler = Styler(stream)

    @property
    def styled(self) -> bool:
        """Whether lines go through rich (a terminal, or ``styled=True``)."""
        return self._styler is not None

    def say(self, text: str) -> None:
        """Print a runner message line (flushed)."""
        if self.stream is None:
            return
        text = printable(text)  # runner lines quote file names and provider messages
        with self._lock:
            if self._styler is not None:
                self._styler.say(text, self.view.get("log_mode") == "studio")
            else:
                self._pending.append(text + "\n")
            self._write_pending(time.monotonic())

    def flush(self) -> None:
        """Write and flush event lines still gathered (cheap when there are none)."""
        if self.stream is None:
            return
        with self._lock:
            if self._pending:
                self._write_pending(time.monotonic())

    def events(self, prompt_id: str, events: list[Event]) -> None:
        """Render several events (one lock; plain lines gathered like :meth:`event`'s)."""
        if self.stream is None:
            return
        view = self.view
        if self._styler is not None or view.get("log_mode") == "studio":
            for event in events:  # styled lines and studio's per-session notes: one by one
                self.event(prompt_id, event)
            return
        lines = []
        full = view.get("diff") == "full"
        for event in events:
            if full and event.kind == "file_change":
                event = self._current_state(prompt_id, event)
            line = format_event(event, view)
            if line is not None:
                lines.append(_plain_line(prompt_id, event, printable(line)))
        if not lines:
            return
        with self._lock:
            self._pending.extend(lines)
            self._write_pending_if_due()

    def event(self, prompt_id: str, event: Event) -> None:
        """Render ``event`` under the current view."""
        if self.stream is None:
            return
        view = self.view
        if view.get("log_mode") == "studio":
            event = self._notes.enrich(prompt_id, event)
        if event.kind == "file_change" and view.get("diff") == "full":
            event = self._current_state(prompt_id, event)
        line = format_event(event, view)
        if line is None:
            return
        line = printable(line)  # an agent's text never drives the terminal
        with self._lock:
            if self._styler is None:
                self._pending.append(_plain_line(prompt_id, event, line))
            else:
                self._styler.event(prompt_id, event, line)
            self._write_pending_if_due()

    def _current_state(self, prompt_id: str, event: Event) -> Event:
        """A patchless ``file_change`` with git's current state of its path (shown
        as such, never as the tool's patch); any other event unchanged."""
        if isinstance(event.data.get("patch"), str):
            return event
        data = with_current_state(event.data, self.roots.get(prompt_id))
        return event if data is event.data else Event(event.kind, data, event.at_ms)

    def _write_pending_if_due(self) -> None:
        now = time.monotonic()
        if now - self._flushed >= EVENT_FLUSH_S:
            self._write_pending(now)

    def _write_pending(self, now: float) -> None:
        """Write the gathered lines in one call and flush (the lock is held)."""
        assert self.stream is not None
        if self._pending:
            self.stream.write("".join(self._pending))
            self._pending.clear()
        self.stream.flush()
        self._flushed = now


def _plain_line(prompt_id: str, event: Event, line: str) -> str:
    """``line`` as printed: prompt prefix; full tool output keeps it on every line."""
    prefix = f"  [{prompt_id}] "
    if event.kind in ("tool_result", "error") and "\n" in line:
        line = line.replace("\n", f"\n{prefix}")
    return f"{prefix}{line}\n"
