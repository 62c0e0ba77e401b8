"""Every captured transcript replays through its parser without crashing.

Each case under ``tests/data/agent-cli/{claude,codex,gemini}`` is fed line by
line: every event has a canonical kind, the outcome is either ``ok`` or
carries a failure, and records the parser does not map come out as capped
``raw`` events -- counted, never kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from prompt_runner.providers import claude, codex, gemini
from prompt_runner.providers._stream import RAW_LINE_CAP, StreamParser, UsageLedger
from prompt_runner.providers.events import EVENT_KINDS, Event
from tests.providers.conftest import DATA, replay

MAKERS: dict[str, Callable[[Callable[[str, dict[str, Any]], None]], StreamParser]] = {
    "claude": lambda emit: claude.ClaudeStreamParser(emit),  # type: ignore[arg-type]
    "codex": lambda emit: codex.CodexStreamParser(emit, UsageLedger()),  # type: ignore[arg-type]
    "gemini": lambda emit: gemini.GeminiStreamParser(emit),  # type: ignore[arg-type]
}
CASES = [
    (provider, case.name)
    for provider in MAKERS
    for case in sorted((DATA / provider).iterdir())
    if (case / "stdout.jsonl").exists()
]


def test_there_are_many_captured_cases() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize(("provider", "case"), CASES)
def test_transcript_replays(provider: str, case: str) -> None:
    parsers: list[StreamParser] = []

    def make(emit: Callable[[str, dict[str, Any]], None]) -> StreamParser:
        parsers.append(MAKERS[provider](emit))
        return parsers[-1]

    events, outcome = replay(make, provider, case)
    assert all(e.kind in EVENT_KINDS for e in events)
    assert outcome.ok or outcome.failure is not None
    assert not (outcome.ok and outcome.failure is not None)
    raws = [e.data for e in events if e.kind == "raw"]
    parser = parsers[0]
    assert len(raws) == parser.unknown_count + sum(1 for r in raws if r["type"] == "non_json")
    for raw in raws:
        assert len(raw["line"]) <= RAW_LINE_CAP + 40
    lines = (DATA / provider / case / "stdout.jsonl").read_text(encoding="utf-8").splitlines()
    types = {json.loads(x).get("type") for x in lines if x.startswith("{")}
    # A raw event only ever names a type that really occurred in the transcript.
    assert {r["type"] for r in raws if r["type"] != "non_json"} <= types | _nested_types(lines)
    if any(e.kind == "session_started" for e in events):
        assert events[[e.kind for e in events].index("session_started")].data["session_id"]


def _nested_types(lines: list[str]) -> set[str]:
    found: set[str] = set()
    for line in lines:
        if line.startswith("{"):
            item = json.loads(line).get("item")
            if isinstance(item, dict) and item.get("type"):
                found.add(str(item["type"]))
    return found


def test_an_unknown_event_in_a_real_stream_is_raw_and_the_run_still_succeeds() -> None:
    lines = (DATA / "claude" / "success_write" / "stdout.jsonl").read_text().splitlines()
    novel = json.dumps({"type": "system", "subtype": "hook_started", "hook": "x" * 10_000})
    events: list[Event] = []
    parser = claude.ClaudeStreamParser(lambda k, d: events.append(Event(k, d)))
    for line in [lines[0], novel, *lines[1:]]:
        parser.feed_line(line)
    outcome = parser.outcome(0, "")
    assert outcome.ok
    raw = [e.data for e in events if e.kind == "raw"]
    assert len(raw) == 1 and raw[0]["type"] == "system"
    assert raw[0]["line"].startswith('{"type": "system", "subtype": "hook_started"')
