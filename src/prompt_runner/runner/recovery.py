"""The recovery policy: after each session, decide what happens next (SPEC 3.4).

Everything here is a pure function of values -- the session's failure
envelope, the verifier report, whether the workspace changed, and the budgets
spent so far -- so every branch of the outcome matrix is testable without a
provider, and every branch terminates:

=====================================  ==========  =========================================
provider                               verifier    next
=====================================  ==========  =========================================
success                                pass        complete
success                                fail        repair while budget lasts, else fail
failure (not terminal/local)           pass        complete (``verifier_override``)
usage window exhausted, reset known    fail        wait for the reset (no budget spent), then
and within ``usage_limit.max_wait``                resume the session (else a fresh one)
usage window exhausted otherwise       fail        fail over to the next provider, else fail
                                                   naming the window and its reset time
retryable remote claim                 fail        retry with backoff, per-class budget
resumable transport failure            fail        resume the same session (resume budget),
                                                   then treated as retryable
capacity / rate limit, retries spent   fail        fail over to the next provider, if any
failure, budget spent / not retryable  fail        repair if the workspace changed (triggers)
terminal / local-deterministic         any         fail honestly
verifier fault / timeout               --          halt the run; the prompt is not failed
=====================================  ==========  =========================================

Budgets (our reading of SPEC 2.7, documented in the README): a class's retry
budget is ``retry.class_attempts[class]`` *retries* (falling back to
``retry.max_attempts`` for a class without an entry, and lowered by the
provider's ``suggested_max_attempts``); ``resume_attempts`` resumes per session
chain; ``repair.max_attempts`` repairs per prompt execution. Budgets are counted
per invocation of the prompt. A usage wait spends none of them; at most
:data:`MAX_USAGE_WAITS` waits per invocation, so a provider that keeps refusing
after its reset cannot keep a prompt waiting forever.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from ..packet.models import RecoveryConfig
from ..providers.failure import FailureEnvelope
from ..providers.usage import UsageWindow, iso_utc

Action = Literal[
    "complete", "retry", "resume", "repair", "repeat", "wait", "failover", "fail", "halt"
]

MAX_USAGE_WAITS = 5
"""Usage waits one prompt invocation may do before a refusal fails it."""
EXHAUSTIBLE = frozenset({"provider_capacity", "provider_rate_limit"})
"""Failure classes whose spent retries mean the provider is exhausted (failover)."""


@dataclass
class Budgets:
    """Recovery budgets spent so far for one prompt execution."""

    retries: Counter[str] = field(default_factory=Counter)
    resumes_in_chain: int = 0
    repairs: int = 0
    repeats: int = 0
    usage_waits: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "retries": dict(self.retries),
            "resumes_in_chain": self.resumes_in_chain,
            "repairs": self.repairs,
            "repeats": self.repeats,
            "usage_waits": self.usage_waits,
        }


@dataclass(frozen=True)
class Decision:
    """What the attempt loop does next.

    Attributes:
        action: the next step.
        reason: one human line explaining it (shown and recorded).
        delay_ms: wait before the next session (retries only), in ms.
        source: for ``complete``: ``verifier`` or ``verifier_override``.
        status: for ``fail``/``halt``: the prompt status to record.
        wait_until: for ``wait``: when the next session may start (aware UTC:
            the window's reset plus the margin).
        window: for ``wait``, and a ``failover`` or ``fail`` caused by an
            exhausted usage window: that window.
    """

    action: Action
    reason: str
    delay_ms: int = 0
    source: str | None = None
    status: str | None = None
    wait_until: datetime | None = None
    window: UsageWindow | None = None


def class_budget(config: RecoveryConfig, failure: FailureEnvelope) -> int:
    """Retries allowed for ``failure``'s class."""
    retry = config.retry
    budget = retry.class_attempts.get(failure.failure_class, retry.max_attempts)
    if failure.suggested_max_attempts is not None:
        budget = min(budget, failure.suggested_max_attempts)
    return budget


def backoff_ms(
    config: RecoveryConfig,
    retry_number: int,
    suggested_ms: int | None = None,
    *,
    rand: Callable[[], float] = random.random,
) -> int:
    """Delay before retry number ``retry_number`` (1-based), in ms.

    Exponential from ``base_delay_ms`` -- or from the provider's suggested delay
    (e.g. ``retry-after``) when larger -- doubling per retry, capped at
    ``max_delay_ms``; with ``jitter`` the result is uniform in the upper half
    ``[d/2, d]``.
    """
    retry = config.retry
    base = max(retry.base_delay_ms, suggested_ms or 0)
    delay = min(base * (2 ** max(0, retry_number - 1)), retry.max_delay_ms)
    if suggested_ms is not None and retry_number == 1:
        delay = min(max(suggested_ms, retry.base_delay_ms), retry.max_delay_ms)
    if retry.jitter and delay > 0:
        delay = int(delay / 2 + rand() * (delay / 2))
    return int(delay)


def decide(
    *,
    config: RecoveryConfig,
    failure: FailureEnvelope | None,
    verifier_passed: bool,
    verifier_fault: bool,
    workspace_changed: bool,
    budgets: Budgets,
    agent_owned: bool = False,
    max_repeats: int = 0,
    rand: Callable[[], float] = random.random,
    failover: str | None = None,
    now: datetime | None = None,
) -> Decision:
    """Apply the outcome matrix to one finished session.

    Args:
        config: the prompt's resolved recovery config.
        failure: the session's failure envelope, ``None`` for nominal success.
        verifier_passed: every contract item passed.
        verifier_fault: the verifier could not judge (fault or timeout).
        workspace_changed: the session changed a target repo.
        budgets: budgets spent so far (not modified here).
        agent_owned: the prompt is agent-owned (``incomplete: repeat``).
        max_repeats: fresh-session budget for agent-owned repeats.
        failover: the provider a ``failover`` would continue on (``"codex
            gpt-5.5"``), ``None`` when no failover target is left.
        now: the current time (aware; default now), for usage-window resets.

    Returns:
        The :class:`Decision`. The caller updates ``budgets``.
    """
    decision = settled(failure, verifier_passed=verifier_passed, verifier_fault=verifier_fault)
    if decision is not None:
        return decision
    if failure is None:
        return unmet_after_success(config, budgets, agent_owned, max_repeats)
    limited = usage_limited(config, failure, budgets, failover, now or datetime.now(UTC))
    if limited is not None:
        return limited
    return after_failure(config, failure, budgets, workspace_changed, rand, failover)


def usage_limited(
    config: RecoveryConfig,
    failure: FailureEnvelope,
    budgets: Budgets,
    failover: str | None,
    now: datetime,
) -> Decision | None:
    """The rows of a refusal for an exhausted usage window; ``None`` for any other
    failure (a timeout, a disconnect, an ordinary rate limit carry no window).

    The window's reset known and at most ``usage_limit.max_wait`` away: wait
    until then plus ``margin`` (no budget spent; at most :data:`MAX_USAGE_WAITS`
    per invocation). Otherwise -- no reset time, beyond ``max_wait``, waiting
    off, or still refused after the waits -- fail over when a target is left,
    else fail, naming the window and its reset.
    """
    window = failure.usage_window
    if window is None or not window.exhausted:
        return None
    limit = config.usage_limit
    ahead = window.seconds_to_reset(now)
    if not limit.wait:
        why = "waiting is off (recovery.usage_limit.wait: false)"
    elif ahead is None:
        why = "the provider gave no reset time"
    elif ahead * 1000 > limit.max_wait:
        why = f"that is beyond max_wait ({_duration(limit.max_wait)})"
    elif budgets.usage_waits >= MAX_USAGE_WAITS:
        why = f"it still refused after {budgets.usage_waits} waits"
    else:
        assert window.resets_at is not None
        until = max(window.resets_at, now) + timedelta(milliseconds=limit.margin)
        return Decision(
            "wait",
            f"{window.label()} is exhausted; waiting until {iso_utc(until)} "
            f"(its reset, {iso_utc(window.resets_at)}, plus {_duration(limit.margin)})",
            wait_until=until,
            window=window,
        )
    exhausted = f"{window.label()} is exhausted ({window.reset_text()}) and {why}"
    if failover is not None:
        return Decision("failover", f"{exhausted}; failing over to {failover}", window=window)
    return Decision("fail", f"usage limit: {exhausted}", status="failed", window=window)


def _duration(ms: int) -> str:
    """``6h``, ``1h30m``, ``2s``, ``500ms``: a duration of ``ms`` as the config writes it."""
    if ms < 1000:
        return f"{ms}ms"
    seconds = ms // 1000
    parts = [(seconds // 3600, "h"), (seconds % 3600 // 60, "m"), (seconds % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n) or "0s"


def settled(
    failure: FailureEnvelope | None, *, verifier_passed: bool, verifier_fault: bool
) -> Decision | None:
    """The rows no budget changes: a terminal or local-deterministic failure
    fails, a verifier fault halts, a passing contract completes. ``None``: the
    contract has unmet items and the budgets decide."""
    if failure is not None and failure.terminal:
        return Decision(
            "fail",
            f"{failure.failure_class} is terminal: {failure.message}",
            status="failed",
        )
    if failure is not None and failure.local_deterministic:
        return Decision(
            "fail",
            f"{failure.failure_class} is a local deterministic failure; retrying cannot help: "
            f"{failure.message}",
            status="failed",
        )
    if verifier_fault:
        return Decision(
            "halt",
            "the verifier could not judge the work (verifier fault); halting the run",
            status="verifier_fault",
        )
    if not verifier_passed:
        return None
    if failure is None:
        return Decision("complete", "the contract passes", source="verifier")
    return Decision(
        "complete",
        f"the provider reported {failure.failure_class} but the contract passes",
        source="verifier_override",
    )


def repairs_left(config: RecoveryConfig, budgets: Budgets) -> bool:
    """Repair is enabled and its budget is not spent."""
    return config.repair.enabled and budgets.repairs < config.repair.max_attempts


def unmet_after_success(
    config: RecoveryConfig, budgets: Budgets, agent_owned: bool, max_repeats: int
) -> Decision:
    """The session ended nominally but the contract has unmet items: an
    agent-owned prompt repeats while its budget lasts; another repairs (when
    the trigger is on) or fails as ``verification_failed``."""
    if agent_owned:
        if budgets.repeats < max_repeats:
            return Decision("repeat", "structurally incomplete; starting a fresh session")
        return Decision(
            "fail",
            f"structurally incomplete after {budgets.repeats} fresh session(s)",
            status="agent_owned_incomplete",
        )
    repair = config.repair
    if repairs_left(config, budgets) and repair.trigger_on_nominal_success_with_failed_verifier:
        return Decision("repair", "the session ended but the contract has unmet items")
    spent = " (repair budget spent)" if repair.enabled else " (repair disabled)"
    return Decision("fail", f"the contract has unmet items{spent}", status="verification_failed")


def after_failure(
    config: RecoveryConfig,
    failure: FailureEnvelope,
    budgets: Budgets,
    workspace_changed: bool,
    rand: Callable[[], float],
    failover: str | None = None,
) -> Decision:
    """The provider failed and the contract has unmet items: resume, retry with
    backoff, fail over from a provider whose capacity or rate-limit retries are
    spent, repair a changed workspace, or fail -- in that order, each while its
    budget lasts."""
    if failure.resumable and budgets.resumes_in_chain < config.resume_attempts:
        return Decision(
            "resume",
            f"{failure.failure_class}: resuming the same provider session "
            f"({budgets.resumes_in_chain + 1}/{config.resume_attempts})",
        )
    retryable = failure.retryable or failure.resumable
    if retryable:
        budget = class_budget(config, failure)
        used = budgets.retries[failure.failure_class]
        if used < budget:
            delay = backoff_ms(config, used + 1, failure.suggested_delay_ms, rand=rand)
            return Decision(
                "retry",
                f"{failure.failure_class}: retrying ({used + 1}/{budget})",
                delay_ms=delay,
            )
    if failover is not None and retryable and failure.failure_class in EXHAUSTIBLE:
        return Decision(
            "failover",
            f"{failure.failure_class}: retries spent, the provider is exhausted; "
            f"failing over to {failover}",
        )
    repair = config.repair
    trigger = (
        repair.trigger_on_retry_exhaustion_with_workspace_changes
        if retryable
        else repair.trigger_on_provider_failure_with_workspace_changes
    )
    if workspace_changed and repairs_left(config, budgets) and trigger and failure.repairable:
        why = "retries exhausted" if retryable else "provider failure"
        return Decision("repair", f"{failure.failure_class}: {why} with workspace changes")
    why = "retry budget spent" if retryable else "not retryable"
    return Decision("fail", f"{failure.failure_class} ({why}): {failure.message}", status="failed")
