"""The ``◔ usage:`` line says the reset is unknown, and what the provider gave,
when the reset was out of range (``reset_given``, providers/usage.py
``RESET_HORIZON``) -- it said nothing about the reset then (render/lines.py
``_usage_window``).

The events come from the real Claude Code 2.1.332 capture replayed through its
stream parser (``resetsAt`` replaced by year 10000), and from a Codex refusal's
text through ``window_from_text``; the lines are :func:`format_event`'s.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from prompt_runner.providers._stream import window_event
from prompt_runner.providers.claude_stream import ClaudeStreamParser
from prompt_runner.providers.events import Event
from prompt_runner.providers.usage_text import window_from_text
from prompt_runner.render.lines import format_event
from tests.runner.test_inputs_usage_reset import YEAR_10000, claude_rejected_at

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def claude_window_events(resets_at: str) -> list[Event]:
    """The ``usage_window`` events of Claude's five-hour refusal, its ``resetsAt`` replaced."""
    events: list[Event] = []
    parser = ClaudeStreamParser(lambda kind, data: events.append(Event(kind, data)))
    for line in claude_rejected_at(resets_at)["stdout"].splitlines():
        parser.feed_line(line)
    return [event for event in events if event.kind == "usage_window"]


@pytest.mark.parametrize("mode", ["compact", "studio"])
def test_a_reset_out_of_range_is_shown_unknown_with_what_the_provider_gave(mode: str) -> None:
    rejected = claude_window_events(str(YEAR_10000))[0]
    assert format_event(rejected, {"log_mode": mode}) == (
        "◔ usage: claude five_hour rejected 100% used, "
        f"reset unknown (resetsAt {YEAR_10000} is out of range)"
    )


def test_an_allowed_window_under_studio_says_it_too() -> None:
    allowed = claude_window_events(str(YEAR_10000))[1]
    assert format_event(allowed, {"log_mode": "compact"}) is None  # compact hides allowed
    assert format_event(allowed, {"log_mode": "studio"}) == (
        f"◔ usage: claude seven_day allowed 50% used, reset unknown (resetsAt {YEAR_10000} "
        "is out of range)"
    )


def test_a_text_reset_out_of_range_quotes_the_text() -> None:
    window = window_from_text(
        "codex", "You've hit your usage limit. try again in 99999999999 days", now=NOW
    )
    assert window is not None and window.reset_given is not None
    line = format_event(Event("usage_window", window_event(window)), {"log_mode": "compact"})
    assert line == (
        "◔ usage: codex unknown rejected, reset unknown ('try again in 99999999999 days' "
        "is out of range)"
    )


def test_a_known_reset_and_no_reset_read_as_before() -> None:
    soon = NOW + timedelta(hours=3)
    (known,) = claude_window_events(str(int(soon.timestamp())))[:1]
    assert format_event(known, {"log_mode": "compact"}) == (
        "◔ usage: claude five_hour rejected 100% used, resets 2026-12-01T15:00:00.000Z"
    )
    window = window_from_text("codex", "You've hit your usage limit.", now=NOW)
    assert window is not None and window.resets_at is None and window.reset_given is None
    line = format_event(Event("usage_window", window_event(window)), {"log_mode": "compact"})
    assert line == "◔ usage: codex unknown rejected"  # a window of unknown kind
