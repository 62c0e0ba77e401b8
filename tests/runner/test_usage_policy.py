"""The usage-limit rows of the recovery policy, pacing's gate, and failover plans (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.packet.models import RecoveryConfig
from prompt_runner.providers.failure import envelope_for
from prompt_runner.providers.usage import UsageWindow
from prompt_runner.runner.recovery import MAX_USAGE_WAITS, Budgets, decide
from prompt_runner.runner.usage_book import UsageBook
from prompt_runner.runner.usage_wait import gate
from tests.helpers.packets import make_packet

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def refusal(reset_in: float | None, kind: str = "five_hour") -> Any:
    resets = NOW + timedelta(seconds=reset_in) if reset_in is not None else None
    window = UsageWindow("claude", kind, "rejected", 1.0, resets)
    return envelope_for(
        "provider_rate_limit",
        "You've hit your 5-hour limit",
        provider_code="usage_limit",
        overrides={"retryable": False},
        usage_window=window,
    )


def config(**usage_limit: Any) -> RecoveryConfig:
    return RecoveryConfig.model_validate({"usage_limit": usage_limit})


def run(failure: Any, cfg: RecoveryConfig | None = None, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "config": cfg or config(),
        "failure": failure,
        "verifier_passed": False,
        "verifier_fault": False,
        "workspace_changed": False,
        "budgets": Budgets(),
        "now": NOW,
    }
    args.update(kw)
    return decide(**args)


def test_a_reset_within_max_wait_is_waited_for_plus_the_margin() -> None:
    decision = run(refusal(600))
    assert decision.action == "wait"
    assert decision.wait_until == NOW + timedelta(seconds=600, milliseconds=2000)
    assert decision.window.kind == "five_hour"
    assert "waiting until 2026-12-01T12:10:02.000Z" in decision.reason


def test_a_reset_already_past_waits_only_the_margin() -> None:
    decision = run(refusal(-5))
    assert decision.action == "wait" and decision.wait_until == NOW + timedelta(seconds=2)


@pytest.mark.parametrize(
    ("failure", "cfg", "why"),
    [
        (refusal(7 * 3600), config(), "beyond max_wait (6h)"),
        (refusal(3600), config(max_wait="30m"), "beyond max_wait (30m)"),
        (refusal(None), config(), "the provider gave no reset time"),
        (refusal(60), config(wait=False), "waiting is off (recovery.usage_limit.wait: false)"),
    ],
)
def test_otherwise_the_prompt_fails_naming_the_window_and_its_reset(
    failure: Any, cfg: RecoveryConfig, why: str
) -> None:
    decision = run(failure, cfg)
    assert decision.action == "fail" and decision.status == "failed"
    assert decision.reason.startswith("usage limit: claude five_hour window is exhausted (")
    assert why in decision.reason
    if failure.usage_window.resets_at is not None:
        assert "resets 2026-12-01T" in decision.reason
    else:
        assert "reset time unknown" in decision.reason


def test_waits_are_bounded_per_invocation() -> None:
    decision = run(refusal(60), budgets=Budgets(usage_waits=MAX_USAGE_WAITS))
    assert decision.action == "fail"
    assert f"it still refused after {MAX_USAGE_WAITS} waits" in decision.reason


def test_an_exhausted_provider_fails_over_when_a_target_is_left() -> None:
    decision = run(refusal(86_400), failover="codex (model gpt-5.5)")
    assert decision.action == "failover"
    assert decision.reason.endswith("failing over to codex (model gpt-5.5)")


def test_a_wait_beats_failover() -> None:
    assert run(refusal(60), failover="codex").action == "wait"


def test_capacity_retries_spent_fail_over() -> None:
    capacity = envelope_for("provider_capacity", "overloaded")
    spent = Budgets()
    spent.retries["provider_capacity"] = 5
    assert run(capacity, budgets=spent, failover="codex").action == "failover"
    assert run(capacity, budgets=spent).action == "fail"
    assert run(capacity, failover="codex").action == "retry"  # retries first


def test_a_timeout_is_never_a_wait() -> None:
    timeout = envelope_for("transport_timeout", "no output for 1500 ms (idle timeout)")
    assert run(timeout).action == "resume"


def test_a_passing_contract_completes_whatever_the_window() -> None:
    assert run(refusal(60), verifier_passed=True).action == "complete"


# ------------------------------------------------------------------ the gate before a session


def ctx_with(*windows: UsageWindow) -> Any:
    book = UsageBook()
    book.load(None)
    book.observe(windows)
    return SimpleNamespace(usage=book, store=SimpleNamespace(root=None))


def test_pacing_waits_for_a_nearly_spent_window() -> None:
    window = UsageWindow("claude", "five_hour", "warning", 0.95, NOW + timedelta(minutes=20))
    limit = config(pace_above=0.9).usage_limit
    wait = gate(ctx_with(window), "02", "claude", limit, NOW)
    assert wait is not None and wait.kind == "pace"
    assert wait.until == NOW + timedelta(minutes=20, seconds=2)
    assert gate(ctx_with(window), "02", "codex", limit, NOW) is None  # another provider
    assert gate(ctx_with(window), "02", "claude", config().usage_limit, NOW) is None  # off
    below = UsageWindow("claude", "five_hour", "warning", 0.85, NOW + timedelta(minutes=20))
    assert gate(ctx_with(below), "02", "claude", limit, NOW) is None
    far = UsageWindow("claude", "seven_day", "warning", 0.95, NOW + timedelta(days=3))
    assert gate(ctx_with(far), "02", "claude", limit, NOW) is None  # beyond max_wait


def test_a_known_exhausted_window_is_waited_for_before_any_session() -> None:
    """What a runner killed mid-wait left in state.json: the next run waits the rest."""
    window = UsageWindow("claude", "five_hour", "rejected", 1.0, NOW + timedelta(seconds=30))
    wait = gate(ctx_with(window), "01", "claude", config().usage_limit, NOW)
    assert wait is not None and wait.kind == "usage_limit"
    assert wait.until == NOW + timedelta(seconds=32)


# ------------------------------------------------------------------ config and failover plans


def test_defaults_keep_reference_packets_unchanged() -> None:
    dumped = RecoveryConfig().model_dump()
    assert dumped["usage_limit"] == {
        "wait": True,
        "max_wait": 6 * 3600 * 1000,
        "margin": 2000,
        "pace_above": None,
    }
    assert dumped["failover"] == [] and dumped["failover_sticky"] is False


def test_failover_targets_are_resolved_in_the_plan(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["a"]}}},
        manifest={
            "profile": None,
            "provider": "claude",
            "model": None,
            "codex_opts": {"skip_git_repo_check": False},  # reaches the failover target
            "recovery": {
                "failover": [{"provider": "codex", "model": "gpt-5.5", "reasoning_effort": "low"}]
            },
        },
    )
    plan = prompt_runner.plan(packet)
    pp = plan.prompts[0]
    assert pp.provider == "claude"
    (target,) = pp.failover
    assert (target.provider, target.model, target.reasoning_effort) == ("codex", "gpt-5.5", "low")
    assert target.provider_options["skip_git_repo_check"] is False
    assert pp.to_dict(committer="git")["failover"] == [{"provider": "codex", "model": "gpt-5.5"}]


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"provider": "nope"}, "recovery.failover[0].provider"),
        ({"model": "x"}, "recovery.failover[0].provider"),
        ({"provider": "codex", "verify": {}}, "recovery.failover[0].verify"),
    ],
)
def test_a_bad_failover_entry_names_its_key(
    tmp_path: Path, entry: dict[str, Any], key: str
) -> None:
    packet = make_packet(
        tmp_path, {"01": {"recovery": {"failover": [entry]}}}, manifest={"profile": None}
    )
    with pytest.raises(UserError) as info:
        prompt_runner.plan(packet)
    assert info.value.key == key
    assert "01_step.prompt.md" in str(info.value)
