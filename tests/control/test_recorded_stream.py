"""A recorded provider stream through the plane one event at a time (issue 19):
events.jsonl and the snapshot are byte for byte what the one-write-per-flush
encoding wrote, whatever the size of the batch (control/event_stream.py's
WRITE_LINES chunks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.control import event_stream
from prompt_runner.control.plane import ControlPlane, PromptInfo
from prompt_runner.control.store import ControlStore
from prompt_runner.providers.claude_stream import ClaudeStreamParser
from prompt_runner.providers.events import Event
from prompt_runner.render.text import Console
from prompt_runner.runner.position import Position
from tests.control.test_plane_notify import _old_with_ids

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = [DATA / "agent-cli" / "claude", *sorted((DATA / "usage").glob("claude-*"))]
VIEW = {"log_mode": "compact", "tool_output": "summary", "thinking": "hide", "diff": "none"}


def _recorded_events() -> list[Event]:
    """Every recorded Claude CLI transcript, parsed as the runner parses it."""
    events: list[Event] = []
    for stdout in [s for folder in RECORDED for s in sorted(folder.glob("*/stdout.jsonl"))]:
        parser = ClaudeStreamParser(lambda kind, data: events.append(Event(kind, data)))  # type: ignore[arg-type]
        for line in stdout.read_text(encoding="utf-8").splitlines():
            parser.feed_line(line)
    return events


class _Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def _run(root: Path, events: list[Event], prompts: list[str]) -> tuple[bytes, dict]:
    clock = _Clock()
    plane = ControlPlane(
        root,
        run_id="r1",
        packet="p",
        console=Console(None, dict(VIEW)),
        prompts={p: PromptInfo(f"Prompt {p}", "claude", "m", 3) for p in prompts},
        position=Position(prompts[0], 1, "run"),
        clock=clock,
        notify=False,
    )
    plane.start()
    for n, prompt_id in enumerate(prompts):
        for i, event in enumerate(events):
            plane.on_event(prompt_id, event)
            if i % 997 == 0:
                clock.now += 0.25  # a flush now and then, the rest in one big batch
        plane.boundary(prompt_id, next_mode=None if n == len(prompts) - 1 else "run")
    snapshot = dict(plane.snapshot)
    plane.finish("completed")
    for key in ("started_at", "updated_at"):  # wall clock
        snapshot.pop(key)
    stream = ControlStore(root).events_path.read_bytes()
    *lines, finished = stream.rstrip(b"\n").split(b"\n")
    assert json.loads(finished)["kind"] == "run_finished"
    return b"\n".join(lines) + b"\n", snapshot


def test_a_recorded_stream_writes_the_same_bytes_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = _recorded_events()
    assert len(recorded) >= 50 and len({e.kind for e in recorded}) >= 5, recorded
    events = recorded * (3 * event_stream.WRITE_LINES // len(recorded) + 1)
    prompts = ["01", "02"]
    expected = "".join(_old_with_ids(e, p, "r1") + "\n" for p in prompts for e in events).encode(
        "utf-8", "backslashreplace"
    )

    chunked, snap_chunked = _run(tmp_path / "chunked", events, prompts)
    monkeypatch.setattr(event_stream, "WRITE_LINES", 10**9)  # one write per flush, as before
    whole, snap_whole = _run(tmp_path / "whole", events, prompts)
    monkeypatch.setattr(event_stream, "WRITE_LINES", 7)
    small, snap_small = _run(tmp_path / "small", events, prompts)

    assert chunked == whole == small == expected
    assert snap_chunked == snap_whole == snap_small
    assert snap_chunked["event_count"] == len(events) * len(prompts)
    assert snap_chunked["tool_count"] == 2 * sum(e.kind == "tool_use" for e in events)
