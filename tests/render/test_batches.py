"""Events handed over in batches render and log exactly as one by one."""

from __future__ import annotations

import io
from pathlib import Path

from prompt_runner.providers.events import Event
from prompt_runner.render.sinks import SessionFiles, encode_body
from prompt_runner.render.text import Console

EVENTS = [
    Event("session_started", {"session_id": "s", "provider": "claude"}, at_ms=1),
    Event("assistant_text", {"text": "hello\nworld"}, at_ms=2),
    Event("tool_use", {"tool": "Bash", "input": {"command": "ls"}}, at_ms=3),
    Event("tool_result", {"output": "a\nb", "is_error": False}, at_ms=4),
    Event("raw", {"type": "rate_limit_event", "line": "{}"}, at_ms=5),
    Event("result", {"ok": True}, at_ms=6),
]


def test_console_events_equal_event_by_event() -> None:
    for view in (
        {"log_mode": "compact", "tool_output": "full"},
        {"log_mode": "verbose"},
        {"log_mode": "studio", "tool_output": "preview"},
    ):
        one, many = io.StringIO(), io.StringIO()
        single = Console(one, view, styled=False)
        batch = Console(many, view, styled=False)
        for event in EVENTS:
            single.event("01", event)
        batch.events("01", EVENTS)
        single.flush()
        batch.flush()
        assert many.getvalue() == one.getvalue() != ""


def test_session_files_events_equal_event_by_event(tmp_path: Path) -> None:
    for schema in ("compact", "full"):
        a = SessionFiles(tmp_path / f"a-{schema}.log", tmp_path / f"a-{schema}.jsonl", schema)
        b = SessionFiles(tmp_path / f"b-{schema}.log", tmp_path / f"b-{schema}.jsonl", schema)
        for event in EVENTS:
            a.event(event, encode_body(event))
        b.events(EVENTS, [encode_body(e) for e in EVENTS])
        a.close()
        b.close()
        for suffix in ("log", "jsonl"):
            left = (tmp_path / f"a-{schema}.{suffix}").read_text()
            right = (tmp_path / f"b-{schema}.{suffix}").read_text()
            assert left == right != ""


def test_control_plane_on_events_equal_event_by_event(tmp_path: Path) -> None:
    from prompt_runner.control.plane import ControlPlane

    usage = Event("usage", {"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.5}, at_ms=7)
    streams = []
    snapshots = []
    for name, batched in (("one", False), ("many", True)):
        plane = ControlPlane(tmp_path / name, run_id="R1", packet="demo", console=Console(None))
        plane.start()
        events = [*EVENTS, usage]
        encoded = [encode_body(e) for e in events]
        if batched:
            plane.on_events("01", events, encoded)
        else:
            for event, body in zip(events, encoded, strict=True):
                plane.on_event("01", event, body)
        plane.finish("completed")
        lines = (tmp_path / name / "control" / "events.jsonl").read_text().splitlines()
        # the stream ends with the runner's own run_finished record, stamped at
        # finish (wall clock): the provider events are the lines before it
        assert '"run_finished"' in lines[-1]
        streams.append("\n".join(lines[:-1]))
        snap = plane.store.read_snapshot() or {}
        snapshots.append(
            {k: snap.get(k) for k in ("tool_count", "tokens", "cost_usd", "event_count")}
        )
    assert streams[0] == streams[1] != ""
    assert snapshots[0] == snapshots[1]
    assert snapshots[0]["tool_count"] == 1 and snapshots[0]["cost_usd"] == 0.5
