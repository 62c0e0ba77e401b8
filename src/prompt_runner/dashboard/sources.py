"""The runs a dashboard was given: one :class:`RunSource` per packet (later: workspace, fleet).

A source is everything the server may touch for one run: the packet the
control client functions take, and the state root it reads. The server
answers and writes only for these sources, looked up by :attr:`RunSource.key`
(a URL-safe name): a request naming anything else is a 404, so the page can
never make the server read or write outside the runs it was started with.

Workspaces (issue #15) add sources whose state root lives outside the packet:
:func:`workspace_sources` is the hook, and refuses until that API exists.
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

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RunSource:
    """One run the dashboard shows.

    Attributes:
        key: URL-safe and unique among the sources (``demo``, ``demo-2``).
        name: what the page calls it (the manifest's ``name``, else the directory's).
        packet: the packet directory, as the control client functions take it.
        layout: the run's state root (``packet/.prompt_runner`` for a packet).
        kind: ``packet`` (``workspace`` once workspaces exist).
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


def packet_sources(packets: Sequence[str | Path]) -> list[RunSource]:
    """A source per packet directory (or manifest file), in the order given.

    Raises:
        UserError: a path is not a packet directory (names it), or a packet is
            given twice.
    """
    sources: list[RunSource] = []
    seen: dict[Path, str] = {}
    keys: set[str] = set()
    for given in packets:
        root = packet_root(given)
        if root in seen:
            raise UserError(
                "is given twice", file=root, fix="name each packet once on the command line"
            )
        name = _manifest_name(root)
        base = _UNSAFE.sub("-", root.name).strip("-.") or "run"
        key, n = base, 1
        while key in keys:
            n += 1
            key = f"{base}-{n}"
        keys.add(key)
        seen[root] = key
        sources.append(RunSource(key, name, root, layout_of(root)))
    names = [s.name for s in sources]
    return [
        RunSource(s.key, f"{s.name} ({s.key})", s.packet, s.layout)
        if names.count(s.name) > 1
        else s
        for s in sources
    ]


def workspace_sources(workspaces: Sequence[str | Path]) -> list[RunSource]:
    """A source per workspace manifest (issue #15; the hook for ``--workspace``).

    Raises:
        UserError: always, for now: this build has no workspace API yet.
    """
    if not workspaces:
        return []
    raise UserError(
        "workspaces are not available in this build yet",
        file=Path(workspaces[0]),
        key="--workspace",
        fix="pass the workspace's packet directory instead",
    )
