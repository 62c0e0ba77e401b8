"""The failure classification table: what real agent CLIs print -> failure envelope.

One ordered table, :data:`RULES`, drives the classification of every real
provider. Each adapter extracts :class:`Signals` from its CLI's own output
(HTTP status, error type, result subtype, terminal reason, exit code, error
text, stderr) and calls :func:`classify`; the first matching rule wins.

The rules follow what the real binaries printed against local mock servers
(``../shared/agent-cli``: Claude Code 2.1.332 / 2.1.197, Codex CLI 0.171.0,
Gemini CLI 0.61.0) and, for Amp, Cursor and Antigravity, their documented or
third-party-captured output (``OTHER-PROVIDERS.md``; never run here).

Decisions (each is one row of the table, with its ``why``):

* **Quota / billing exhausted** (Codex ``Quota exceeded. Check your plan and
  billing details.``, Claude ``billing_error``, ``You've hit your 5-hour limit``
  and the 1.0.x ``Claude AI usage limit reached|<epoch>``, Cursor ``You've hit
  your usage limit``, Gemini ``exhausted your capacity``, agy ``quota will
  reset after ...``) -> ``provider_rate_limit`` with
  ``retryable=False``. The class stays the honest one (the provider refused
  for volume, usually an HTTP 429), but a retry inside the run cannot succeed
  before the plan resets, so no attempts are burned. The exhausted window
  rides on the envelope as ``usage_window`` (:mod:`.usage`): from the CLI's
  own record when its parser saw one (``Signals.usage``, the first check,
  ``provider_code`` ``usage_limit``), else parsed from the refusal's text
  (only for a failure already classified ``provider_rate_limit``: a timeout
  or a dropped connection is never a usage limit). The recovery policy waits
  for its reset (``recovery.usage_limit``).
* **Max turns** (Claude ``error_max_turns``, Amp ``error_max_turns``, Gemini
  exit 53) -> ``guardrail_blocked`` but *not* terminal and repairable: the
  user's own turn limit stopped the session, retrying the same prompt would
  hit it again, yet the work done so far may pass the verifier or be finished
  by a repair session.
* **Budget** (Claude ``error_max_budget_usd``) -> ``guardrail_blocked``,
  terminal: a spending limit must never be exceeded by further sessions.
* **Permission denials** -> ``approval_denied`` (terminal). A denial the agent
  worked around (Claude ``system/permission_denied`` followed by a nominal
  ``success``) is reported as a non-fatal ``error`` event only.
* **Codex HTTP 500** prints ``We're currently experiencing high demand``; it
  is classified by its status (``provider_runtime_claim``), not by its words.
* **Codex response.failed** prints ``stream disconnected before completion``
  -> ``protocol_error`` (resumable). ``Reconnecting... N/5`` lines are not
  failures at all; adapters never classify them.
* **Unknown session on resume** (Claude ``No conversation found``, Codex ``no
  rollout found``) -> ``unknown`` with ``resumable=False``: resuming again is
  useless, a fresh session may work.
* **Retry hints**: ``retry-after``/``Retry-After: N``, ``try again in 20s``,
  Google ``"retryDelay": "35s"``, agy ``reset after 2h3m4s`` become
  ``suggested_delay_ms``. Claude and Codex do not print the server's
  ``retry-after`` in their streams (Claude retries internally; its
  ``system/api_retry.retry_delay_ms`` is its own backoff and is kept in
  ``raw``, not suggested).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .failure import FailureEnvelope, envelope_for
from .usage import UsageWindow
from .usage_text import window_from_text

ALL = "*"
# Claude's terminal_reason values that say nothing about the cause.
_GENERIC_REASONS = frozenset({"api_error", "completed"})


@dataclass(frozen=True, slots=True)
class Signals:
    """Facts extracted from one failed session's own output.

    Attributes:
        message: the CLI's error text (result text, ``turn.failed`` message...).
        http_status: HTTP status the CLI reported (field or parsed from text).
        error_type: the CLI's error category (Claude ``api_error_type`` or the
            synthetic message ``error``; Google ``status``; agy ``error.type``).
        subtype: result subtype (``error_max_turns``...) or status word.
        terminal_reason: Claude ``terminal_reason``.
        exit_code: process exit status (``None`` if unknown).
        stderr: the tail of stderr, newline-joined.
        raw: JSON-safe facts kept in the envelope's ``raw`` (never secrets).
        usage: the usage window the CLI's own record says refused the session
            (a ``rejected`` :class:`~.usage.UsageWindow`), if any.
        local_tz: the IANA zone the CLI prints clock times in (the agent's
            ``TZ``), for a refusal text that names none; ``None``: the runner's.
    """

    message: str = ""
    http_status: int | None = None
    error_type: str | None = None
    subtype: str | None = None
    terminal_reason: str | None = None
    exit_code: int | None = None
    stderr: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)
    usage: UsageWindow | None = None
    local_tz: str | None = None

    @property
    def text(self) -> str:
        """Message and stderr together, for text rules."""
        return f"{self.message}\n{self.stderr}" if self.stderr else self.message


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the table.

    Attributes:
        providers: provider names the row applies to (``("*",)`` = all).
        failure_class: the class it assigns.
        why: one line of rationale (shown nowhere; it is the documentation).
        status: HTTP statuses that match.
        types: error types / subtypes / terminal reasons that match (lowercase).
        exit_codes: process exit codes that match.
        text: case-insensitive regex searched in message + stderr.
        overrides: envelope flag overrides (see :func:`envelope_for`).
        code: provider_code to report (default: the matched value).
    """

    providers: tuple[str, ...]
    failure_class: str
    why: str
    status: frozenset[int] = frozenset()
    types: frozenset[str] = frozenset()
    exit_codes: frozenset[int] = frozenset()
    text: re.Pattern[str] | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    code: str | None = None

    def match(self, provider: str, s: Signals) -> str | None:
        """Return the provider code to report when the row matches, else ``None``.

        The code is the row's ``code``, else the HTTP status, else the matched
        value (type, ``exit N`` or the matched text).
        """
        if ALL not in self.providers and provider not in self.providers:
            return None
        found = self._matched_value(s)
        if found is None:
            return None
        return self.code or (str(s.http_status) if s.http_status is not None else found)

    def _matched_value(self, s: Signals) -> str | None:
        if s.http_status is not None and s.http_status in self.status:
            return str(s.http_status)
        reason = None if s.terminal_reason in _GENERIC_REASONS else s.terminal_reason
        for value in (s.subtype, s.error_type, reason):
            if value and value.lower() in self.types:
                return value
        if s.exit_code is not None and s.exit_code in self.exit_codes:
            return f"exit {s.exit_code}"
        if self.text is not None:
            hit = self.text.search(s.text)
            if hit:
                return hit.group(0).lower()
        return None


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _rule(
    providers: str | tuple[str, ...],
    failure_class: str,
    why: str,
    *,
    status: tuple[int, ...] = (),
    types: tuple[str, ...] = (),
    exit_codes: tuple[int, ...] = (),
    text: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    code: str | None = None,
) -> Rule:
    return Rule(
        providers=(providers,) if isinstance(providers, str) else providers,
        failure_class=failure_class,
        why=why,
        status=frozenset(status),
        types=frozenset(t.lower() for t in types),
        exit_codes=frozenset(exit_codes),
        text=_rx(text) if text else None,
        overrides=dict(overrides or {}),
        code=code,
    )


