"""An agent CLI's stdout line nested deeper than orjson's 1024 levels falls back
to the standard library's scanner, which recursed into RecursionError and ended
the session's parse; it is a non-JSON line like any other."""

from __future__ import annotations

from typing import Any

from prompt_runner.providers.claude_stream import ClaudeStreamParser


def test_a_line_nested_too_deeply_is_noise_and_the_stream_goes_on() -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    parser = ClaudeStreamParser(lambda kind, data: events.append((kind, data)))
    deep = '{"type":"assistant","message":' + "[" * 100_000 + "]" * 100_000 + "}"
    parser.feed_line(deep)
    parser.feed_line('{"type":"system","subtype":"init","session_id":"s-1"}')
    raw = [data for kind, data in events if kind == "raw"]
    assert [d["type"] for d in raw] == ["non_json"]
    assert raw[0]["line"].startswith('{"type":"assistant","message":[[[')
    assert parser.session_id == "s-1"
    assert parser.lines == 2
