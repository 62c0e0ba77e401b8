"""Do the packet's repos land in the workspace's clones?

A packet names its repos by relative paths (``app: ../..``). Read from its
clone, those paths must resolve to clones of this workspace -- the clones
sit side by side under ``<workspace_root>/repos/<name>`` -- or the run would
work in a directory the workspace does not own (the author's checkout, say).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UserError
from ..packet.loader import load_packet
from .model import Workspace
from .ready import packet_problem


def packet_binding(ws: Workspace) -> tuple[dict[str, str] | None, list[str]]:
    """``(packet repo -> clone name, problems)``; ``(None, [])`` before the packet's clone exists.

    A problem is one sentence: ``packet.path`` names no packet in the clone
    (:func:`.ready.packet_problem`'s, naming the manifest and the key), the
    packet does not load, or a packet repo resolves outside every clone (with the fix).
    """
    if not ws.clone(ws.packet_repo).is_dir():
        return None, []
    missing = packet_problem(ws)  # no packet directory there: the manifest's packet.path
    if missing is not None:
        return None, [str(missing)]
    try:
        packet = load_packet(ws.packet_dir)
    except UserError as exc:
        return None, [f"the packet in the clone does not load: {exc}"]
    clones = {
        Path(os.path.realpath(r.clone)): name for name, r in ws.repositories.items() if r.clone
    }
    bound: dict[str, str] = {}
    problems: list[str] = []
    for name, path in packet.repos.items():
        real = Path(os.path.realpath(path))
        owner = next(
            (c for root, c in clones.items() if real == root or root in real.parents), None
        )
        if owner is None:
            problems.append(
                f"the packet's repo {name!r} resolves to {real}, outside the workspace's clones; "
                f"give it a path relative to the packet that lands in one of "
                f"{ws.workspace_root / 'repos'}/<name> (the workspace names its clones after "
                "its repositories)"
            )
        else:
            bound[name] = owner
    return bound, problems