NOT_RETRYABLE = {"retryable": False}

RULES: tuple[Rule, ...] = (
    # --- session limits the user configured -------------------------------------------
    _rule(
        ALL,
        "guardrail_blocked",
        "Claude --max-budget-usd reached: terminal, never spend past a budget",
        types=("error_max_budget_usd", "budget_exhausted"),
        code="error_max_budget_usd",
    ),
    _rule(
        ALL,
        "guardrail_blocked",
        "turn limit reached: same prompt would hit it again; work so far may verify or be repaired",
        types=("error_max_turns", "max_turns"),
        overrides={"terminal": False, "repairable": True},
        code="error_max_turns",
    ),
    _rule(
        "gemini",
        "guardrail_blocked",
        "Gemini CLI FatalTurnLimitedError exit code",
        exit_codes=(53,),
        overrides={"terminal": False, "repairable": True},
    ),
    # --- local launch problems: retrying cannot help ----------------------------------
    _rule(
        ALL,
        "launch_failed",
        "Claude refuses bypass as root without IS_SANDBOX=1; bad flags; bad local config",
        text=r"cannot be used with root/sudo|unexpected argument|unknown option|"
        r"flags? provided but not defined|flag needs an argument|Invalid auth method selected|"
        r"User message must be provided",
    ),
    _rule(
        "gemini",
        "launch_failed",
        "Gemini CLI FatalInputError / FatalSandboxError / FatalConfigError",
        exit_codes=(42, 44, 52),
    ),
    # --- resume of an unknown session ---------------------------------------------------
    _rule(
        ALL,
        "unknown",
        "resume id unknown to the CLI: resuming again is useless, a fresh session may work",
        text=r"No conversation found with session ID|no rollout found for thread id",
        overrides={"resumable": False},
        code="session_not_found",
    ),
    # --- permissions --------------------------------------------------------------------
    _rule(
        ALL,
        "approval_denied",
        "a tool or action needed approval nobody could give headless",
        types=("permission_denied",),
        text=r"permission check failed|user denied permission|needs approval|"
        r"Workspace Trust Required",
    ),
    # --- quota / billing: a 429 that waiting inside the run cannot fix ------------------
    _rule(
        ALL,
        "provider_rate_limit",
        "quota or billing exhausted: not retryable until the plan resets",
        types=("billing_error", "insufficient_quota", "quota_exhausted"),
        text=r"insufficient_quota|quota exceeded|check your plan and billing|billing details|"
        r"credit balance is too low|hit your (?:[\w-]+ )*limit|usage limit reached|"
        r"quota will reset|out of credits|exhausted your capacity",
        overrides=NOT_RETRYABLE,
        code="quota_exhausted",
    ),
    # --- model / request configuration (before auth: Codex 403 model_not_found) -------
    _rule(
        ALL,
        "provider_config_claim",
        "the model does not exist or is not available to this key",
        types=("model_not_found", "not_found_error"),
        text=r"issue with the selected model|model \S+ does not exist|model_not_found|"
        r"does not exist or you do not have access",
        code="model_not_found",
    ),
    _rule(
        ALL,
        "provider_config_claim",
        "request rejected as invalid (prompt too long, context window, bad params)",
        status=(400, 404, 413, 422),
        types=("invalid_request_error", "invalid_request", "prompt_too_long", "INVALID_ARGUMENT"),
        text=r"prompt is too long|context window|context_length_exceeded",
    ),
    # --- rate limit / capacity ----------------------------------------------------------
    _rule(
        ALL,
        "provider_rate_limit",
        "HTTP 429 / rate limit",
        status=(429,),
        types=("rate_limit", "rate_limit_error", "rate_limit_exceeded", "RESOURCE_EXHAUSTED"),
        text=r"\brate.?limit|too many requests|resource_exhausted",
    ),
    _rule(
        ALL,
        "provider_capacity",
        "HTTP 529 / 503 / overloaded / model at capacity",
        status=(503, 529),
        types=("overloaded", "overloaded_error", "UNAVAILABLE"),
        text=r"overloaded|at capacity|server_is_overloaded|service unavailable",
    ),
    # --- authentication -----------------------------------------------------------------
    _rule(
        ALL,
        "provider_auth_claim",
        "HTTP 401 / 403 / bad or missing credentials",
        status=(401, 403),
        types=(
            "authentication_error",
            "authentication_failed",
            "permission_error",
            "UNAUTHENTICATED",
            "PERMISSION_DENIED",
        ),
        text=r"invalid api key|incorrect api key|api key not valid|unauthorized|"
        r"authentication required|not logged in|failed to authenticate|please run '\w+ login'",
    ),
    _rule(
        "gemini",
        "provider_auth_claim",
        "Gemini CLI FatalAuthenticationError (41); 0.61.0 exited 145 on a 401",
        exit_codes=(41, 145),
    ),
    # --- server errors ------------------------------------------------------------------
    _rule(
        ALL,
        "provider_runtime_claim",
        "HTTP 5xx: the provider claims an internal error (Codex prints 'high demand' for 500)",
        status=(500, 502, 504),
        types=("api_error", "server_error", "INTERNAL"),
        text=r"internal server error|high demand|bad gateway",
    ),
    # --- transport ----------------------------------------------------------------------
    _rule(
        ALL,
        "transport_disconnect",
        "connection refused / reset / DNS: the endpoint was not reachable",
        types=("connection_failed",),
        text=r"connection refused|econnrefused|econnreset|connection reset|connection failed|"
        r"error sending request|enotfound|socket hang up|network is unreachable",
    ),
    _rule(
        ALL,
        "transport_timeout",
        "the CLI or the API reported a timeout",
        types=("timeout", "TIMEOUT", "DEADLINE_EXCEEDED"),
        text=r"timed out|\btimeout\b|deadline exceeded",
    ),
    _rule(
        ALL,
        "protocol_error",
        "stream broke mid-response (Codex response.failed, SSE error event)",
        text=r"stream disconnected|stream error|unexpected end of|invalid json|malformed",
    ),
    _rule(
        "gemini",
        "user_cancelled",
        "Gemini CLI FatalCancellationError",
        exit_codes=(130,),
    ),
)


