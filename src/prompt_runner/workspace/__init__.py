"""Operator workspaces: a strict manifest, independent clones, runtime state outside them.

The room's modules, bottom up:

- :mod:`.manifest`: the manifest as written (pydantic models, strict).
- :mod:`.capabilities`, :mod:`.version_range`: what ``requires`` may ask for.
- :mod:`.model`: the :class:`Workspace` value a program builds, plans, prepares, starts.
- :mod:`.load`: :func:`load_workspace` (the boundary: one sentence per bad manifest).
- :mod:`.registry`: ``W`` -> a workspace (a manifest path, a registered id, or found here).
- :mod:`.runspec`: the argv and environment that run the workspace's packet.
- :mod:`.ready`: whether it can run here (roots, prepared, ``packet.path``), as
  ``plan``, ``prepare``, ``doctor`` and ``start`` say it.

``docs/workspaces.md`` is the user's guide.
"""

from __future__ import annotations

from .load import load_workspace
from .model import Artifact, Commits, Repository, Workspace

__all__ = ["Artifact", "Commits", "Repository", "Workspace", "load_workspace"]
