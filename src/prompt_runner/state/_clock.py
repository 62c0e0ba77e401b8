"""UTC timestamps in the two shapes the state files use.

* :func:`iso_now` -- ISO 8601 in UTC with a ``Z`` suffix, e.g.
  ``2025-01-02T03:04:05Z`` (``millis=True``: ``2025-01-02T03:04:05.123Z``).
  Used inside records (``progress.log``, journal ``at``, attempt timings).
* :func:`file_stamp` -- the same instant without colons, safe in file names on
  every platform, e.g. ``20250102T030405.123456Z``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

_second: tuple[int, str] = (-1, "")
"""The last whole second :func:`iso_now` formatted, and its text: a run stamps
a dozen records a prompt, mostly within one second (``strftime`` is the cost)."""


def iso_now(*, millis: bool = False) -> str:
    """Return the current UTC time as ISO 8601 with a ``Z`` suffix.

    Args:
        millis: include milliseconds (``.123``) when true; whole seconds otherwise.
    """
    global _second
    now_ns = time.time_ns()  # the clock datetime.now reads
    whole, rest = divmod(now_ns, 1_000_000_000)
    second, text = _second
    if whole != second:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _second = (whole, text)  # one tuple: a racing thread formats it again, no worse
    if millis:
        return f"{text}.{rest // 1_000_000:03d}Z"
    return text + "Z"


def iso_format(moment: datetime, *, millis: bool = False) -> str:
    """Format an aware or naive-UTC ``datetime`` as ISO 8601 UTC with ``Z``.

    A naive ``moment`` is taken to be UTC already.
    """
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if millis:
        text += f".{moment.microsecond // 1000:03d}"
    return text + "Z"


def file_stamp() -> str:
    """Return the current UTC time as ``YYYYmmddTHHMMSS.ffffffZ`` (no colons)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
