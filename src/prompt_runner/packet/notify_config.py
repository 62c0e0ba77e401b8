"""The ``notify:`` a packet runs with: its profile's, its manifest's and a
workspace's, merged key by key (the more specific winning) and checked.

Here rather than in ``planning`` so that ``watch`` (a layer below) finds the
same config the run uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..notify import NotifyConfig, resolve_notify
from .builtins import BUILTIN_PROFILES
from .loader import Packet
from .models import Profile
from .profiles import configured_profile, profile_path


def packet_notify(
    packet: Packet,
    *,
    profile: tuple[str | None, Profile | None] | None = None,
    workspace: tuple[str, Mapping[str, Any] | None] | None = None,
) -> NotifyConfig | None:
    """The resolved ``notify:`` of ``packet`` (``None``: no one is told).

    Args:
        packet: a loaded packet.
        profile: ``(name, profile)`` the run uses (``None``: the one the
            manifest or ``config.md`` names, as ``run`` resolves it).
        workspace: ``(file, raw notify)`` of a workspace manifest, the most
            specific level.

    Raises:
        UserError: a level's ``notify`` is wrong (naming its file and key), or
            the merged one names no target.
    """
    if profile is None:
        name, loaded, _ = configured_profile(packet.manifest.profile)
    else:
        name, loaded = profile
    levels: list[tuple[str, Any]] = []
    if loaded is not None and loaded.notify is not None:
        levels.append((profile_file(name), loaded.notify))
    levels.append((packet.display(packet.manifest_file), packet.manifest.notify))
    if workspace is not None:
        levels.append(workspace)
    return resolve_notify(levels)


def profile_file(name: str | None) -> str:
    """The file errors name for profile ``name``'s keys."""
    if name is None:
        return "profile"
    path = profile_path(name)
    if path.is_file() or name not in BUILTIN_PROFILES:
        return str(path)
    return f"<built-in profile {name}>"
