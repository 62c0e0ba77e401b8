"""A member's records of truth kept in its remote: the state ref (Temporal engine).

A Temporal worker runs a member on its own disk; when it dies another worker
must go on from what it had recorded. The worker therefore keeps the run's
records of truth -- ``progress.log``, the prompt records (``prompts/``), the
current run and its journal (``runs/``), the control log, the interventions,
the amendments, the notification log -- as a commit in the member's *packet
repository's remote*, under::

    refs/prompt-runner/state/<fleet>/<workspace>

Each snapshot is a commit whose tree holds those files at their paths below
the state root, and whose parent is the snapshot it continues: a push is never
forced, so a worker that was superseded (it lost its activity, another worker
pushed since) has its push rejected and stops (:class:`StateRefRejected`).
Nothing else is kept there: caches (``state.json``), views (the snapshot), the
event stream and the session transcripts stay on the machine that made them.

Why a ref in the same remote rather than the workflow's history or the
activity's heartbeat details (``docs/fleet.md``): the work branch is already
pushed to that remote after every prompt, so work and state move together, to
a place every worker can already write; a heartbeat keeps only its last
details and a few MB; a workflow history is bounded in events and size and
grows with every record. The heartbeat carries only the small live view
(prompt, progress, host) that ``fleet status`` shows.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .. import proc
from ..errors import InfrastructureError
from ..state.layout import StateLayout
from ..workspace import Workspace

REF_PREFIX = "refs/prompt-runner/state"
GIT_TIMEOUT_MS = 120_000


class StateRefRejected(InfrastructureError):
    """The remote refused the snapshot: another worker pushed the member's state since."""


def state_ref(fleet_id: str, workspace_id: str) -> str:
    """``refs/prompt-runner/state/<fleet>/<workspace>``."""
    return f"{REF_PREFIX}/{fleet_id}/{workspace_id}"


def truth_files(state: StateLayout) -> list[Path]:
    """The records of truth present under ``state`` (see the module docstring)."""
    files = [state.progress_log, state.current_run, state.control_log, state.notifications]
    for directory in (
        state.prompts_dir,
        state.interventions("x").parent,
        state.amendments_dir,
    ):
        if directory.is_dir():
            files += sorted(directory.glob("*.jsonl"))
    if state.runs_dir.is_dir():
        files += sorted(p / state.journal("x").name for p in state.runs_dir.iterdir() if p.is_dir())
    return [f for f in files if f.is_file()]


class StateRef:
    """The state ref of one member, through its packet repository's clone.

    Args:
        ws: the member's workspace (its packet repository's clone must exist).
        fleet_id: the fleet it belongs to.
    """

    def __init__(self, ws: Workspace, fleet_id: str) -> None:
        self.repo = ws.clone(ws.packet_repo)
        self.state = ws.layout.state
        self.ref = state_ref(fleet_id, ws.id)

    def _git(self, *args: str, env: dict[str, str] | None = None) -> proc.ProcResult:
        base = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        return proc.run(["git", *args], cwd=self.repo, env=base, timeout_ms=GIT_TIMEOUT_MS)

    def _checked(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = self._git(*args, env=env)
        if done.returncode != 0:
            said = (done.stderr or done.start_error or "").strip().splitlines()
            raise InfrastructureError(
                f"{self.repo}: `git {' '.join(args[:2])}` for the state ref failed: "
                f"{said[-1] if said else f'exit {done.returncode}'}"
            )
        return done.stdout

    def fetch(self) -> str | None:
        """Fetch the ref from ``origin``; its commit, or ``None`` when the remote has none.

        Raises:
            InfrastructureError: the remote cannot be read.
        """
        listed = self._checked("ls-remote", "origin", self.ref).split()
        if not listed:
            return None
        self._checked("fetch", "-q", "--no-write-fetch-head", "origin", f"+{self.ref}:{self.ref}")
        return listed[0]

    def restore(self, commit: str) -> int:
        """Write the snapshot ``commit``'s files into the state root; how many.

        Raises:
            InfrastructureError: git failed.
        """
        self.state.root.mkdir(parents=True, exist_ok=True)
        names = self._checked("ls-tree", "-r", "--name-only", commit).splitlines()
        with tempfile.TemporaryDirectory(prefix="pr-state-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._checked(f"--work-tree={self.state.root}", "checkout", commit, "--", ".", env=env)
        return len(names)

    def push(self, parent: str | None, *, who: str) -> str:
        """Commit the records of truth as a snapshot after ``parent`` and push it.

        Args:
            parent: the snapshot this one continues (``None``: the first).
            who: the worker identity, in the commit's message and author.

        Returns:
            The new snapshot's commit (``parent`` itself when nothing changed).

        Raises:
            StateRefRejected: the remote's ref is no longer ``parent``.
            InfrastructureError: git failed.
        """
        files = [str(p.relative_to(self.state.root)) for p in truth_files(self.state)]
        ident = {
            "GIT_AUTHOR_NAME": f"prompt-runner fleet worker {who}",
            "GIT_AUTHOR_EMAIL": "prompt-runner@localhost",
            "GIT_COMMITTER_NAME": f"prompt-runner fleet worker {who}",
            "GIT_COMMITTER_EMAIL": "prompt-runner@localhost",
        }
        with tempfile.TemporaryDirectory(prefix="pr-state-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), **ident}
            if files:
                self._checked(f"--work-tree={self.state.root}", "add", "-f", "--", *files, env=env)
            tree = self._checked("write-tree", env=env).strip()
        if parent is not None and self._checked("rev-parse", f"{parent}^{{tree}}").strip() == tree:
            return parent
        argv = ["commit-tree", tree, "-m", f"prompt-runner state of {self.ref} from {who}"]
        if parent is not None:
            argv += ["-p", parent]
        commit = self._checked(*argv, env=ident).strip()
        pushed = self._git("push", "-q", "--no-verify", "origin", f"{commit}:{self.ref}")
        if pushed.returncode != 0:
            said = (pushed.stderr or "").strip()
            if any(w in said for w in ("rejected", "fetch first", "non-fast-forward", "exists")):
                raise StateRefRejected(
                    f"the remote's {self.ref} has moved on: another worker runs this member now"
                )
            raise InfrastructureError(f"pushing {self.ref} failed: {said or pushed.returncode}")
        return commit