_STATUS_PATTERNS = (
    re.compile(r"(?:unexpected status|last status:?|status code:?|API Error:?)\s*(\d{3})\b", re.I),
    re.compile(r"\((\d{3})\)"),
    re.compile(r'"code"\s*:\s*(\d{3})\b'),
    re.compile(r"\bstatus (\d{3})\b", re.I),
)


def http_status_from_text(text: str) -> int | None:
    """Find an HTTP status in CLI error text (``unexpected status 401``, ``(429)``...).

    Returns ``None`` when no 4xx/5xx status is found.
    """
    for pattern in _STATUS_PATTERNS:
        for found in pattern.finditer(text):
            value = int(found.group(1))
            if 400 <= value <= 599:
                return value
    return None


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)", re.I)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
_DELAY_PATTERNS = (
    re.compile(r"retry[- ]after[\"']?\s*[:=]\s*[\"']?(\d+(?:\.\d+)?)(?![\dhms])", re.I),
    re.compile(r"\"retryDelay\"\s*:\s*\"([\d.]+s)\"", re.I),
    re.compile(
        r"(?:try again in|retry in|retrying in|reset after|resets? in)\s+"
        r"((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+)",
        re.I,
    ),
)


def _duration_ms(text: str) -> int | None:
    total = 0.0
    matched = False
    for number, unit in _DURATION_PART.findall(text):
        total += float(number) * _UNIT_MS[unit.lower()]
        matched = True
    return int(total) if matched else None


