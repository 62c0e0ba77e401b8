"""on_event takes no lock for an event the snapshot does not fold (issue 19,
session 15): its line is appended to the buffer while other threads flush it
(the runner's ticks, the request watch, a flush come due on another event).
No line may be lost or written twice, one thread's lines keep their order, and
the snapshot's counts -- event_count, now taken as lines are flushed, and
tool_count, folded under the lock -- must agree with events.jsonl. (Under
CPython's GIL a list's append is atomic, so a flush that replaced the buffer
would lose nothing here either; the flush drains it from the front all the
same, which stays right where appends and a flush truly overlap.)"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.control.store import ControlStore
from prompt_runner.providers.events import Event
from tests.control.test_plane_notify import _plane

EVENTS = 2_000


class _Handle:
    session_id = "s"

    def wait(self, timeout_s: float | None = None) -> None:
        return None

    def interrupt(self) -> None:
        return None


@pytest.fixture
def often_switching() -> Iterator[None]:
    """Threads switch every 10 µs (not every 5 ms): many more interleavings."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@pytest.mark.usefixtures("often_switching")
def test_no_line_is_lost_while_other_threads_flush(tmp_path: Path) -> None:
    plane = _plane(tmp_path, notify=False)
    plane.flush_interval_s = 0.0  # every event's own flush check comes due too
    handle: Any = _Handle()
    plane.tick("01", handle)
    done = threading.Event()

    def ticking() -> None:  # the runner's thread: each tick flushes what is buffered
        while not done.is_set():
            plane.tick("01", handle)

    def emitting(tag: str) -> None:  # a provider thread, text and tool events mixed
        for i in range(EVENTS):
            if i % 7 == 0:
                event = Event("tool_use", {"tool": "Read"}, at_ms=i)
            else:
                event = Event("assistant_text", {"text": f"{tag}{i}"}, at_ms=i)
            plane.on_event("01", event)

    tickers = [threading.Thread(target=ticking) for _ in range(2)]
    for t in tickers:
        t.start()
    emitters = [threading.Thread(target=emitting, args=(tag,)) for tag in "ab"]
    for t in emitters:
        t.start()
    for t in emitters:
        t.join()
    done.set()
    for t in tickers:
        t.join()
    plane.finish("completed")

    lines = [json.loads(x) for x in ControlStore(tmp_path).events_path.read_bytes().splitlines()]
    assert lines[-1]["kind"] == "run_finished"
    texts = [x["text"] for x in lines if x["kind"] == "assistant_text"]
    expected = {f"{tag}{i}" for tag in "ab" for i in range(EVENTS) if i % 7}
    assert len(texts) == len(expected) and set(texts) == expected  # each once
    tools = sum(1 for x in lines if x["kind"] == "tool_use")
    assert tools == 2 * len(range(0, EVENTS, 7))
    for tag in "ab":  # one thread's lines keep their order
        mine = [int(t[1:]) for t in texts if t[0] == tag]
        assert mine == sorted(mine)
    snapshot = ControlStore(tmp_path).read_snapshot()
    assert snapshot is not None
    assert snapshot["event_count"] == len(lines) - 1 == 2 * EVENTS  # run_finished is no event
    assert snapshot["tool_count"] == tools
