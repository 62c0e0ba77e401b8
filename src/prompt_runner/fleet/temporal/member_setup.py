"""Before a member's runner starts on a worker: steps 1 to 3 of :mod:`.member`.

*materialize* the member's manifest under the worker's root, *sync* the
clones and the records of truth with the remote, stop a *predecessor* that
still holds the run; and the push of the work branches the state ref waits for.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ... import proc
from ...state.atomic import write_text_atomic
from ...state.fleet_layout import WorkerLayout
from ...supervise import stop_run
from ...workspace import Workspace, load_workspace
from ...workspace.prepare import prepare
from ..stateref import StateRef
from ..supervising import live, supervised

STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class Attempt:
    """Where and as whom one attempt runs: ``fleet``, ``workspace``, ``manifest``
    (the member's manifest data), ``identity`` (the worker), ``layout`` (its root)."""

    fleet: str
    workspace: str
    manifest: Mapping[str, Any]
    identity: str
    layout: WorkerLayout


def materialize(attempt: Attempt) -> Workspace:
    """Write the member's manifest as this worker runs it and load it (step 1).

    Raises:
        UserError: the manifest is not a valid workspace.
    """
    doc: dict[str, Any] = yaml.safe_load(yaml.safe_dump(dict(attempt.manifest)))
    fleet, ws_id, lay = attempt.fleet, attempt.workspace, attempt.layout
    doc["id"] = ws_id
    doc["operator"] = {
        **(doc.get("operator") or {}),
        "workspace_root": str(lay.workspace_root(fleet, ws_id)),
        "runtime_root": str(lay.runtime_root(fleet, ws_id)),
    }
    commits = doc.setdefault("commits", {})
    commits["push"] = "after_prompt"
    commits.setdefault("branch", f"prompt-runner/{fleet}/{ws_id}")
    for repo in (doc.get("repositories") or {}).values():
        if isinstance(repo, dict):
            repo.pop("source", None)
    path = lay.member_manifest(fleet, ws_id)
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    try:
        same = path.read_text(encoding="utf-8") == text
    except OSError:
        same = False
    if not same:
        write_text_atomic(path, text)
    return load_workspace(path)


def _cloned(ws: Workspace) -> bool:
    return all(r.clone.is_dir() for r in ws.repositories.values())


def sync(
    attempt: Attempt, ws: Workspace, say: Callable[[str], None]
) -> tuple[StateRef, str | None]:
    """Step 2: the clones and the state, as the remote has them; ``(ref, its commit)``.

    Raises:
        UserError: ``prepare`` refuses the manifest (a ``ref`` that names nothing on
            its remote, a clone it cannot use), naming the file and the key;
            :func:`.member.run_member` makes it the ``bad_input`` outcome.
        InfrastructureError, StorageError: git or the disk failed (retried).
    """
    marker = attempt.layout.synced(attempt.fleet, attempt.workspace)
    known = marker.read_text().strip() if marker.is_file() else None
    fresh = not _cloned(ws)
    if fresh:
        prepare(ws)
    ref = StateRef(ws, attempt.fleet)
    remote = ref.fetch()
    if remote is not None and remote != known:
        if not fresh:
            say(f"{ws.id}: another worker ran it since; this copy is discarded")
            for root in (ws.workspace_root, ws.runtime_root):
                shutil.rmtree(root, ignore_errors=True)
            prepare(ws)
            ref = StateRef(ws, attempt.fleet)
            ref.fetch()
        restored = ref.restore(remote)
        say(f"{ws.id}: restored {restored} record(s) from {ref.ref}")
        write_text_atomic(marker, remote + "\n")
    return ref, remote if remote is not None else known


def push_work(ws: Workspace) -> bool:
    """Push each clone's work branch that has commits beyond its ref; True when all went."""
    branch = ws.commits.branch
    ok = True
    for repo in ws.repositories.values():
        if branch is None or not repo.clone.is_dir():
            continue
        head = _git(repo.clone, "rev-parse", "HEAD")
        if head.returncode != 0:
            continue
        # nothing to push: no commit beyond the ref, or the remote has it already (the
        # runner's own push after the prompt updated the remote-tracking branch)
        known = _git(
            repo.clone,
            "rev-parse",
            f"refs/remotes/origin/{repo.ref}",
            f"refs/remotes/origin/{branch}",
        )
        if head.stdout.strip() in known.stdout.split():
            continue
        pushed = _git(
            repo.clone, "push", "-q", "--no-verify", "origin", f"HEAD:refs/heads/{branch}"
        )
        ok = ok and pushed.returncode == 0
    return ok


def _git(repo: Path, *args: str) -> proc.ProcResult:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return proc.run(["git", *args], cwd=repo, env=env, timeout_ms=120_000)


def wait_predecessor(ws: Workspace, beat: Callable[[], None], say: Callable[[str], None]) -> None:
    """Step 3: stop a runner of ``ws`` that still holds its lock here, heartbeating."""
    sup = supervised(ws)
    found = live(sup)
    if found is None:
        return
    say(f"{ws.id}: an earlier runner (pid {found.pid}) still holds the run; stopping it")
    stopper = threading.Thread(
        target=lambda: stop_run(sup, grace_s=STOP_GRACE_S), daemon=True, name="predecessor"
    )
    stopper.start()
    while stopper.is_alive() or live(sup) is not None:
        beat()
        stopper.join(0.5)
