"""Usage windows: what a provider said about the plan's usage limits, as one value.

Every agent CLI that sells a plan rather than tokens refuses work once a window
of the plan is spent (Claude's five-hour and weekly limits, Codex's primary and
secondary windows, Gemini's daily quota...). :class:`UsageWindow` is that fact
whatever the CLI: which window, whether work is refused, how much of it is
used, and when it resets. The recovery policy reads only this value (carried
on a :class:`~.failure.FailureEnvelope` as ``usage_window``, and on a
:class:`~.base.SessionResult` as ``windows``), never the CLI's words.

The structured records are read by :mod:`.usage_events`, the text forms by
:mod:`.usage_text`. Sources, most trusted first (``source``):

``event``
    A structured record of the CLI's own stream:

    * Claude Code's stream-json ``rate_limit_event``
      (``rate_limit_info``: ``status`` ``allowed|allowed_warning|rejected``,
      ``resetsAt`` epoch seconds, ``rateLimitType``, ``utilization``, and
      ``unifiedWindows`` per window), and the same ``rate_limit_info`` in a
      refused request's ``api_error_params`` (``api_error:
      "usage_limit_reached"``). Printed by the real Claude Code 2.1.332 when
      the server sends Anthropic's ``anthropic-ratelimit-unified-*`` response
      headers (captured against our mock: ``tests/data/usage/claude-2.1.332``).
    * Codex's ``token_count`` events (``rate_limits.primary`` /
      ``secondary``: ``used_percent``, ``window_minutes``, ``resets_at`` epoch
      seconds or the older ``resets_in_seconds``). Codex 0.171.0 writes them
      to the session's rollout file, not to ``exec --json`` stdout (captured:
      ``tests/data/usage/codex-0.171.0``); a ``token_count`` line on stdout, as
      the pre-0.30 ``exec --json`` printed, is read the same way (built from
      the openai/codex protocol source, not captured).
``text``
    The CLI's error text, when no record says it (:func:`window_from_text`):

    * Claude Code 2.1.x ``You've hit your 5-hour limit · resets 12:50pm (UTC)``
      and ``... weekly limit · resets Dec 4, 1:20pm (Europe/Paris)`` (captured),
      the 1.0.x ``Claude AI usage limit reached|<epoch>`` and ``Claude usage
      limit reached. Your limit will reset at 3pm (America/Santiago).`` (from
      anthropics/claude-code issue reports #2087, #9236, #11429);
    * Codex 0.171.0 ``You've hit your usage limit. ... try again at 12:51 PM.``
      / ``try again at Dec 4th, 2026 1:21 PM.`` (captured; the CLI's local
      time, read in the agent's ``TZ``) and the pre-0.40 ``... try again in 5
      days 22 hours 11 minutes.`` (openai/codex issues #3031, #3899);
    * Gemini CLI ``You have exhausted your capacity on this model. Your quota
      will reset after 2h52m39s.`` and Antigravity ``Your quota will reset
      after 2h3m4s.`` (third-party captures quoted in OTHER-PROVIDERS.md);
    * a quota refusal with no reset time at all (Cursor ``You've hit your usage
      limit``, Codex ``Quota exceeded. Check your plan and billing details.``):
      a rejected window whose ``resets_at`` is unknown.

A timeout, a dropped connection or a server error is never a usage window:
:func:`window_from_text` is only asked about failures already classified as
``provider_rate_limit``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

Status = Literal["allowed", "warning", "rejected"]
Source = Literal["event", "header", "text"]
STATUSES: tuple[str, ...] = ("allowed", "warning", "rejected")

RESET_FLOOR = datetime(2001, 9, 9, 1, 46, 40, tzinfo=UTC)
"""The earliest reset taken as one (epoch 10**9 s): an earlier moment is a misread
value (a year-10000 ``resetsAt`` in seconds read as milliseconds lands in 1978)."""
RESET_HORIZON = timedelta(days=366)
"""The furthest ahead of now a reset is taken as one: no plan's window is longer
(Codex's longest is monthly). A reset further ahead -- or one no date can hold,
year 10000 and beyond -- is out of range: the window's reset counts as unknown
(``resets_at`` ``None``, ``reset_given`` saying what the provider gave), so the
prompt fails or fails over as for a refusal with no reset time (README, Usage
limits), and never waits for it."""


@dataclass(frozen=True, slots=True)
class UsageWindow:
    """One usage window of a provider's plan, as last reported.

    Attributes:
        provider: the provider name (``claude``, ``codex``...).
        kind: the window: ``five_hour``, ``seven_day`` (``seven_day_opus``...),
            ``daily``, ``monthly``, ``credits``, ``overage``, or ``unknown``.
        status: ``allowed``, ``warning`` (past a warning threshold) or
            ``rejected`` (the provider refuses work until it resets).
        utilization: the used fraction, 0..1 (may pass 1), when known.
        resets_at: when the window resets (aware, UTC), when known.
        source: ``event`` (a structured record), ``header`` or ``text``.
        window_minutes: the window's length in minutes, when the provider says.
        reset_given: the reset the provider gave when it is out of range
            (:data:`RESET_HORIZON`), as it gave it (``resetsAt 253402300800``,
            ``'try again in 99999999999 days'``); ``resets_at`` is ``None`` then.
    """

    provider: str
    kind: str
    status: Status
    utilization: float | None = None
    resets_at: datetime | None = None
    source: Source = "event"
    window_minutes: int | None = None
    reset_given: str | None = None

    @property
    def exhausted(self) -> bool:
        """The provider refuses work in this window until it resets."""
        return self.status == "rejected"

    def seconds_to_reset(self, now: datetime) -> float | None:
        """Seconds from ``now`` (aware) until the reset; ``None`` when unknown."""
        if self.resets_at is None:
            return None
        return (self.resets_at - now).total_seconds()

    def label(self) -> str:
        """``claude five_hour window`` (``claude usage window`` when the kind is
        unknown) -- how messages name it."""
        if self.kind == "unknown":
            return f"{self.provider} usage window"
        return f"{self.provider} {self.kind} window"

    def reset_text(self) -> str:
        """``resets 2026-12-01T12:50:00Z``, ``reset time unknown``, or ``reset time
        unknown: resetsAt 253402300800 is out of range`` (:attr:`reset_given`)."""
        if self.resets_at is None and self.reset_given is not None:
            return f"reset time unknown: {self.reset_given} is out of range"
        if self.resets_at is None:
            return "reset time unknown"
        return f"resets {iso_utc(self.resets_at)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``resets_at`` as ISO-8601 UTC with ``Z``; ``reset_given``
        only when set)."""
        out: dict[str, Any] = {
            "provider": self.provider,
            "kind": self.kind,
            "status": self.status,
            "utilization": self.utilization,
            "resets_at": iso_utc(self.resets_at) if self.resets_at else None,
            "source": self.source,
            "window_minutes": self.window_minutes,
        }
        if self.reset_given is not None:
            out["reset_given"] = self.reset_given
        return out

    @classmethod
    def from_dict(cls, data: Any) -> UsageWindow | None:
        """The window :meth:`to_dict` wrote, or ``None`` for anything else."""
        if not isinstance(data, Mapping):
            return None
        status, provider, kind = data.get("status"), data.get("provider"), data.get("kind")
        if status not in STATUSES or not isinstance(provider, str) or not isinstance(kind, str):
            return None
        util = data.get("utilization")
        minutes = data.get("window_minutes")
        source = data.get("source")
        return cls(
            provider=provider,
            kind=kind,
            status=status,
            utilization=_num(util),
            resets_at=parse_iso(data.get("resets_at")),
            source=source if source in ("event", "header", "text") else "event",
            window_minutes=_whole(minutes),
            reset_given=given if isinstance(given := data.get("reset_given"), str) else None,
        )


def iso_utc(moment: datetime) -> str:
    """``moment`` as ISO-8601 UTC with milliseconds and ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: Any) -> datetime | None:
    """An ISO-8601 string (``Z`` allowed) as an aware UTC datetime, else ``None``
    (never raises: ``9999-12-31T23:59:59-01:00``, past what a date holds in UTC,
    is ``None`` too)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _num(value: Any) -> float | None:
    """``value`` as a float when it is a number (never a bool), else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _whole(value: Any) -> int | None:
    number = _num(value)
    return int(number) if number is not None else None


def in_range(moment: datetime | None, now: datetime | None = None) -> datetime | None:
    """``moment`` when it is a reset to take (from :data:`RESET_FLOOR` to
    :data:`RESET_HORIZON` past ``now``, default now), else ``None``."""
    if moment is None:
        return None
    now = now or datetime.now(UTC)
    try:
        latest = now + RESET_HORIZON
    except OverflowError:  # a clock near year 9999
        latest = datetime.max.replace(tzinfo=UTC)
    return moment if RESET_FLOOR <= moment <= latest else None


def _epoch(value: Any, now: datetime | None = None) -> datetime | None:
    """Epoch seconds (milliseconds past 10**11, defensively) as an aware UTC moment
    in range (:func:`in_range`), else ``None``: never raises, whatever the number
    (``1e308``, ``inf``, ``nan``, year 10000 and beyond)."""
    number = _num(value)
    if number is None or number <= 0:
        return None
    seconds = number / 1000.0 if number > 10**11 else number  # ms, defensively
    try:
        return in_range(datetime.fromtimestamp(seconds, UTC), now)
    except (OverflowError, OSError, ValueError):
        return None


def after(seconds: Any, now: datetime | None = None) -> datetime | None:
    """``now`` (default now) plus ``seconds`` (a number, a relative reset such as
    Codex's ``resets_in_seconds``) when in range (:func:`in_range`), else ``None``:
    never raises (``1e20``, ``inf``, ``nan``)."""
    number = _num(seconds)
    if number is None:
        return None
    now = now or datetime.now(UTC)
    try:
        return in_range(now + timedelta(seconds=number), now)
    except (OverflowError, ValueError):
        return None


def given_text(name: str, value: Any) -> str | None:
    """How a reset the provider gave is named when it is out of range
    (``resetsAt 253402300800``): ``None`` when no number was given at all."""
    number = _num(value)
    if number is None or number == 0:  # none given (0 is how some records say none)
        return None
    whole = number.is_integer() and abs(number) < 1e15
    return f"{name} {int(number) if whole else value!r}"


# -- choosing ---------------------------------------------------------------------------


def refusing(windows: Iterable[UsageWindow]) -> UsageWindow | None:
    """The rejected window that lasts longest (the one work waits for), else ``None``."""
    rejected = [w for w in windows if w.exhausted]
    if not rejected:
        return None
    far = datetime.max.replace(tzinfo=UTC)
    return max(rejected, key=lambda w: w.resets_at or far)


def latest_by_kind(windows: Iterable[UsageWindow]) -> dict[str, UsageWindow]:
    """``kind -> window``, a later window of one kind replacing an earlier one."""
    out: dict[str, UsageWindow] = {}
    for window in windows:
        out[window.kind] = window
    return out
