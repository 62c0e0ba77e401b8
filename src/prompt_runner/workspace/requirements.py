"""``requires``: does this build satisfy the workspace's version range and capabilities?"""

from __future__ import annotations

from .. import __version__
from ..errors import UserError
from .capabilities import CAPABILITIES
from .model import Workspace
from .version_range import matches


def unmet_requirements(ws: Workspace) -> list[str]:
    """One sentence per unmet requirement (empty: all met)."""
    unmet: list[str] = []
    if ws.requires_version is not None and not matches(__version__, ws.requires_version):
        unmet.append(
            f"requires.prompt_runner {ws.requires_version!r} does not match this build "
            f"({__version__})"
        )
    missing = [c for c in ws.requires_capabilities if c not in CAPABILITIES]
    if missing:
        unmet.append(f"requires.capabilities: this build lacks {', '.join(missing)}")
    return unmet


def check_requirements(ws: Workspace) -> None:
    """Refuse a workspace this build cannot serve.

    Raises:
        UserError: naming the manifest, the requirement and the fix.
    """
    unmet = unmet_requirements(ws)
    if unmet:
        raise UserError(
            unmet[0],
            file=ws.manifest_path,
            key="requires",
            fix="install a prompt-runner that matches, or change the requirement",
        )
