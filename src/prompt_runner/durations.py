"""Durations written the way an operator types them: ``90s``, ``10m``, ``4h``, ``1h30m``.

One parser for every flag or key that takes a span of time (``watch --for
--every --progress-timeout`` first), so they all accept the same spellings and
reject the same mistakes with the same sentence. Standard library only: the
CLI parses these while it starts.

Accepted: one or more ``<number><unit>`` parts, units ``ms``, ``s``, ``m``,
``h``, ``d`` (``1h30m``, ``1.5h``, ``250ms``), or a bare number of seconds
(``90``). Case and surrounding blanks do not matter; blanks between parts do
not either (``1h 30m``). A unit may appear once, largest first. Refused, with
one sentence naming the key and the fix: anything else (``10 minutes``,
``-5m``, ``1e3``, ``inf``, ``5x``, ``m``, ``""``), a span longer than
:data:`MOST_S` (30 days), and zero when the caller asks for a positive span.
"""

from __future__ import annotations

import math
import re

from .errors import UserError

UNITS: dict[str, float] = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
"""Each unit and its length in seconds, largest first."""

MOST_S = 30 * 86400.0
"""The longest span a duration takes (30 days, ``30d``): beyond it is a typo, and
a clock's wait overflows (``99999999999h``) long before it matters."""

_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|[dhms])")
_BARE = re.compile(r"\d+(?:\.\d+)?")
_EXAMPLES = "e.g. 90s, 10m, 4h or 1h30m"


def parse_duration(
    text: str,
    *,
    key: str,
    file: str | None = None,
    positive: bool = True,
    most: float = MOST_S,
) -> float:
    """The span ``text`` names, in seconds.

    Args:
        text: what the user wrote (``"90s"``, ``"10m"``, ``"4h"``, ``"1h30m"``, ``"90"``).
        key: the flag or key it came from (``--for``), named in the error.
        file: the file it came from, if any, named in the error.
        positive: refuse zero (the default: a watch of 0 s means nothing).
        most: the longest span taken, in seconds (:data:`MOST_S`; a caller with
            its own, tighter limit that it words itself passes ``math.inf``).

    Returns:
        Seconds as a float (``"250ms"`` -> ``0.25``).

    Raises:
        UserError: ``text`` is not a duration, is longer than ``most``, or
            is zero while ``positive``.
    """
    if not isinstance(text, str):
        raise _bad(repr(text), key, file)
    raw = text.strip().lower()
    seconds = float(raw) if _BARE.fullmatch(raw) else _parts(raw, text, key, file)
    if not math.isfinite(seconds):
        raise _bad(text, key, file)
    if seconds > most:
        raise UserError(
            f"{text!r} is longer than 30 days, the longest duration taken",
            file=file,
            key=key,
            fix="give 30d or less",
        )
    if positive and seconds <= 0:
        raise UserError(
            f"{text!r} is no time at all", file=file, key=key, fix=f"give a span, {_EXAMPLES}"
        )
    return seconds


def _parts(raw: str, text: str, key: str, file: str | None) -> float:
    seconds = 0.0
    seen: list[str] = []
    at = 0
    for match in _PART.finditer(raw):
        gap = raw[at : match.start()]
        unit = match.group(2)
        if gap.strip() or unit in seen or (seen and _rank(unit) <= _rank(seen[-1])):
            raise _bad(text, key, file)
        seen.append(unit)
        seconds += float(match.group(1)) * UNITS[unit]
        at = match.end()
    if not seen or raw[at:].strip():
        raise _bad(text, key, file)
    return seconds


def _rank(unit: str) -> int:
    """Position of ``unit`` in :data:`UNITS` (0 = largest)."""
    return list(UNITS).index(unit)


def _bad(text: str, key: str, file: str | None) -> UserError:
    return UserError(
        f"{text!r} is not a duration",
        file=file,
        key=key,
        fix=f"write a number with a unit (ms, s, m, h, d), {_EXAMPLES}",
    )


def format_duration(seconds: float) -> str:
    """``seconds`` the way :func:`parse_duration` reads it back: ``5400`` -> ``"1h30m"``,
    ``90`` -> ``"1m30s"``, ``0.25`` -> ``"250ms"``, ``0`` -> ``"0s"``.

    Whole seconds are written with ``d``/``h``/``m``/``s`` parts; a span with a
    fraction of a second is written in whole ``ms`` after them.
    """
    if seconds <= 0:
        return "0s"
    millis = round(seconds * 1000)
    whole, ms = divmod(millis, 1000)
    out = []
    for unit in ("d", "h", "m", "s"):
        size = int(UNITS[unit])
        count, whole = divmod(whole, size)
        if count:
            out.append(f"{count}{unit}")
    if ms:
        out.append(f"{ms}ms")
    return "".join(out) or "0s"
