"""Usage windows from what the real CLIs print (tests/data/usage) and their text forms.

The ``claude-2.1.332`` and ``codex-0.171.0`` cases are captures of the real
binaries against our mock servers (``steps.json`` holds the headers the mock
sent); the text forms marked "documented" are built from published issue
reports and docs (see :mod:`prompt_runner.providers.usage`).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.providers._stream import Outcome, UsageLedger
from prompt_runner.providers.base import SessionRequest, TimeBounds
from prompt_runner.providers.classify import Signals, classify
from prompt_runner.providers.claude_stream import ClaudeStreamParser
from prompt_runner.providers.codex_stream import CodexStreamParser
from prompt_runner.providers.events import Event
from prompt_runner.providers.registry import get_provider
from prompt_runner.providers.usage import UsageWindow
from prompt_runner.providers.usage_text import window_from_text
from tests.providers.conftest import FakeCli

USAGE = Path(__file__).resolve().parents[1] / "data" / "usage"
CLAUDE = USAGE / "claude-2.1.332"
CODEX = USAGE / "codex-0.171.0"


def header_epoch(case: Path, name: str) -> int:
    """The epoch the mock sent in header ``name`` for that capture."""
    steps = json.loads((case / "steps.json").read_text(encoding="utf-8"))
    return int(steps[0]["headers"][name])


def utc(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def replay_claude(case: Path) -> tuple[list[Event], Outcome]:
    events: list[Event] = []
    parser = ClaudeStreamParser(lambda k, d: events.append(Event(k, d)))
    for line in (case / "stdout.jsonl").read_text(encoding="utf-8").splitlines():
        parser.feed_line(line)
    return events, parser.outcome(int((case / "exit_code").read_text()), "")


def replay_codex(case: Path, home: Path | None) -> tuple[list[Event], Outcome]:
    """Replay a Codex capture; with ``home``, its rollout is where Codex writes it."""
    lines = (case / "stdout.jsonl").read_text(encoding="utf-8").splitlines()
    if home is not None:
        thread = json.loads(lines[0])["thread_id"]
        day = home / "sessions" / "2026" / "12" / "01"
        day.mkdir(parents=True)
        shutil.copy(case / "rollout.jsonl", day / f"rollout-2026-12-01T12-21-05-{thread}.jsonl")
    tz = json.loads((case / "case.json").read_text(encoding="utf-8"))["env"].get("TZ")
    events: list[Event] = []
    parser = CodexStreamParser(
        lambda k, d: events.append(Event(k, d)), UsageLedger(), codex_home=home, local_tz=tz
    )
    for line in lines:
        parser.feed_line(line)
    return events, parser.outcome(int((case / "exit_code").read_text()), "")


def windows(events: list[Event]) -> list[dict[str, Any]]:
    """The reported windows, as :meth:`UsageWindow.to_dict` (the event says ``window``)."""
    out = []
    for event in events:
        if event.kind == "usage_window":
            data = dict(event.data)
            data["kind"] = data.pop("window")
            out.append(data)
    return out


# ---------------------------------------------------------------- Claude Code 2.1.332


def test_claude_warning_event_gives_utilization_and_reset() -> None:
    case = CLAUDE / "allowed_warning_five_hour"
    events, outcome = replay_claude(case)
    assert outcome.ok
    five = windows(events)[0]
    assert five["kind"] == "five_hour" and five["status"] == "warning"
    assert five["utilization"] == pytest.approx(0.95)
    reset = utc(header_epoch(case, "anthropic-ratelimit-unified-5h-reset"))
    assert UsageWindow.from_dict(five) == UsageWindow(
        "claude", "five_hour", "warning", 0.95, reset, "event"
    )
    assert {w["kind"] for w in windows(events)} == {"five_hour", "seven_day"}


def test_claude_rejected_event_is_a_quota_refusal_with_its_reset() -> None:
    case = CLAUDE / "rejected_five_hour_utc"
    _, outcome = replay_claude(case)
    failure = outcome.failure
    assert failure is not None and failure.failure_class == "provider_rate_limit"
    assert failure.provider_code == "usage_limit" and not failure.retryable
    window = failure.usage_window
    assert window is not None and window.exhausted and window.source == "event"
    assert window.kind == "five_hour"
    assert window.resets_at == utc(header_epoch(case, "anthropic-ratelimit-unified-reset"))
    assert "You've hit your 5-hour limit" in failure.message


def test_claude_weekly_refusal_names_the_weekly_window() -> None:
    case = CLAUDE / "rejected_seven_day_paris"
    _, outcome = replay_claude(case)
    assert outcome.failure is not None and outcome.failure.usage_window is not None
    assert outcome.failure.usage_window.kind == "seven_day"
    reset = utc(header_epoch(case, "anthropic-ratelimit-unified-7d-reset"))
    assert outcome.failure.usage_window.resets_at == reset


def test_claude_bare_429_is_a_retryable_rate_limit_not_a_usage_window() -> None:
    _, outcome = replay_claude(CLAUDE / "bare_429_no_unified_headers")
    failure = outcome.failure
    assert failure is not None and failure.failure_class == "provider_rate_limit"
    assert failure.retryable and failure.usage_window is None


# ---------------------------------------------------------------- Codex 0.171.0


def test_codex_rollout_token_count_gives_both_windows(tmp_path: Path) -> None:
    events, outcome = replay_codex(CODEX / "token_count_warning", tmp_path)
    assert outcome.ok
    seen = {w["kind"]: w for w in windows(events)}
    assert seen["five_hour"]["utilization"] == pytest.approx(0.935)
    assert seen["five_hour"]["window_minutes"] == 300
    assert seen["seven_day"]["utilization"] == pytest.approx(0.41)


def test_codex_usage_limit_reached_takes_the_reset_from_the_rollout(tmp_path: Path) -> None:
    case = CODEX / "usage_limit_reached_secondary_paris"
    _, outcome = replay_codex(case, tmp_path)
    failure = outcome.failure
    assert failure is not None and failure.provider_code == "usage_limit"
    window = failure.usage_window
    assert window is not None and window.kind == "seven_day" and window.source == "event"
    assert window.resets_at == utc(header_epoch(case, "x-codex-secondary-reset-at"))


def test_codex_without_rollout_parses_the_refusal_text() -> None:
    case = CODEX / "usage_limit_reached_secondary_paris"  # "try again at Dec 4th, 2026 1:21 PM"
    _, outcome = replay_codex(case, None)
    window = outcome.failure.usage_window if outcome.failure else None
    assert window is not None and window.source == "text" and window.exhausted
    # 1:21 PM in Europe/Paris is 12:21 UTC; the header's reset was 12:21:04 UTC.
    expected = utc(header_epoch(case, "x-codex-secondary-reset-at"))
    assert window.resets_at is not None
    assert abs((window.resets_at - expected).total_seconds()) < 60


def test_codex_stdout_token_count_record_is_read() -> None:
    """The older ``exec --json`` printed ``{"msg": {"type": "token_count", ...}}``
    (built from the protocol source, not captured)."""
    events: list[Event] = []
    parser = CodexStreamParser(lambda k, d: events.append(Event(k, d)), UsageLedger())
    rate_limits = {"primary": {"used_percent": 40, "window_minutes": 300, "resets_in_seconds": 60}}
    parser.feed_line(
        json.dumps({"id": "0", "msg": {"type": "token_count", "rate_limits": rate_limits}})
    )
    assert windows(events)[0]["utilization"] == pytest.approx(0.4)


# ---------------------------------------------------------------- text forms

NOW = datetime(2026, 12, 1, 12, 20, tzinfo=UTC)

TEXT_FORMS = [
    # (label, provider, text, local TZ, kind, reset)
    (
        "claude 2.1.332 (captured)",
        "claude",
        "You've hit your 5-hour limit \u00b7 resets 12:50pm (UTC)",
        None,
        "five_hour",
        datetime(2026, 12, 1, 12, 50, tzinfo=UTC),
    ),
    (
        "claude 2.1.332 (captured)",
        "claude",
        "You've hit your weekly limit \u00b7 resets Dec 4, 1:20pm (Europe/Paris)",
        None,
        "seven_day",
        datetime(2026, 12, 4, 12, 20, tzinfo=UTC),
    ),
    (
        "claude 2.1.185 (documented: claude-code#69995)",
        "claude",
        "You've hit your session limit \u00b7 resets 11:20am (Europe/Budapest)",
        None,
        "five_hour",
        datetime(2026, 12, 2, 10, 20, tzinfo=UTC),
    ),
    (
        "claude 1.0.x (documented: claude-code#2087)",
        "claude",
        "Claude AI usage limit reached|1749924000",
        None,
        "unknown",
        datetime(2025, 6, 14, 18, 0, tzinfo=UTC),
    ),
    (
        "claude 1.0.x (documented: claude-code#9236)",
        "claude",
        "Claude usage limit reached. Your limit will reset at 3pm (America/Santiago).",
        None,
        "unknown",
        datetime(2026, 12, 1, 18, 0, tzinfo=UTC),
    ),
    (
        "codex 0.171.0 (captured)",
        "codex",
        "You\u2019ve hit your usage limit. Try again at 1:51 PM.",
        "UTC",
        "unknown",
        datetime(2026, 12, 1, 13, 51, tzinfo=UTC),
    ),
    (
        "codex 0.39.0 (documented: codex#3899)",
        "codex",
        "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) "
        "or try again in 5 days 22 hours 11 minutes.",
        None,
        "unknown",
        NOW + timedelta(days=5, hours=22, minutes=11),
    ),
    (
        "gemini (documented: TerminalQuotaError)",
        "gemini",
        "You have exhausted your capacity on this model. Your quota will reset after 2h52m39s.",
        None,
        "daily",
        NOW + timedelta(hours=2, minutes=52, seconds=39),
    ),
    (
        "antigravity 1.2.11 (documented: OTHER-PROVIDERS.md)",
        "antigravity",
        'AGY_ERROR: {"message": "Your quota will reset after 2h3m4s."}',
        None,
        "daily",
        NOW + timedelta(hours=2, minutes=3, seconds=4),
    ),
    (
        "cursor (documented: cursor#3703), no reset time",
        "cursor",
        "Error: You've hit your usage limit",
        None,
        "unknown",
        None,
    ),
]


@pytest.mark.parametrize(("label", "provider", "text", "tz", "kind", "reset"), TEXT_FORMS)
def test_text_forms(
    label: str, provider: str, text: str, tz: str | None, kind: str, reset: datetime | None
) -> None:
    window = window_from_text(provider, text, now=NOW, local_tz=tz)
    assert window is not None, label
    assert (window.provider, window.kind, window.status, window.source) == (
        provider,
        kind,
        "rejected",
        "text",
    )
    assert window.resets_at == reset, label


def test_text_only_refusal_is_classified_with_its_window() -> None:
    """No structured record at all: the classifier reads the reset from the text."""
    failure = classify(
        "claude",
        Signals(message="You've hit your 5-hour limit \u00b7 resets 3pm (UTC)", http_status=429),
    )
    assert failure.failure_class == "provider_rate_limit" and not failure.retryable
    assert failure.usage_window is not None and failure.usage_window.source == "text"
    assert failure.usage_window.resets_at is not None


@pytest.mark.parametrize(
    "text",
    [
        "API Error: Server is temporarily limiting requests (not your usage limit)",
        "stream disconnected before completion: timed out",
        "Request timed out.",
    ],
)
def test_not_usage_limits(text: str) -> None:
    failure = classify("claude", Signals(message=text))
    assert failure.usage_window is None


def test_a_timeout_is_never_a_usage_limit(tmp_path: Path, fake_cli: FakeCli) -> None:
    """The CLI printed a rejected usage event and the refusal text, then hung: the
    runner's idle bound ends it as a timeout, and a timeout carries no window."""
    case = CLAUDE / "rejected_five_hour_utc"
    lines = (case / "stdout.jsonl").read_text(encoding="utf-8").splitlines()
    without_result = "\n".join(line for line in lines if '"type":"result"' not in line) + "\n"
    fake_cli.install("claude", [{"stdout": without_result, "exit_code": 1, "hang": True}])
    provider = get_provider("claude")
    request = SessionRequest(
        prompt_id="01",
        prompt_text="x",
        cwd=tmp_path,
        provider="claude",
        bounds=TimeBounds(idle_ms=800, run_deadline_ms=30_000),
    )
    handle = provider.start(request, lambda event: None)
    result = handle.wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "transport_timeout"
    assert result.failure.usage_window is None
    assert any(w.exhausted for w in result.windows)  # seen, but not what ended it
