"""Usage windows from the agent CLIs' structured records (``source="event"``).

Claude Code's ``rate_limit_info`` and Codex's ``token_count.rate_limits``, as
:class:`~.usage.UsageWindow` values; the formats are described in
:mod:`.usage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .usage import UsageWindow, _epoch, _num, _whole, after, given_text

_CLAUDE_STATUS = {"allowed": "allowed", "allowed_warning": "warning", "rejected": "rejected"}
_CODEX_WINDOWS = {300: "five_hour", 1440: "daily", 10080: "seven_day", 43200: "monthly"}


# -- Claude Code: rate_limit_event ------------------------------------------------------


def claude_windows(
    info: Any, provider: str = "claude", *, now: datetime | None = None
) -> list[UsageWindow]:
    """The windows of one Claude Code ``rate_limit_info`` mapping.

    The first window is the limiting one the top level describes (its
    ``status`` says whether requests are refused); the others come from
    ``unifiedWindows`` (each with its own utilization, reset and status).
    A ``resetsAt`` out of range (:data:`~.usage.RESET_HORIZON` past ``now``,
    default now; year 10000 and beyond; ``1e308``) is an unknown reset, named
    in ``reset_given``. Returns ``[]`` for anything that is not a
    ``rate_limit_info``; never raises.
    """
    if not isinstance(info, Mapping) or info.get("status") not in _CLAUDE_STATUS:
        return []
    kind = str(info.get("rateLimitType") or "unknown")
    raw = info.get("unifiedWindows")
    unified: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    mine = unified.get(kind)
    own: Mapping[str, Any] = mine if isinstance(mine, Mapping) else {}
    utilization = info.get("utilization", own.get("utilization"))
    resets = info.get("resetsAt", own.get("resetsAt"))
    resets_at = _epoch(resets, now)
    windows = [
        UsageWindow(
            provider=provider,
            kind=kind,
            status=_CLAUDE_STATUS[str(info["status"])],  # type: ignore[arg-type]
            utilization=_num(utilization),
            resets_at=resets_at,
            reset_given=given_text("resetsAt", resets) if resets_at is None else None,
        )
    ]
    for name, window in unified.items():
        if name == kind or not isinstance(window, Mapping):
            continue
        resets_at = _epoch(window.get("resetsAt"), now)
        windows.append(
            UsageWindow(
                provider=provider,
                kind=str(name),
                status=_CLAUDE_STATUS.get(str(window.get("status")), "allowed"),  # type: ignore[arg-type]
                utilization=_num(window.get("utilization")),
                resets_at=resets_at,
                reset_given=(
                    given_text("resetsAt", window.get("resetsAt")) if resets_at is None else None
                ),
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
    names -- is ``rejected``. A reset out of range (:data:`~.usage.RESET_HORIZON`
    past ``now``; ``resets_in_seconds: 1e20``) is an unknown reset, named in
    ``reset_given``. Returns ``[]`` for anything else; never raises.
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
        resets_at = _epoch(data.get("resets_at"), now)
        given = given_text("resets_at", data.get("resets_at"))
        if resets_at is None and _num(data.get("resets_in_seconds")) is not None:
            resets_at = after(data["resets_in_seconds"], now)
            given = given_text("resets_in_seconds", data["resets_in_seconds"]) or given
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
                reset_given=given if resets_at is None else None,
            )
        )
    return windows
