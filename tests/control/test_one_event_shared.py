"""on_event with the runner sink's shared encoding (issue 19, session 13): after a
prompt's first event the line is the encoding with the prompt's id tail spliced
on, byte for byte what with_ids wrote, whether events come encoded, not encoded
or mixed, across prompts and a boundary."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.control.plane_files import with_ids
from prompt_runner.control.store import ControlStore
from prompt_runner.providers.events import Event
from prompt_runner.render.sinks import encode_body
from tests.control.test_plane_notify import _old_with_ids, _plane

EVENTS = [
    Event("session_started", {"provider": "simulated", "model": "m"}, at_ms=1),
    Event("assistant_text", {"text": 'caf\u00e9 "q" \\ \x1f'}, at_ms=2),
    Event("tool_use", {"tool": "Read", "input": {"file_path": "a.py"}}, at_ms=2),
    Event("usage", {"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.25}, at_ms=3),
    Event("usage", {}, at_ms=3),
    Event("usage", {7: "an int key"}, at_ms=4),
    Event("assistant_text", {"text": "lone \ud800 surrogate"}, at_ms=5),
    Event("assistant_text", {"kind": "shadowed"}, at_ms=6),
    Event("assistant_text", {"prompt_id": "theirs", "run_id": "x"}, at_ms=7),
]


def _written(root: Path) -> list[bytes]:
    return ControlStore(root).events_path.read_bytes().split(b"\n")


def test_shared_encodings_write_the_lines_with_ids_wrote(tmp_path: Path) -> None:
    plane = _plane(tmp_path, notify=False)
    expected = []
    for n, prompt_id in enumerate(("01", "02", "01")):
        for i, event in enumerate(EVENTS):
            # encoded, not encoded, and alternating: one line whichever way
            encoded = None if (n == 1 or (n == 2 and i % 2)) else encode_body(event)
            plane.on_event(prompt_id, event, encoded)
            if encoded is None:
                expected.append(_old_with_ids(event, prompt_id, "r1"))
            else:  # a lone surrogate's shared encoding is the stdlib's, kept as given
                expected.append(with_ids(encoded, event, prompt_id, "r1"))
        plane.boundary(prompt_id, next_mode="run")
    plane.finish("completed")
    lines = _written(tmp_path)
    assert lines[: len(expected)] == [e.encode("utf-8", "backslashreplace") for e in expected]
    snapshot = ControlStore(tmp_path).read_snapshot()
    assert snapshot is not None
    assert snapshot["event_count"] == len(expected)
    assert snapshot["tool_count"] == 3
    assert snapshot["tokens"]["input"] == 9 and snapshot["tokens"]["output"] == 12


def test_an_odd_shared_encoding_is_written_as_with_ids_would(tmp_path: Path) -> None:
    """An encoding that is no JSON object (a caller's own) is not spliced blindly."""
    plane = _plane(tmp_path, notify=False)
    first = Event("assistant_text", {"text": "a"}, at_ms=1)
    plane.on_event("01", first, encode_body(first))
    odd = Event("assistant_text", {"text": "b"}, at_ms=2)
    plane.on_event("01", odd, "{}")
    plane.on_event("01", odd, '["not", "an", "object"]')
    plane.finish("completed")
    lines = _written(tmp_path)
    assert lines[1] == _old_with_ids(odd, "01", "r1").encode()
    assert lines[2] == _old_with_ids(odd, "01", "r1").encode()
