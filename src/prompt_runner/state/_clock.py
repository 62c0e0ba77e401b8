"""UTC timestamps in the two shapes the state files use.

* :func:`iso_now` -- ISO 8601 in UTC with a ``Z`` suffix, e.g.
  ``2025-01-02T03:04:05Z`` (``millis=True``: ``2025-01-02T03:04:05.123Z``).
  Used inside records (``progress.log``, journal ``at``, attempt timings).
* :func:`file_stamp` -- the same instant without colons, safe in file names on
  every platform, e.g. ``20250102T030405.123456Z``.
"""

from __future__ import annotations

from datetime import UTC, datetime


def iso_now(*, millis: bool = False) -> str:
    """Return the current UTC time as ISO 8601 with a ``Z`` suffix.

    Args:
        millis: include milliseconds (``.123``) when true; whole seconds otherwise.
    """
    return iso_format(datetime.now(UTC), millis=millis)


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
