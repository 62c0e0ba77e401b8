"""Usage windows: what a provider said about the plan's usage limits, as one value.

Every agent CLI that sells a plan rather than tokens refuses work once a window
of the plan is spent (Claude's five-hour and weekly limits, Codex's primary and
secondary windows, Gemini's daily quota...). :class:`UsageWindow` is that fact
whatever the CLI: which window, whether work is refused, how much of it is
used, and when it resets. The recovery policy reads only this value (carried
on a :class:`~.failure.FailureEnvelope` as ``usage_window``, and on a
:class:`~.base.SessionResult` as ``windows``), never the CLI's words.

Sources, most trusted first (``source``):

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

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Status = Literal["allowed", "warning", "rejected"]
Source = Literal["event", "header", "text"]
STATUSES: tuple[str, ...] = ("allowed", "warning", "rejected")

_CLAUDE_STATUS = {"allowed": "allowed", "allowed_warning": "warning", "rejected": "rejected"}
_CODEX_WINDOWS = {300: "five_hour", 1440: "daily", 10080: "seven_day", 43200: "monthly"}


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
    """

    provider: str
    kind: str
    status: Status
    utilization: float | None = None
    resets_at: datetime | None = None
    source: Source = "event"
    window_minutes: int | None = None

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
        """``resets 2026-12-01T12:50:00Z`` or ``reset time unknown``."""
        if self.resets_at is None:
            return "reset time unknown"
        return f"resets {iso_utc(self.resets_at)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``resets_at`` as ISO-8601 UTC with ``Z``)."""
        return {
            "provider": self.provider,
            "kind": self.kind,
            "status": self.status,
            "utilization": self.utilization,
            "resets_at": iso_utc(self.resets_at) if self.resets_at else None,
            "source": self.source,
            "window_minutes": self.window_minutes,
        }

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
        )


