"""Durations as operators type them (``90s``, ``10m``, ``4h``): one parser, one sentence."""

from __future__ import annotations

import pytest

from prompt_runner.durations import format_duration, parse_duration
from prompt_runner.errors import UserError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("10m", 600.0),
        ("4h", 14400.0),
        ("2d", 172800.0),
        ("1h30m", 5400.0),
        ("1h 30m", 5400.0),
        ("1.5h", 5400.0),
        ("250ms", 0.25),
        ("90", 90.0),
        (" 10M ", 600.0),
        ("1m30s", 90.0),
    ],
)
def test_accepted_spellings(text: str, seconds: float) -> None:
    assert parse_duration(text, key="--for") == seconds


@pytest.mark.parametrize(
    "text",
    ["", "m", "10 minutes", "-5m", "1e3", "inf", "nan", "5x", "30m1h", "1m1m", "10m!", "h1"],
)
def test_refused_spellings_say_one_sentence_naming_the_key(text: str) -> None:
    with pytest.raises(UserError) as err:
        parse_duration(text, key="--every")
    message = str(err.value)
    assert message.startswith("--every: ") and "is not a duration" in message
    assert "e.g. 90s, 10m, 4h" in message and message.count("\n") == 0
    assert err.value.exit_code == 2


def test_zero_is_refused_unless_the_caller_allows_it() -> None:
    with pytest.raises(UserError, match="no time at all"):
        parse_duration("0s", key="--for")
    assert parse_duration("0s", key="--for", positive=False) == 0.0


def test_a_file_is_named_when_the_duration_came_from_one() -> None:
    with pytest.raises(UserError) as err:
        parse_duration("soon", key="recovery.max_wait", file="/tmp/p/prompt_runner_packet.md")
    assert "prompt_runner_packet.md: recovery.max_wait: 'soon' is not a duration" in str(err.value)


def test_not_text_is_refused() -> None:
    with pytest.raises(UserError, match="is not a duration"):
        parse_duration(10, key="--for")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5400, "1h30m"), (90, "1m30s"), (0.25, "250ms"), (0, "0s"), (86400 + 1, "1d1s")],
)
def test_format_reads_back(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    if seconds:
        assert parse_duration(text, key="x") == pytest.approx(seconds)


def test_a_span_longer_than_30_days_is_refused_naming_the_longest() -> None:
    """``99999999999h`` overflowed the watch's clock (an internal error after a
    sample): more than 30 days is refused, one sentence naming the key and the most."""
    assert parse_duration("30d", key="--for") == 30 * 86400.0
    for text in ("99999999999h", "30d1s", "2592001"):
        with pytest.raises(UserError) as err:
            parse_duration(text, key="--for")
        message = str(err.value)
        longest = "is longer than 30 days, the longest duration taken; give 30d or less."
        assert message == f"--for: {text!r} {longest}"
        assert err.value.exit_code == 2
