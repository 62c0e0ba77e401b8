"""A usage-limit reset out of range -- ``resetsAt`` in seconds of year 10000 and
beyond, ``1e308``, a ``resets_in_seconds`` of ``1e20`` -- never raises and never
makes the run wait: the reset counts as unknown, so the prompt fails (or fails
over) as for a refusal with no reset time (README, Usage limits), and the log
says the reset the provider gave was out of range (providers/usage.py
``RESET_HORIZON``).

End to end: the fake ``claude`` / ``codex`` replay the real CLIs' captured
refusals (``tests/data/usage``) with the reset replaced, under a real
``prompt-runner run`` on a packet with a real git repo.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.providers.usage_events import claude_windows, codex_windows
from prompt_runner.providers.usage_text import window_from_text
from tests.runner.test_usage_limits import (
    CLAUDE,
    CODEX,
    NO_BUDGET,
    PROMPT,
    Run,
    claude_success,
)

YEAR_10000 = 253402300800
"""Epoch seconds of 10000-01-01T00:00:00Z: no datetime holds it (read as
milliseconds, it is 1978)."""


def claude_rejected_at(value: str) -> dict[str, Any]:
    """Claude Code 2.1.332 refused by its five-hour window, every ``resetsAt`` ``value``."""
    case = CLAUDE / "rejected_five_hour_utc"
    steps = json.loads((case / "steps.json").read_text(encoding="utf-8"))
    headers = steps[0]["headers"]
    text = (case / "stdout.jsonl").read_text(encoding="utf-8")
    for header in ("anthropic-ratelimit-unified-reset", "anthropic-ratelimit-unified-7d-reset"):
        text = text.replace(f'"resetsAt":{headers[header]}', f'"resetsAt":{value}')
    assert f'"resetsAt":{value}' in text
    return {"stdout": text, "exit_code": 1}


def codex_rejected_with(primary: str, codex_home: Path) -> dict[str, Any]:
    """Codex 0.171.0 refused (usage_limit_reached); its rollout's primary window
    says ``primary`` (JSON members replacing its ``resets_at``)."""
    case = CODEX / "usage_limit_reached_primary_utc"
    thread = json.loads((case / "stdout.jsonl").read_text().splitlines()[0])["thread_id"]
    steps = json.loads((case / "steps.json").read_text())
    reset = steps[0]["headers"]["x-codex-primary-reset-at"]
    rollout = (case / "rollout.jsonl").read_text(encoding="utf-8")
    assert f'"resets_at":{reset}' in rollout
    rollout = rollout.replace(f'"resets_at":{reset}', primary)
    day = codex_home / "sessions" / "2026" / "12" / "01"
    return {
        "case": str(case),
        "exit_code": 1,
        "writes": {str(day / f"rollout-2026-12-01T12-21-05-{thread}.jsonl"): rollout},
    }


@pytest.mark.parametrize(
    ("value", "given"), [(str(YEAR_10000), str(YEAR_10000)), ("1e308", "1e+308")]
)
def test_claude_reset_out_of_range_fails_at_once_saying_so(
    tmp_path: Path, value: str, given: str
) -> None:
    run = Run(
        tmp_path,
        [claude_rejected_at(value), claude_success()],
        PROMPT,
        {"recovery": {**NO_BUDGET, "usage_limit": {"max_wait": "7d", "margin": "200ms"}}},
    )
    started = time.monotonic()
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert time.monotonic() - started < 60
    assert "Traceback" not in proc.stderr
    assert len(run.invocations()) == 1  # no wait, no resume of a refusal it cannot time
    record = run.prompt()
    said = f"reset time unknown: resetsAt {given} is out of range"
    assert record["reason"].startswith(
        f"usage limit: claude five_hour window is exhausted ({said})"
    ), record["reason"]
    assert said in proc.stdout
    attempt = record["attempts"][0]
    assert attempt["decision"] == "fail"
    window = attempt["failure"]["usage_window"]
    assert window["resets_at"] is None and window["reset_given"] == f"resetsAt {given}"
    assert record.get("usage_wait") is None and run.status().get("waiting_until") is None


def test_codex_resets_in_seconds_out_of_range_fails_over_instead_of_raising(
    tmp_path: Path,
) -> None:
    home = tmp_path / "codex_home"
    run = Run(
        tmp_path,
        [codex_rejected_with('"resets_in_seconds":1e20', home), claude_success()],
        PROMPT,
        {
            "provider": "codex",
            "model": "gpt-5.5",
            "recovery": {**NO_BUDGET, "failover": [{"provider": "claude"}]},
        },
    )
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    record = run.prompt()
    first = record["attempts"][0]
    assert first["decision"] == "failover"
    window = first["failure"]["usage_window"]
    assert window["kind"] == "five_hour" and window["resets_at"] is None
    assert window["reset_given"] == "resets_in_seconds 1e+20"
    assert "reset time unknown: resets_in_seconds 1e+20 is out of range" in proc.stdout
    assert record["providers"] == ["codex", "claude"] and record["status"] == "completed"


# ------------------------------------------------------------------ the parsers alone

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "value", [YEAR_10000, YEAR_10000 * 1000, 10**20, 1e308, float("inf"), float("nan"), 99999999999]
)
def test_a_claude_reset_out_of_range_is_unknown_and_named(value: float) -> None:
    (window,) = claude_windows(
        {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": value}, now=NOW
    )
    assert window.resets_at is None and window.reset_given is not None
    assert window.reset_text().endswith("is out of range")
    assert window.to_dict()["reset_given"] == window.reset_given


@pytest.mark.parametrize("value", [1e12, 1e20, -1e20, float("inf"), float("nan")])
def test_a_codex_relative_reset_out_of_range_never_raises(value: float) -> None:
    (window,) = codex_windows(
        {"primary": {"used_percent": 100, "window_minutes": 300, "resets_in_seconds": value}},
        now=NOW,
    )
    assert window.exhausted and window.resets_at is None
    assert window.reset_given is not None and window.reset_given.startswith("resets_in_seconds ")


@pytest.mark.parametrize(
    "text",
    [
        "You've hit your usage limit. try again in 99999999999 days",
        "You have exhausted your capacity on this model. Your quota will reset after "
        "99999999999999h.",
        "Claude AI usage limit reached|9999999999999",
        "You've hit your usage limit. ... try again at Dec 4th, 9999 1:21 PM.",
        "You've hit your usage limit. ... try again at Dec 4th, 2999 1:21 PM.",
    ],
)
def test_a_text_reset_out_of_range_never_raises(text: str) -> None:
    window = window_from_text("codex", text, now=NOW, local_tz="UTC")
    assert window is not None and window.exhausted and window.resets_at is None
    assert window.reset_text().startswith("reset time unknown: '") and "out of range" in (
        window.reset_text()
    )


def test_a_clock_time_on_the_last_day_a_date_holds_never_raises() -> None:
    last = datetime(9999, 12, 31, 23, 0, tzinfo=UTC)
    window = window_from_text("claude", "You've hit your 5-hour limit · resets 1am (UTC)", now=last)
    assert window is not None and window.resets_at is None


def test_a_reset_within_the_horizon_is_kept() -> None:
    from prompt_runner.providers.usage import RESET_HORIZON

    soon = NOW + timedelta(hours=3)
    (window,) = claude_windows(
        {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": soon.timestamp()}, now=NOW
    )
    assert window.resets_at == soon and window.reset_given is None
    ahead = NOW + RESET_HORIZON - timedelta(days=1)
    (monthly,) = codex_windows(
        {"primary": {"used_percent": 100, "window_minutes": 43200, "resets_at": ahead.timestamp()}},
        now=NOW,
    )
    assert monthly.resets_at == ahead


def test_a_recorded_window_past_what_a_date_holds_in_utc_reads_as_no_reset() -> None:
    from prompt_runner.providers.usage import UsageWindow

    recorded = {"provider": "claude", "kind": "five_hour", "status": "rejected"}
    window = UsageWindow.from_dict({**recorded, "resets_at": "9999-12-31T23:59:59-01:00"})
    assert window is not None and window.resets_at is None
