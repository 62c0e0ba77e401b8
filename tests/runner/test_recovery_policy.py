"""The recovery policy as values: every branch of the outcome matrix, budgets, backoff."""

from __future__ import annotations

from prompt_runner.packet.models import RecoveryConfig
from prompt_runner.providers.failure import envelope_for
from prompt_runner.runner.recovery import Budgets, backoff_ms, class_budget, decide


def cfg(**raw: object) -> RecoveryConfig:
    return RecoveryConfig.model_validate(raw)


def run(failure=None, passed=False, fault=False, changed=False, budgets=None, config=None, **kw):  # type: ignore[no-untyped-def]
    return decide(
        config=config or cfg(),
        failure=failure,
        verifier_passed=passed,
        verifier_fault=fault,
        workspace_changed=changed,
        budgets=budgets or Budgets(),
        rand=lambda: 0.5,
        **kw,
    )


def test_success_and_pass_completes() -> None:
    d = run(passed=True)
    assert (d.action, d.source) == ("complete", "verifier")


def test_success_and_fail_repairs_then_fails() -> None:
    assert run().action == "repair"
    spent = Budgets(repairs=2)
    d = run(budgets=spent)
    assert (d.action, d.status) == ("fail", "verification_failed")
    assert "repair budget spent" in d.reason
    off = run(config=cfg(repair={"enabled": False}))
    assert off.action == "fail" and "repair disabled" in off.reason


def test_failure_with_passing_verifier_is_an_override() -> None:
    d = run(envelope_for("provider_runtime_claim", "late"), passed=True)
    assert (d.action, d.source) == ("complete", "verifier_override")


def test_terminal_and_local_deterministic_fail_even_when_verifier_passes() -> None:
    for cls in ("approval_denied", "guardrail_blocked", "user_cancelled"):
        d = run(envelope_for(cls, "no"), passed=True)
        assert (d.action, d.status) == ("fail", "failed")
    local = envelope_for("cli_confirmation_mismatch", "model mismatch")
    assert run(local, passed=True).action == "fail"
    overridden = envelope_for(
        "provider_runtime_claim", "x", overrides={"local_deterministic?": True, "retryable?": True}
    )
    assert run(overridden).action == "fail"


def test_verifier_fault_halts() -> None:
    d = run(fault=True)
    assert (d.action, d.status) == ("halt", "verifier_fault")
    assert run(envelope_for("provider_capacity", "x"), fault=True).action == "halt"


def test_retryable_claims_retry_within_the_class_budget() -> None:
    config = cfg(
        retry={"class_attempts": {"provider_capacity": 2}, "base_delay_ms": 100, "jitter": False}
    )
    failure = envelope_for("provider_capacity", "busy")
    budgets = Budgets()
    assert run(failure, config=config, budgets=budgets).action == "retry"
    budgets.retries["provider_capacity"] = 2
    d = run(failure, config=config, budgets=budgets)
    assert d.action == "fail" and "retry budget spent" in d.reason
    d = run(failure, config=config, budgets=budgets, changed=True)
    assert d.action == "repair" and "retries exhausted" in d.reason


def test_class_without_entry_falls_back_to_max_attempts_and_suggestion_lowers_it() -> None:
    config = cfg(retry={"max_attempts": 4, "class_attempts": {}})
    assert class_budget(config, envelope_for("unknown", "?")) == 4
    lowered = envelope_for("provider_rate_limit", "x", suggested_max_attempts=1)
    assert class_budget(cfg(), lowered) == 1


def test_transport_failures_resume_then_retry() -> None:
    failure = envelope_for("transport_disconnect", "reset")
    assert run(failure).action == "resume"
    d = run(failure, budgets=Budgets(resumes_in_chain=2))
    assert d.action == "retry"
    exhausted = Budgets(resumes_in_chain=2)
    exhausted.retries["transport_disconnect"] = 4
    assert run(failure, budgets=exhausted).action == "fail"


def test_non_retryable_failure_with_changes_repairs_by_trigger() -> None:
    failure = envelope_for("provider_runtime_claim", "x", overrides={"retryable": False})
    assert run(failure, changed=True).action == "repair"
    no_trigger = cfg(repair={"trigger_on_provider_failure_with_workspace_changes": False})
    assert run(failure, changed=True, config=no_trigger).action == "fail"
    assert run(failure, changed=False).action == "fail"


def test_agent_owned_repeats_until_budget() -> None:
    assert run(agent_owned=True, max_repeats=2).action == "repeat"
    d = run(agent_owned=True, max_repeats=2, budgets=Budgets(repeats=2))
    assert (d.action, d.status) == ("fail", "agent_owned_incomplete")


def test_backoff_is_exponential_capped_with_upper_half_jitter() -> None:
    no_jitter = cfg(retry={"base_delay_ms": 1000, "max_delay_ms": 5000, "jitter": False})
    assert [backoff_ms(no_jitter, n) for n in (1, 2, 3, 4)] == [1000, 2000, 4000, 5000]
    jitter = cfg(retry={"base_delay_ms": 1000, "max_delay_ms": 30000, "jitter": True})
    assert backoff_ms(jitter, 1, rand=lambda: 0.0) == 500
    assert backoff_ms(jitter, 1, rand=lambda: 0.999) == 999
    assert backoff_ms(no_jitter, 1, suggested_ms=3000) == 3000
    assert backoff_ms(no_jitter, 1, suggested_ms=60000) == 5000
    zero = cfg(retry={"base_delay_ms": 0, "max_delay_ms": 0})
    assert backoff_ms(zero, 3) == 0


def test_retry_sleeps_through_the_injected_clock(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from prompt_runner import api
    from tests.helpers.packets import make_packet

    err = {"error": {"kind": "provider_rate_limit", "message": "429"}}
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [err, err, {"writes": [{"path": "x.txt", "text": "x"}]}]},
                "verify": {"files_exist": ["x.txt"]},
            }
        },
        manifest={
            "recovery": {"retry": {"base_delay_ms": 1000, "max_delay_ms": 1500, "jitter": True}}
        },
    )
    slept: list[float] = []
    result = api.run(packet, sleep=slept.append, rand=lambda: 1.0)
    assert result.exit_code == 0
    assert slept == [1.0, 1.5]
