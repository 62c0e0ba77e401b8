"""Light path helpers for the CLI hot paths (no pydantic, no YAML)."""

from __future__ import annotations

from pathlib import Path

from .errors import UserError
from .state.layout import STATE_DIR, StateLayout

__all__ = ["MANIFEST_NAME", "STATE_DIR", "layout_of", "packet_root", "state_root"]

MANIFEST_NAME = "prompt_runner_packet.md"


def packet_root(path: str | Path) -> Path:
    """The packet directory for ``path`` (the dir or its manifest file).

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    candidate = Path(path).expanduser()
    if candidate.is_file() and candidate.name == MANIFEST_NAME:
        candidate = candidate.parent
    if not candidate.is_dir():
        raise UserError("is not a directory", file=candidate, fix="pass the packet directory")
    if not (candidate / MANIFEST_NAME).is_file():
        raise UserError(
            f"is not a packet (no {MANIFEST_NAME})",
            file=candidate,
            fix="pass a packet directory, or create one with `prompt-runner packet new`",
        )
    return candidate.resolve()


def state_root(path: str | Path) -> Path:
    """``<packet>/.prompt_runner`` for the packet at ``path`` (not created).

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    return layout_of(path).root


def layout_of(path: str | Path) -> StateLayout:
    """The :class:`~prompt_runner.state.layout.StateLayout` of the packet at ``path``.

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    return StateLayout.of_packet(packet_root(path))
