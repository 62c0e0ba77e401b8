"""The runs a dashboard was given: one :class:`RunSource` per packet, workspace or fleet member.

A source is everything the server may touch for one run: the packet the
control client functions take, and the state root it reads. The server
answers and writes only for these sources, looked up by :attr:`RunSource.key`
(a URL-safe name): a request naming anything else is a 404, so the page can
never make the server read or write outside the runs it was started with.

A workspace (issue #15) is a source too: its packet is the one in its clone
and its state root lives under its runtime root, outside the packet. A fleet
(issue #18) is its members, each a workspace source that names its
:class:`FleetRef` (the overview groups them under the fleet). Only a
local-engine fleet: a Temporal fleet's members run in the workers' own roots,
which the fleet manifest does not name.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..fleet import load_fleet
from ..paths import layout_of, packet_root
from ..state.layout import StateLayout
from ..watch import manifest_repos
from ..workspace.registry import resolve_workspace

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class FleetRef:
    """The fleet a member source belongs to.

    Attributes:
        id: the fleet id.
        manifest: the fleet manifest (absolute).
        queue: the local engine's ``queue.jsonl`` (whether a member is queued, or
            could not be started and why).
    """

    id: str
    manifest: Path
    queue: Path


@dataclass(frozen=True)
class RunSource:
    """One run the dashboard shows.

    Attributes:
        key: URL-safe and unique among the sources (``demo``, ``demo-2``).
        name: what the page calls it (the manifest's ``name``, else the directory's).
        packet: the packet directory, as the control client functions take it.
        layout: the run's state root (``packet/.prompt_runner`` for a packet).
        kind: ``packet`` or ``workspace`` (a fleet member is a workspace).
        fleet: the fleet it is a member of, else ``None``.
        member: its member id in that fleet (the workspace id), else ``None``.
    """

    key: str
    name: str
    packet: Path
    layout: StateLayout
    kind: str = "packet"
    fleet: FleetRef | None = None
    member: str | None = None


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
    packets: Sequence[str | Path],
    workspaces: Sequence[str | Path] = (),
    fleets: Sequence[str | Path] = (),
) -> list[RunSource]:
    """A source per packet directory (or manifest file), then per workspace, then per
    member of each fleet (in the fleet manifest's order).

    Args:
        packets: packet directories; their state is ``StateLayout.of_packet``'s
            (``<packet>/.prompt_runner`` unless ``$PROMPT_RUNNER_STATE_DIR`` says).
        workspaces: workspace manifests or registered ids
            (:func:`~prompt_runner.workspace.registry.resolve_workspace`); the
            packet is the one in the workspace's clone, the state its runtime root's.
        fleets: fleet manifests (:func:`~prompt_runner.fleet.load_fleet`, ``engine:
            local``); each member is a workspace source.

    Raises:
        UserError: a path is not a packet directory, a workspace or a fleet manifest
            (names it), a fleet's engine is ``temporal``, or one run is given twice.
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
    for reference in fleets:
        fleet = load_fleet(reference)
        if fleet.engine != "local":
            raise UserError(
                f"is a {fleet.engine} fleet: its members run in the workers' own roots, "
                "which this dashboard cannot read",
                file=fleet.manifest_path,
                key="engine",
                fix="see it with `prompt-runner fleet status`, or serve a dashboard on a "
                "worker with --workspace <worker root>/<fleet>/<workspace>/workspace.yml",
            )
        ref = FleetRef(fleet.id, fleet.manifest_path, fleet.layout.queue)
        for member in fleet.members:
            ws = member.workspace
            layout = StateLayout(ws.state_dir)
            keys.claim(layout.root, fleet.manifest_path)
            key = keys.key(ws.id)
            found.append(RunSource(key, ws.id, ws.packet_dir, layout, "workspace", ref, member.id))
    names = [s.name for s in found]
    return [
        dataclasses.replace(s, name=f"{s.name} ({s.key})") if names.count(s.name) > 1 else s
        for s in found
    ]
