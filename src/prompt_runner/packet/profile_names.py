"""The one rule for a profile's name: it is a file name (``profiles/NAME.md``)
and a value packets write unquoted (``profile: NAME``).

Below both the packet's models (a manifest's ``profile:`` is checked as it
is validated) and :mod:`~prompt_runner.packet.profiles` (``profile new``,
``--profile``, ``init --default-profile``), which import it; it imports only
``re`` and the error tree.
"""

from __future__ import annotations

import re

from ..errors import UserError

PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""The one rule for a profile name, wherever it is given (``--profile``, ``profile
new``, ``init --default-profile``, ``config.md``'s ``default_profile``)."""


_PROFILE_NAME_MAX = 255 - len(".md")


def check_profile_name(name: str) -> None:
    """A profile name must be one simple word: it is a file name and a value
    packets write unquoted (``profile: NAME``).

    Raises:
        UserError: anything but letters, digits, '-', '_' and '.' (not first), or
            longer than 252 characters (``NAME.md`` is a file name: 255 bytes at most).
    """
    if len(name) > _PROFILE_NAME_MAX:
        raise UserError(
            f"invalid profile name: {len(name)} characters long, over the "
            f"{_PROFILE_NAME_MAX}-character limit (profiles/NAME.md is a file name)",
            fix="use a shorter name",
        )
    if PROFILE_NAME.fullmatch(name) is None:
        hint = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._") or "my-profile"
        raise UserError(
            f"invalid profile name {name!r}: a profile name is one word of letters, digits, "
            "'-', '_' and '.' (not first)",
            fix=f"use e.g. {hint!r}",
        )
