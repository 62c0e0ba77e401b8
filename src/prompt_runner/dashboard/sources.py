"""The runs a dashboard was given: one :class:`RunSource` per packet (later: workspace, fleet).

A source is everything the server may touch for one run: the packet the
control client functions take, and the state root it reads. The server
answers and writes only for these sources, looked up by :attr:`RunSource.key`
(a URL-safe name): a request naming anything else is a 404, so the page can
never make the server read or write outside the runs it was started with.

A workspace (issue #15) is a source too: its packet is the one in its clone
and its state root lives under its runtime root, outside the packet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..paths import layout_of, packet_root
from ..state.layout import StateLayout
from ..watch import manifest_repos
from ..workspace.registry import resolve_workspace

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RunSource:
    """One run the dashboard shows.

    Attributes:
        key: URL-safe and unique among the sources (``demo``, ``demo-2``).
        name: what the page calls it (the manifest's ``name``, else the directory's).
        packet: the packet directory, as the control client functions take it.
        layout: the run's state root (``packet/.prompt_runner`` for a packet).
        kind: ``packet`` or ``workspace``.
    """

    key: str
    name: str
    packet: Path
    layout: StateLayout
    kind: str = "packet"


def _manifest_name(root: Path) -> str:
    try:
        name, _ = manifest_repos(root)
    except UserError:
        return root.name  # a manifest the loader refuses still has a directory name
    return name


class _Keys:
    """Unique, URL-safe keys and names for the sources, in the order given."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.roots: set[Path] = set()

    def key(self, base: str) -> str:
        base = _UNSAFE.sub("-", base).strip("-.") or "run"
        key, n = base, 1
        while key in self.keys:
            n += 1
            key = f"{base}-{n}"
        self.keys.add(key)
        return key

    def claim(self, root: Path, where: Path) -> None:
        """Refuse a state root given twice (two names for one run)."""
        if root in self.roots:
            raise UserError(
                "is given twice (its run is already on this dashboard)",
                file=where,
                fix="name each packet or workspace once",
            )
        self.roots.add(root)


def sources(
    packets: Sequence[str | Path], workspaces: Sequence[str | Path] = ()
) -> list[RunSource]:
    """A source per packet directory (or manifest file), then per workspace.

    Args:
        packets: packet directories; their state is ``StateLayout.of_packet``'s
            (``<packet>/.prompt_runner`` unless ``$PROMPT_RUNNER_STATE_DIR`` says).
        workspaces: workspace manifests or registered ids
            (:func:`~prompt_runner.workspace.registry.resolve_workspace`); the
            packet is the one in the workspace's clone, the state its runtime root's.

    Raises:
        UserError: a path is not a packet directory or a workspace (names it), or
            one run is given twice.
    """
    keys = _Keys()
    found: list[RunSource] = []
    for given in packets:
        root = packet_root(given)
        layout = layout_of(root)
        keys.claim(layout.root, root)
        found.append(RunSource(keys.key(root.name), _manifest_name(root), root, layout))
    for reference in workspaces:
        ws = resolve_workspace(reference)
        layout = StateLayout(ws.state_dir)
        keys.claim(layout.root, ws.manifest_path)
        found.append(RunSource(keys.key(ws.id), ws.id, ws.packet_dir, layout, kind="workspace"))
    names = [s.name for s in found]
    return [
        RunSource(s.key, f"{s.name} ({s.key})", s.packet, s.layout, s.kind)
        if names.count(s.name) > 1
        else s
        for s in found
    ]