def delay_from_text(text: str) -> int | None:
    """Parse a provider's retry hint into milliseconds.

    Understands ``retry-after: 30`` (seconds), ``"retryDelay": "35s"`` (Google
    RetryInfo), ``try again in 1m20s`` / ``in 500ms`` and agy's
    ``quota will reset after 2h3m4s``. Returns ``None`` without a hint.
    """
    for index, pattern in enumerate(_DELAY_PATTERNS):
        found = pattern.search(text)
        if found is None:
            continue
        if index == 0:
            return int(float(found.group(1)) * 1000)
        return _duration_ms(found.group(1))
    return None


def classify(provider: str, signals: Signals, *, default_class: str = "unknown") -> FailureEnvelope:
    """Classify a failed session through :data:`RULES`.

    Args:
        provider: the provider name (rules may be provider specific).
        signals: what the CLI printed.
        default_class: class when no rule matches (``unknown``).

    Returns:
        A :class:`FailureEnvelope` with the class defaults, the rule's
        overrides, ``provider_code`` and ``suggested_delay_ms`` from any retry
        hint in the text.
    """
    status = signals.http_status
    if status is None:
        status = http_status_from_text(signals.message)
        if status is not None:
            signals = _with_status(signals, status)
    message = _one_line(signals.message) or _one_line(signals.stderr) or "the agent CLI failed"
    raw: dict[str, Any] = {"provider": provider, **dict(signals.raw)}
    if signals.http_status is not None:
        raw.setdefault("http_status", signals.http_status)
    if signals.exit_code is not None:
        raw.setdefault("exit_code", signals.exit_code)
    delay = delay_from_text(signals.text)
    if signals.usage is not None and signals.usage.exhausted:
        raw["rule"] = "the CLI's own record says a usage window refused the session"
        return envelope_for(
            "provider_rate_limit",
            message,
            provider_code="usage_limit",
            suggested_delay_ms=delay,
            raw=raw,
            overrides=NOT_RETRYABLE,
            usage_window=signals.usage,
        )
    for rule in RULES:
        code = rule.match(provider, signals)
        if code is not None:
            raw["rule"] = rule.why
            window = None
            if rule.failure_class == "provider_rate_limit":
                window = window_from_text(provider, signals.text, local_tz=signals.local_tz)
            return envelope_for(
                rule.failure_class,
                message,
                provider_code=code,
                suggested_delay_ms=delay,
                raw=raw,
                overrides={**rule.overrides, **(NOT_RETRYABLE if window else {})},
                usage_window=window,
            )
    code = str(signals.exit_code) if signals.exit_code is not None else None
    return envelope_for(
        default_class, message, provider_code=code, suggested_delay_ms=delay, raw=raw
    )


def _with_status(signals: Signals, status: int) -> Signals:
    return replace(signals, http_status=status)


def _one_line(text: str, limit: int = 400) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "\u2026"
    return ""
