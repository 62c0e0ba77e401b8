"""What a run page reads and follows, as plain documents (no web framework here).

The fleets among the sources, a page of the event stream, and the
:class:`Follower` that turns new bytes in the event stream and the control log
(or a replaced stream, or changed prompt records) into server-sent messages.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..control.store import ControlStore
from . import tail
from .present import event_item, log_item
from .sources import RunSource

BEHIND_BYTES = 4 << 20
"""A stream further behind than this (4 MiB) skips to the newest page (``gap``)."""


def fleet_groups(sources: Sequence[RunSource]) -> list[dict[str, Any]]:
    """The fleets among ``sources``: ``[{"id", "manifest", "members": [key, ...]}]`` in
    the order given (the overview shows each as one group of rows)."""
    groups: dict[str, dict[str, Any]] = {}
    for source in sources:
        if source.fleet is None:
            continue
        group = groups.setdefault(
            source.fleet.id,
            {"id": source.fleet.id, "manifest": str(source.fleet.manifest), "members": []},
        )
        group["members"].append(source.key)
    return list(groups.values())


def page_doc(page: tail.Page, item: Any) -> dict[str, Any]:
    return {
        "items": [item(off, record) for off, record in page.records],
        "start": page.start,
        "end": page.end,
        "more_before": page.more_before,
    }


def events_page(source: RunSource, limit: int, before: int | None) -> dict[str, Any]:
    """A page of the run's event stream (newest ``limit`` ending at ``before``) with the
    stream's identity (``stream``) and run id, so the page can follow it."""
    store = ControlStore(source.layout.root)
    ident = tail.StreamId.of(store.events_path)
    page = tail.newest(store.events_path, limit, before=before)
    doc = page_doc(page, event_item)
    doc["stream"] = ident.token
    doc["run_id"] = store.event_stream_run_id()
    return doc


class Follower:
    """What one run page has seen: its offsets in the event stream and the control
    log, and the identity of the stream; :meth:`poll` returns what is new."""

    def __init__(
        self, source: RunSource, *, events: int | None, log: int | None, stream: str | None
    ) -> None:
        self.store = ControlStore(source.layout.root)
        self.events = events
        self.log = log
        self.stream = stream
        self.prompt_mtimes: dict[str, int] = {}
        self._prompts_seen = False

    def poll(self) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        path = self.store.events_path
        ident = tail.StreamId.of(path).token
        if self.events is None or self.stream is None:
            self.events = tail.newest(path, 1).end
            self.stream = ident
        elif ident != self.stream:
            if ident == "none" and self.stream != "none":
                # a new run is between archiving the old stream and creating its own
                # (control/event_stream.prepare): its run id is not written yet, so
                # the reset waits for the new file rather than name the old run
                return out
            self.stream, self.events = ident, 0
            out.append(_sse("reset", {"stream": ident, "run_id": self.store.event_stream_run_id()}))
            return out  # the page reloads the newest page and follows from there
        page = tail.after(path, self.events)
        if page.size < self.events:  # truncated in place (not a rename): start over
            self.events = 0
            out.append(_sse("reset", {"stream": ident, "run_id": self.store.event_stream_run_id()}))
            return out
        if page.size - self.events > BEHIND_BYTES:
            newest = tail.newest(path, tail.PAGE)
            out.append(_sse("gap", {"skipped_bytes": newest.start - self.events}))
            page = newest
        if page.records:
            out.append(_sse("events", page_doc(page, event_item)))
        self.events = page.end
        if self.log is not None:
            log_page = tail.after(self.store.log_path, self.log)
            if log_page.size < self.log:
                log_page = tail.after(self.store.log_path, 0)
            if log_page.records:
                out.append(_sse("log", page_doc(log_page, log_item)))
            self.log = log_page.end
        if self._prompts_changed():
            out.append(_sse("prompts", {}))
        return out

    def _prompts_changed(self) -> bool:
        layout = self.store.layout
        mtimes: dict[str, int] = {}
        for directory in (
            layout.prompts_dir,
            layout.interventions("x").parent,
            layout.amendments_dir,
        ):
            with contextlib.suppress(OSError):
                for entry in directory.iterdir():
                    with contextlib.suppress(OSError):
                        mtimes[str(entry)] = entry.stat().st_mtime_ns
        changed = self._prompts_seen and mtimes != self.prompt_mtimes
        self._prompts_seen = True
        self.prompt_mtimes = mtimes
        return changed


def _sse(event: str, data: Mapping[str, Any]) -> dict[str, str]:
    return {"event": event, "data": json.dumps(data)}
