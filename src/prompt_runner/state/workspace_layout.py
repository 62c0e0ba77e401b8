"""Where an operator workspace's files live: its two roots and what is below them.

Names are joined, never checked or created; the state root inside is a
:class:`~.layout.StateLayout`.
"""

from __future__ import annotations

from pathlib import Path

from .layout import StateLayout, SupervisorLayout


class WorkspaceLayout:
    """The paths of one operator workspace (nothing is created or read)::

        <workspace_root>/            data: $XDG_DATA_HOME/prompt_runner/workspaces/<id> by default
          repos/<name>/              each repository's full independent clone
          artifacts/<id>             each contract artifact's installed executable
          workspace.lock.json        what the last ``workspace prepare`` made
        <runtime_root>/              state: $XDG_STATE_HOME/prompt_runner/workspaces/<id> by default
          state/                     the packet's state root (a StateLayout)
          logs/                      the detached runner's output
          supervisor/                the detached run's identity and containment
          imports/                   ``workspace import-state`` receipts

    ``watch --for`` evidence is the state root's ``acceptance/``
    (:attr:`StateLayout.acceptance_dir`), so ``<runtime_root>/state/acceptance/``.

    Args:
        workspace_root: where the clones and artifacts live.
        runtime_root: where the runtime state lives (outside every clone).
    """

    __slots__ = ("runtime_root", "workspace_root")

    workspace_root: Path
    runtime_root: Path

    def __init__(self, workspace_root: str | Path, runtime_root: str | Path) -> None:
        self.workspace_root = Path(workspace_root)
        self.runtime_root = Path(runtime_root)

    def __repr__(self) -> str:
        return f"WorkspaceLayout({str(self.workspace_root)!r}, {str(self.runtime_root)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, WorkspaceLayout)
            and other.workspace_root == self.workspace_root
            and other.runtime_root == self.runtime_root
        )

    def __hash__(self) -> int:
        return hash((self.workspace_root, self.runtime_root))

    @property
    def clones_dir(self) -> Path:
        """``<workspace_root>/repos/``."""
        return self.workspace_root / "repos"

    def clone(self, name: str) -> Path:
        """``<workspace_root>/repos/<name>/``, repository ``name``'s clone."""
        return self.clones_dir / name

    @property
    def artifacts_dir(self) -> Path:
        """``<workspace_root>/artifacts/``."""
        return self.workspace_root / "artifacts"

    def artifact(self, artifact_id: str) -> Path:
        """``<workspace_root>/artifacts/<artifact_id>``, the installed executable."""
        return self.artifacts_dir / artifact_id

    @property
    def lock(self) -> Path:
        """``<workspace_root>/workspace.lock.json``, the record of the last prepare."""
        return self.workspace_root / "workspace.lock.json"

    @property
    def state_dir(self) -> Path:
        """``<runtime_root>/state/``, the packet's state root."""
        return self.runtime_root / "state"

    @property
    def state(self) -> StateLayout:
        """The :class:`StateLayout` of :attr:`state_dir`."""
        return StateLayout(self.state_dir)

    @property
    def logs_dir(self) -> Path:
        """``<runtime_root>/logs/``, the detached runner's stdout and stderr."""
        return self.runtime_root / "logs"

    @property
    def supervisor_dir(self) -> Path:
        """``<runtime_root>/supervisor/``, the detached run's identity and containment."""
        return self.runtime_root / "supervisor"

    @property
    def supervisor(self) -> SupervisorLayout:
        """The detached run's files: ``supervisor/record.json`` and ``.lock``, the
        runner's output in ``logs/`` (see :class:`SupervisorLayout`)."""
        return SupervisorLayout(self.supervisor_dir, self.logs_dir)

    @property
    def imports_dir(self) -> Path:
        """``<runtime_root>/imports/``, ``import-state`` receipts."""
        return self.runtime_root / "imports"

    def import_receipt(self, stamp: str, digest: str) -> Path:
        """``imports/<stamp>-<digest[:12]>.json``."""
        return self.imports_dir / f"{stamp}-{digest[:12]}.json"
