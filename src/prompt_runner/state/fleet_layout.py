"""Where a fleet's files live: on the machine that submits it, and on a Temporal worker.

Names are joined, never checked or created.
"""

from __future__ import annotations

from pathlib import Path


class FleetLayout:
    """The files of one fleet on the machine that submits it (nothing is created or read)::

        <fleet root>/                  $XDG_STATE_HOME/prompt_runner/fleets/<id> by default
          members/<id>.yml             a template member's workspace manifest (written by submit)
          queue.jsonl                  the local engine's queue, one line per event (fleet/queue.py)
          submit.pid                   the live local ``fleet submit`` (a run lock)
          acceptance/watch-<stamp>.jsonl        a bounded ``fleet watch``'s samples
          acceptance/watch-<stamp>.report.json  its final report

    Args:
        root: the fleet's root directory.
    """

    __slots__ = ("root",)

    root: Path

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"FleetLayout({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FleetLayout) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def members_dir(self) -> Path:
        """``members/``, the template members' manifests."""
        return self.root / "members"

    def member_manifest(self, workspace_id: str) -> Path:
        """``members/<workspace_id>.yml``."""
        return self.members_dir / f"{workspace_id}.yml"

    @property
    def queue(self) -> Path:
        """``queue.jsonl``, the local engine's queue events."""
        return self.root / "queue.jsonl"

    @property
    def submit_pid(self) -> Path:
        """``submit.pid``, held by the live local ``fleet submit``."""
        return self.root / "submit.pid"

    @property
    def acceptance_dir(self) -> Path:
        """``acceptance/``, the bounded fleet watches' evidence (named as a state
        root's: :meth:`StateLayout.watch_samples`, :meth:`StateLayout.watch_report`)."""
        return self.root / "acceptance"


class WorkerLayout:
    """Where a Temporal fleet worker keeps the workspaces it runs (nothing is created)::

        <worker root>/                 --root, default $XDG_DATA_HOME/prompt_runner/fleet-worker
          <fleet>/<workspace>/workspace.yml   the member's manifest as this worker runs it
          <fleet>/<workspace>/data/           its workspace root (clones, artifacts)
          <fleet>/<workspace>/runtime/        its runtime root (state, logs)
          <fleet>/<workspace>/state-ref       the state-ref commit this worker last
                                              restored or pushed (fleet/stateref.py)

    Args:
        root: the worker's root directory (one per worker on a shared machine).
    """

    __slots__ = ("root",)

    root: Path

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"WorkerLayout({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WorkerLayout) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def member_dir(self, fleet_id: str, workspace_id: str) -> Path:
        """``<fleet>/<workspace>/``."""
        return self.root / fleet_id / workspace_id

    def member_manifest(self, fleet_id: str, workspace_id: str) -> Path:
        """``<fleet>/<workspace>/workspace.yml``."""
        return self.member_dir(fleet_id, workspace_id) / "workspace.yml"

    def workspace_root(self, fleet_id: str, workspace_id: str) -> Path:
        """``<fleet>/<workspace>/data/``."""
        return self.member_dir(fleet_id, workspace_id) / "data"

    def runtime_root(self, fleet_id: str, workspace_id: str) -> Path:
        """``<fleet>/<workspace>/runtime/``."""
        return self.member_dir(fleet_id, workspace_id) / "runtime"

    def synced(self, fleet_id: str, workspace_id: str) -> Path:
        """``<fleet>/<workspace>/state-ref``: the last state-ref commit seen here."""
        return self.member_dir(fleet_id, workspace_id) / "state-ref"
