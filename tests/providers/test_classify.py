"""The classification table itself: retry hints, ordering, decisions and defaults."""

from __future__ import annotations

import pytest

from prompt_runner.providers.classify import (
    RULES,
    Signals,
    classify,
    delay_from_text,
    http_status_from_text,
)
from prompt_runner.providers.failure import FAILURE_CLASSES


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("retry-after: 30", 30_000),
        ('{"Retry-After": "2"}', 2_000),
        ("Rate limit reached. Please try again in 20s.", 20_000),
        ("Please try again in 1m30s", 90_000),
        ("try again in 450ms", 450),
        ('"details":[{"retryDelay": "35s"}]', 35_000),
        ("AGY_ERROR: Your quota will reset after 2h3m4s.", 7_384_000),
        ("try again in a moment", None),
        ("no hint here", None),
    ],
)
def test_delay_from_text(text: str, ms: int | None) -> None:
    assert delay_from_text(text) == ms


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("unexpected status 401 Unauthorized: Incorrect API key", 401),
        ("exceeded retry limit, last status: 429 Too Many Requests", 429),
        ("API Error: Request rejected (429) · too many", 429),
        ('[API Error: {"error":{"code":401,"message":"x"}}]', 401),
        ("check your inference gateway (127.0.0.1:35789).", None),
        ("API Error: 529 Overloaded.", 529),
        ("nothing", None),
    ],
)
def test_http_status_from_text(text: str, status: int | None) -> None:
    assert http_status_from_text(text) == status


def test_retry_after_becomes_suggested_delay() -> None:
    env = classify("codex", Signals(message="429 Too Many Requests; retry-after: 12"))
    assert env.failure_class == "provider_rate_limit"
    assert env.retryable and env.remote_claim
    assert env.suggested_delay_ms == 12_000


def test_quota_is_not_retryable_but_keeps_the_reset_time() -> None:
    env = classify(
        "antigravity",
        Signals(message='AGY_ERROR: {"message": "Your quota will reset after 1h."}', exit_code=3),
    )
    assert env.failure_class == "provider_rate_limit"
    assert env.provider_code == "quota_exhausted"
    assert not env.retryable
    assert env.suggested_delay_ms == 3_600_000


def test_claude_billing_error_type_is_quota() -> None:
    env = classify(
        "claude", Signals(message="Credit balance is too low", error_type="billing_error")
    )
    assert env.provider_code == "quota_exhausted" and not env.retryable


def test_generic_terminal_reason_does_not_decide() -> None:
    env = classify(
        "claude",
        Signals(
            message="API Error: Connection refused",
            error_type="connection_failed",
            terminal_reason="api_error",
        ),
    )
    assert env.failure_class == "transport_disconnect"


def test_unmatched_failure_is_unknown_with_exit_code() -> None:
    env = classify("codex", Signals(message="something odd", exit_code=7))
    assert env.failure_class == "unknown"
    assert env.provider_code == "7"
    assert env.retryable and not env.remote_claim


def test_empty_message_falls_back_to_stderr_line() -> None:
    env = classify("amp", Signals(message="", stderr="\nError: socket hang up\n"))
    assert env.message == "Error: socket hang up"
    assert env.failure_class == "transport_disconnect"


def test_every_rule_names_a_real_class_and_a_reason() -> None:
    for rule in RULES:
        assert rule.failure_class in FAILURE_CLASSES
        assert rule.why


def test_provider_specific_rules_do_not_leak() -> None:
    # Exit 41 means "auth" only for Gemini CLI.
    assert classify("gemini", Signals(exit_code=41)).failure_class == "provider_auth_claim"
    assert classify("codex", Signals(exit_code=41)).failure_class == "unknown"