def iso_utc(moment: datetime) -> str:
    """``moment`` as ISO-8601 UTC with milliseconds and ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: Any) -> datetime | None:
    """An ISO-8601 string (``Z`` allowed) as an aware UTC datetime, else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _num(value: Any) -> float | None:
    """``value`` as a float when it is a number (never a bool), else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _whole(value: Any) -> int | None:
    number = _num(value)
    return int(number) if number is not None else None


def _epoch(value: Any) -> datetime | None:
    number = _num(value)
    if number is None or number <= 0:
        return None
    seconds = number / 1000.0 if number > 10**11 else number  # ms, defensively
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


# -- Claude Code: rate_limit_event ------------------------------------------------------


def claude_windows(info: Any, provider: str = "claude") -> list[UsageWindow]:
    """The windows of one Claude Code ``rate_limit_info`` mapping.

    The first window is the limiting one the top level describes (its
    ``status`` says whether requests are refused); the others come from
    ``unifiedWindows`` (each with its own utilization, reset and status).
    Returns ``[]`` for anything that is not a ``rate_limit_info``.
    """
    if not isinstance(info, Mapping) or info.get("status") not in _CLAUDE_STATUS:
        return []
    kind = str(info.get("rateLimitType") or "unknown")
    raw = info.get("unifiedWindows")
    unified: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    mine = unified.get(kind)
    own: Mapping[str, Any] = mine if isinstance(mine, Mapping) else {}
    utilization = info.get("utilization", own.get("utilization"))
    windows = [
        UsageWindow(
            provider=provider,
            kind=kind,
            status=_CLAUDE_STATUS[str(info["status"])],  # type: ignore[arg-type]
            utilization=_num(utilization),
            resets_at=_epoch(info.get("resetsAt", own.get("resetsAt"))),
        )
    ]
    for name, window in unified.items():
        if name == kind or not isinstance(window, Mapping):
            continue
        windows.append(
            UsageWindow(
                provider=provider,
                kind=str(name),
                status=_CLAUDE_STATUS.get(str(window.get("status")), "allowed"),  # type: ignore[arg-type]
                utilization=_num(window.get("utilization")),
                resets_at=_epoch(window.get("resetsAt")),
            )
        )
    return windows


# -- Codex: token_count rate_limits -----------------------------------------------------


def codex_windows(
    rate_limits: Any, provider: str = "codex", *, now: datetime | None = None
) -> list[UsageWindow]:
    """The windows of one Codex ``token_count.rate_limits`` mapping.

    ``primary`` / ``secondary`` each give ``used_percent`` (0..100),
    ``window_minutes`` (300 is the five-hour window, 10080 the weekly one) and
    ``resets_at`` (epoch seconds; the older ``resets_in_seconds`` is counted
    from ``now``). A window at 100 % -- or the one ``rate_limit_reached_type``
    names -- is ``rejected``. Returns ``[]`` for anything else.
    """
    if not isinstance(rate_limits, Mapping):
        return []
    reached = str(rate_limits.get("rate_limit_reached_type") or "")
    windows: list[UsageWindow] = []
    for slot in ("primary", "secondary"):
        data = rate_limits.get(slot)
        if not isinstance(data, Mapping):
            continue
        used, minutes = _num(data.get("used_percent")), _whole(data.get("window_minutes"))
        resets_at = _epoch(data.get("resets_at"))
        after = _num(data.get("resets_in_seconds"))
        if resets_at is None and after is not None:
            resets_at = (now or datetime.now(UTC)) + timedelta(seconds=after)
        kind = slot if minutes is None else _CODEX_WINDOWS.get(minutes, f"{minutes}_minutes")
        utilization = used / 100.0 if used is not None else None
        full = utilization is not None and utilization >= 1.0
        windows.append(
            UsageWindow(
                provider=provider,
                kind=kind,
                status="rejected" if full or reached.startswith(slot) else "allowed",
                utilization=utilization,
                resets_at=resets_at,
                window_minutes=minutes,
            )
        )
    return windows


# -- text forms ---------------------------------------------------------------------------

_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_CLAUDE_KINDS = {
    "5-hour": "five_hour",
    "session": "five_hour",
    "weekly": "seven_day",
    "opus weekly": "seven_day_opus",
    "sonnet weekly": "seven_day_sonnet",
    "daily": "daily",
}
_APOS = "['\u2019]"
_CLAUDE_EPOCH = re.compile(r"usage limit reached\|(\d{9,13})", re.I)
_CLAUDE_HIT = re.compile(
    rf"You{_APOS}ve hit your (?:([\w -]+?) )?limit\s*(?:\u00b7|-|\.)?\s*"
    r"resets\s+(.+?)\s*\(([\w/+-]+)\)",
    re.I,
)
_CLAUDE_OLD = re.compile(
    r"usage limit reached\.?\s*Your limit will reset at\s+(.+?)(?:\s*\(([\w/+-]+)\))?\s*\.?\s*$",
    re.I | re.M,
)
_CODEX_AT = re.compile(r"hit your usage limit.*?try again at\s+(.+?)\.?\s*$", re.I | re.M)
_CODEX_IN = re.compile(
    r"hit your usage limit.*?try again in\s+((?:\d+\s+(?:days?|hours?|minutes?|seconds?)\s*)+)",
    re.I | re.S,
)
_QUOTA_AFTER = re.compile(
    r"(?:exhausted your capacity|quota).{0,80}?reset after\s+"
    r"((?:\d+(?:\.\d+)?\s*(?:h|m|s|ms)\s*)+)",
    re.I | re.S,
)
_NO_RESET = re.compile(
    r"hit your usage limit|usage limit reached|insufficient_quota|quota exceeded|"
    r"check your plan and billing|credit balance is too low|out of credits|quota_exhausted",
    re.I,
)
_CREDITS = re.compile(r"insufficient_quota|billing|credit", re.I)
_CLOCK = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?", re.I)
_DATE = re.compile(r"([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(?:(\d{4})\s*)?", re.I)
_UNIT_S = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}
_SHORT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def window_from_text(
    provider: str, text: str, *, now: datetime | None = None, local_tz: str | None = None
) -> UsageWindow | None:
    """A rejected window parsed from a refusal's text, or ``None`` when it says none.

    Args:
        provider: the provider name the window belongs to.
        text: the CLI's error text (message and stderr).
        now: the current time (aware; default: now), for clock times and
            relative durations.
        local_tz: the IANA zone of a clock time that names none (Codex prints
            its machine's local time): the agent's ``TZ``; default the
            runner's local zone.

    Returns:
        The window (``source="text"``; ``resets_at`` ``None`` when the text
        names a refusal but no reset), or ``None``.
    """
    now = now or datetime.now(UTC)
    if (found := _CLAUDE_EPOCH.search(text)) is not None:
        return _text_window(provider, "unknown", _epoch(int(found.group(1))))
    if (found := _CLAUDE_HIT.search(text)) is not None:
        kind = _CLAUDE_KINDS.get((found.group(1) or "").strip().lower(), "unknown")
        return _text_window(provider, kind, _clock_time(found.group(2), _zone(found.group(3)), now))
    if (found := _CLAUDE_OLD.search(text)) is not None:
        zone = _zone(found.group(2)) if found.group(2) else _zone(local_tz)
        return _text_window(provider, "unknown", _clock_time(found.group(1), zone, now))
    if (found := _CODEX_AT.search(text)) is not None:
        return _text_window(provider, "unknown", _clock_time(found.group(1), _zone(local_tz), now))
    if (found := _CODEX_IN.search(text)) is not None:
        seconds: float = sum(
            int(n) * _UNIT_S[u.rstrip("s").lower()]
            for n, u in re.findall(r"(\d+)\s+(day|hour|minute|second)s?", found.group(1), re.I)
        )
        return _text_window(provider, "unknown", now + timedelta(seconds=seconds))
    if (found := _QUOTA_AFTER.search(text)) is not None:
        seconds = sum(
            float(n) * _SHORT_S[u.lower()]
            for n, u in re.findall(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)", found.group(1), re.I)
        )
        return _text_window(provider, "daily", now + timedelta(seconds=seconds))
    if (found := _NO_RESET.search(text)) is not None:
        kind = "credits" if _CREDITS.search(text) else "unknown"
        return _text_window(provider, kind, None)
    return None


def _text_window(provider: str, kind: str, resets_at: datetime | None) -> UsageWindow:
    return UsageWindow(provider, kind, "rejected", resets_at=resets_at, source="text")


def _zone(name: str | None) -> tzinfo | None:
    """The zone named ``name`` (``UTC``, ``Europe/Paris``); ``None``: the local zone."""
    if not name:
        return None
    if name.upper() in ("UTC", "GMT", "Z"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _clock_time(text: str, zone: tzinfo | None, now: datetime) -> datetime | None:
    """``3pm``, ``12:50pm``, ``Dec 4, 1:20pm``, ``Dec 4th, 2026 1:21 PM`` in ``zone``
    as UTC: the next such moment after ``now`` when no date is given."""
    clock = _CLOCK.search(text)
    if clock is None:
        return None
    hour = int(clock.group(1)) % 12 + (12 if clock.group(3).lower() == "p" else 0)
    minute = int(clock.group(2) or 0)
    here = now.astimezone(zone) if zone is not None else now.astimezone()
    date = _DATE.search(text[: clock.start()])
    if date is not None and date.group(1).lower()[:3] in _MONTHS:
        year = int(date.group(3)) if date.group(3) else here.year
        try:
            moment = here.replace(
                year=year,
                month=_MONTHS[date.group(1).lower()[:3]],
                day=int(date.group(2)),
                hour=hour,
                minute=minute,
                second=0,
                microsecond=0,
            )
        except ValueError:
            return None
        if not date.group(3) and moment < here - timedelta(days=180):
            moment = moment.replace(year=year + 1)
        return moment.astimezone(UTC)
    moment = here.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if moment < here - timedelta(minutes=1):
        moment += timedelta(days=1)
    return moment.astimezone(UTC)


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
