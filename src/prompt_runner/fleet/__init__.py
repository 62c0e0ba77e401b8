"""Fleets: many workspaces run at once, on one machine or across machines on Temporal.

The room's modules, bottom up:

- :mod:`.manifest`: the manifest as written (pydantic models, strict).
- :mod:`.model`: the :class:`Fleet` value and its :class:`Member` workspaces.
- :mod:`.load`: :func:`load_fleet` (the boundary: one sentence per bad manifest).

``docs/fleet.md`` is the user's guide.
"""

from __future__ import annotations

from .load import load_fleet
from .model import Fleet, Member, TemporalSettings

__all__ = ["Fleet", "Member", "TemporalSettings", "load_fleet"]
