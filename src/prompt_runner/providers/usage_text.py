"""Usage windows from a refusal's text (``source="text"``), when no record says it.

The forms each CLI prints, and where each was captured, are listed in
:mod:`.usage`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .usage import UsageWindow, _epoch, after, in_range

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
        names a refusal but no reset, or a reset out of range -- past
        :data:`~.usage.RESET_HORIZON`, year 10000 and beyond -- which
        ``reset_given`` then quotes), or ``None``. Never raises.
    """
    now = now or datetime.now(UTC)
    if (found := _CLAUDE_EPOCH.search(text)) is not None:
        return _text_window(provider, "unknown", _epoch(int(found.group(1)), now), found.group(0))
    if (found := _CLAUDE_HIT.search(text)) is not None:
        kind = _CLAUDE_KINDS.get((found.group(1) or "").strip().lower(), "unknown")
        moment, far = _clock_time(found.group(2), _zone(found.group(3)), now)
        return _text_window(provider, kind, moment, f"resets {found.group(2)}" if far else None)
    if (found := _CLAUDE_OLD.search(text)) is not None:
        zone = _zone(found.group(2)) if found.group(2) else _zone(local_tz)
        moment, far = _clock_time(found.group(1), zone, now)
        return _text_window(
            provider, "unknown", moment, f"reset at {found.group(1)}" if far else None
        )
    if (found := _CODEX_AT.search(text)) is not None:
        moment, far = _clock_time(found.group(1), _zone(local_tz), now)
        text_given = f"try again at {found.group(1)}" if far else None
        return _text_window(provider, "unknown", moment, text_given)
    if (found := _CODEX_IN.search(text)) is not None:
        seconds: float = sum(
            int(n) * _UNIT_S[u.rstrip("s").lower()]
            for n, u in re.findall(r"(\d+)\s+(day|hour|minute|second)s?", found.group(1), re.I)
        )
        given = f"try again in {found.group(1).strip()}"
        return _text_window(provider, "unknown", after(seconds, now), given)
    if (found := _QUOTA_AFTER.search(text)) is not None:
        seconds = sum(
            float(n) * _SHORT_S[u.lower()]
            for n, u in re.findall(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)", found.group(1), re.I)
        )
        given = f"reset after {found.group(1).strip()}"
        return _text_window(provider, "daily", after(seconds, now), given)
    if (found := _NO_RESET.search(text)) is not None:
        kind = "credits" if _CREDITS.search(text) else "unknown"
        return _text_window(provider, kind, None)
    return None


def _text_window(
    provider: str, kind: str, resets_at: datetime | None, given: str | None = None
) -> UsageWindow:
    """A rejected window; ``given`` (the reset as the text gave it) is kept as
    ``reset_given`` when it gave no usable moment (out of range)."""
    return UsageWindow(
        provider,
        kind,
        "rejected",
        resets_at=resets_at,
        source="text",
        reset_given=f"{given.strip()!r}" if given and resets_at is None else None,
    )


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


def _clock_time(text: str, zone: tzinfo | None, now: datetime) -> tuple[datetime | None, bool]:
    """``(moment, out_of_range)``: ``3pm``, ``12:50pm``, ``Dec 4, 1:20pm``, ``Dec
    4th, 2026 1:21 PM`` in ``zone`` as UTC (the next such moment after ``now``
    when no date is given); ``(None, False)`` when it names no clock time or no
    real date, ``(None, True)`` when the moment is out of range
    (:func:`~.usage.in_range`: ``Dec 4th, 2999``; past year 9999, never raising)."""
    try:
        moment = _clock_moment(text, zone, now)
    except (OverflowError, ValueError):  # a moment past year 9999 (next day, next year)
        return None, True
    if moment is None:
        return None, False
    kept = in_range(moment, now)
    return kept, kept is None


def _clock_moment(text: str, zone: tzinfo | None, now: datetime) -> datetime | None:
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
