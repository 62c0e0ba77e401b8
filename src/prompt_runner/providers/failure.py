"""The failure envelope: a provider failure as a value (SPEC 4).

The runner's recovery policy reads only the envelope, never provider output,
so every provider -- simulated or real -- must classify into these classes.
The default flags of each class live in :data:`CLASS_DEFAULTS`, the one table
that says which failures are retryable, resumable, repairable, terminal or
local-deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from .usage import UsageWindow

ReportedClass = Literal[
    "provider_capacity",
    "provider_rate_limit",
    "provider_auth_claim",
    "provider_config_claim",
    "provider_runtime_claim",
    "protocol_error",
    "transport_disconnect",
    "transport_timeout",
    "approval_denied",
    "guardrail_blocked",
    "user_cancelled",
]
"""The classes a provider's session reports; a simulated step's ``error.kind``
takes exactly these (SPEC 2.9). :data:`FAILURE_CLASSES` adds the runner's own."""

FAILURE_CLASSES: tuple[str, ...] = (
    *get_args(ReportedClass),
    "cli_confirmation_missing",
    "cli_confirmation_mismatch",
    "launch_failed",
    "unknown",
)

RETRYABLE_CLASSES = frozenset(
    {
        "provider_capacity",
        "provider_rate_limit",
        "provider_auth_claim",
        "provider_config_claim",
        "provider_runtime_claim",
        "unknown",
    }
)
RESUMABLE_CLASSES = frozenset({"protocol_error", "transport_disconnect", "transport_timeout"})
TERMINAL_CLASSES = frozenset({"approval_denied", "guardrail_blocked", "user_cancelled"})
LOCAL_DETERMINISTIC_CLASSES = frozenset(
    {"cli_confirmation_missing", "cli_confirmation_mismatch", "launch_failed"}
)


@dataclass(frozen=True, slots=True)
class FailureEnvelope:
    """A classified provider failure.

    Attributes:
        failure_class: one of :data:`FAILURE_CLASSES` (serialised as ``class``).
        retryable: a fresh session may succeed.
        resumable: the same provider session may be resumed.
        repairable: a repair session may fix the workspace.
        local_deterministic: retrying cannot help (wins over ``retryable``).
        remote_claim: the provider *claims* a remote cause (capacity, auth...).
        terminal: fail honestly even if the files happen to exist.
        provider_code: the provider's own code (HTTP status, subtype, exit code).
        suggested_delay_ms: the provider's suggested wait (``retry-after``), ms.
        suggested_max_attempts: the provider's suggested retry budget.
        message: one human line.
        raw: the provider output the classification was made from (never secrets).
        usage_window: the exhausted usage window of a quota refusal (``rejected``,
            with its reset time when the provider said it; see :mod:`.usage`),
            ``None`` for every other failure.
    """

    failure_class: str
    message: str
    retryable: bool = False
    resumable: bool = False
    repairable: bool = True
    local_deterministic: bool = False
    remote_claim: bool = False
    terminal: bool = False
    provider_code: str | None = None
    suggested_delay_ms: int | None = None
    suggested_max_attempts: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    usage_window: UsageWindow | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form; the class is under ``class``."""
        return {
            "class": self.failure_class,
            "message": self.message,
            "retryable": self.retryable,
            "resumable": self.resumable,
            "repairable": self.repairable,
            "local_deterministic": self.local_deterministic,
            "remote_claim": self.remote_claim,
            "terminal": self.terminal,
            "provider_code": self.provider_code,
            "suggested_delay_ms": self.suggested_delay_ms,
            "suggested_max_attempts": self.suggested_max_attempts,
            "raw": dict(self.raw),
            "usage_window": self.usage_window.to_dict() if self.usage_window else None,
        }


def envelope_for(
    failure_class: str,
    message: str,
    *,
    provider_code: str | None = None,
    suggested_delay_ms: int | None = None,
    suggested_max_attempts: int | None = None,
    raw: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    usage_window: UsageWindow | None = None,
) -> FailureEnvelope:
    """Build an envelope with the class defaults, then apply explicit overrides.

    Args:
        failure_class: a class name; unknown names become ``unknown``.
        overrides: flag overrides as written in packets, e.g. a simulate
            ``error.recovery`` map. Keys may carry the reference system's ``?``
            suffix (``retryable?``) and ``resumeable`` spelling; ``class``
            replaces the class.
    """
    cls = failure_class if failure_class in FAILURE_CLASSES else "unknown"
    env = FailureEnvelope(
        failure_class=cls,
        message=message,
        retryable=cls in RETRYABLE_CLASSES,
        resumable=cls in RESUMABLE_CLASSES,
        repairable=cls not in TERMINAL_CLASSES and cls not in LOCAL_DETERMINISTIC_CLASSES,
        local_deterministic=cls in LOCAL_DETERMINISTIC_CLASSES,
        remote_claim=cls in RETRYABLE_CLASSES and cls != "unknown",
        terminal=cls in TERMINAL_CLASSES,
        provider_code=provider_code,
        suggested_delay_ms=suggested_delay_ms,
        suggested_max_attempts=suggested_max_attempts,
        raw=dict(raw or {}),
        usage_window=usage_window,
    )
    if overrides:
        env = apply_overrides(env, overrides)
    return env


_FLAG_ALIASES = {
    "retryable": "retryable",
    "resumable": "resumable",
    "resumeable": "resumable",
    "repairable": "repairable",
    "local_deterministic": "local_deterministic",
    "remote_claim": "remote_claim",
    "terminal": "terminal",
}


OVERRIDE_KEYS = ("class", *_FLAG_ALIASES, "suggested_delay_ms", "suggested_max_attempts")
"""The keys an overrides map (a simulate ``error.recovery``) may hold; a flag may
carry the reference system's ``?`` suffix."""


def override_problem(key: object, value: object) -> str | None:
    """Why ``key: value`` is no entry :func:`apply_overrides` applies (a sentence
    naming the key and what it takes), or ``None`` when it is one."""
    name = str(key).rstrip("?")
    if name not in OVERRIDE_KEYS:
        return f"unknown key {key!r}; the keys are {', '.join(OVERRIDE_KEYS)}"
    if name == "class":
        if value not in FAILURE_CLASSES:
            return f"class {value!r} is no failure class; use one of {', '.join(FAILURE_CLASSES)}"
    elif name in _FLAG_ALIASES:
        if not isinstance(value, bool):
            return f"{key} must be true or false (got {value!r})"
    elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"{key} must be a whole number, 0 or more (got {value!r})"
    return None


def apply_overrides(env: FailureEnvelope, overrides: Mapping[str, Any]) -> FailureEnvelope:
    """Return ``env`` with flag overrides applied (see :func:`envelope_for`)."""
    changes: dict[str, Any] = {}
    for key, value in overrides.items():
        name = str(key).rstrip("?")
        if name == "class":
            cls = str(value)
            changes["failure_class"] = cls if cls in FAILURE_CLASSES else "unknown"
        elif name in _FLAG_ALIASES:
            changes[_FLAG_ALIASES[name]] = bool(value)
        elif name in ("suggested_delay_ms", "suggested_max_attempts"):
            changes[name] = int(value)
    return replace(env, **changes)
