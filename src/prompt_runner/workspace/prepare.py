"""``workspace prepare``: the only operation that writes clones, idempotently.

The steps, in order (:data:`STEPS`), each a plain function of the workspace
and what the steps before it found:

1. ``check`` -- the requirements hold, the roots are directories (or do not
   exist yet: :func:`.ready.root_problems`), no other manifest registered under the
   id shares the clones or state (:func:`.claims.other_manifest`), no run
   of the workspace is live (:mod:`.claims`), and every existing clone is
   usable and clean; a dirty, shared or foreign clone is refused *before
   anything is written* (one sentence naming it and its dirty paths), as are
   a live run (exit 3: it would fail on clones rewritten under it) and an id
   registered from another manifest (exit 2, naming both);
2. ``runtime`` -- the runtime root and its state directory exist;
3. ``clones`` -- absent clones are made, present ones fetched and
   fast-forwarded (:mod:`.clones`);
4. ``artifacts`` -- contract artifacts built and installed when their key changed;
5. ``binding`` -- a packet repo that resolves outside the clones is noted
   (``plan`` and ``doctor`` report it as a problem); a ``packet.path`` that
   names no packet in its clone is refused (exit 2) after step 6, so what was
   prepared is recorded and the manifest's mistake is not called prepared;
6. ``record`` -- ``workspace.lock.json`` and the registry entry are written
   when what they say changed.

Steps 3 to 6 run holding the state directory's lock that a runner takes to
take ``run.pid`` (:func:`.claims.runs_held_off`, which checks for a live run
again first): a run started meanwhile waits for prepare to end.

A second ``prepare`` with nothing new upstream does nothing: each step
compares before writing, and the result says ``changed: false``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .. import __version__, git
from ..errors import UserError
from ..state.atomic import read_json_object, write_json_atomic
from ..state.usable import prepare_state_dir
from .artifacts import build_artifact, is_current
from .binding import packet_binding
from .claims import refuse_live_run, refuse_other_manifest, runs_held_off
from .clones import CloneState, inspect_clone, make_clone, refuse_unusable, update_clone
from .model import Workspace
from .ready import make_root, packet_problem, root_notes, root_problems
from .registry import read_registration, register_workspace, registration_path
from .requirements import check_requirements

LOCK_SCHEMA = "prompt_runner.workspace.lock/v1"


@dataclass
class _Work:
    """What the steps share: the clones found, the previous lock, what was done."""

    states: dict[str, CloneState] = field(default_factory=dict)
    previous: dict[str, Any] = field(default_factory=dict)
    artifacts: dict[str, Any] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PrepareResult:
    """What ``prepare`` did.

    Attributes:
        workspace: the workspace id.
        changed: something was written.
        actions: what changed, one line each (empty: nothing).
        notes: things worth knowing that changed nothing (a fetch that failed
            while bootstrapping, a diverged work branch left alone).
        heads: repository -> its clone's HEAD after prepare.
        lock: the lock file's path.
    """

    workspace: str
    changed: bool
    actions: tuple[str, ...]
    notes: tuple[str, ...]
    heads: dict[str, str | None]
    lock: str

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.workspace.prepare/v1", ...}``."""
        return {
            "schema": "prompt_runner.workspace.prepare/v1",
            "workspace": self.workspace,
            "changed": self.changed,
            "actions": list(self.actions),
            "notes": list(self.notes),
            "heads": dict(self.heads),
            "lock": self.lock,
        }


def _check(ws: Workspace, work: _Work) -> None:
    check_requirements(ws)
    for problem in root_problems(ws):
        raise problem  # nothing can be cloned or recorded there
    refuse_other_manifest(ws)
    refuse_live_run(ws)
    for name, repo in ws.repositories.items():
        state = inspect_clone(repo)
        if state.present:
            with _in_manifest(ws):
                refuse_unusable(state)
        work.states[name] = state
    work.previous = read_json_object(ws.layout.lock) or {}


def _clones(ws: Workspace, work: _Work) -> None:
    if not all(state.present for state in work.states.values()):
        make_root(ws, "operator.workspace_root")  # /proc takes none: the manifest's fault
    for name, repo in ws.repositories.items():
        state = work.states[name]
        with _in_manifest(ws):
            lines = update_clone(repo, state) if state.present else make_clone(repo)
        for line in lines:
            (work.notes if _is_note(line) else work.actions).append(line)


@contextmanager
def _in_manifest(ws: Workspace) -> Iterator[None]:
    """A clone's refusal (keyed ``repositories.NAME...``, no file) names ``ws``'s manifest.

    Raises:
        UserError: the refusal, with the manifest's file.
    """
    try:
        yield
    except UserError as exc:
        if exc.file is not None:
            raise
        raise UserError(exc.reason, file=ws.manifest_path, key=exc.key, fix=exc.fix) from None


def _is_note(line: str) -> bool:
    return "could not fetch" in line or "has diverged" in line


def _artifacts(ws: Workspace, work: _Work) -> None:
    previous = work.previous.get("artifacts") or {}
    for artifact in ws.artifacts:
        old = previous.get(artifact.id)
        if is_current(ws, artifact, old):
            work.artifacts[artifact.id] = old
            continue
        work.artifacts[artifact.id] = build_artifact(ws, artifact)
        work.actions.append(f"artifact {artifact.id}: built and installed at {artifact.installed}")


def _runtime(ws: Workspace, work: _Work) -> None:
    if not ws.state_dir.is_dir():
        make_root(ws, "operator.runtime_root")
        prepare_state_dir(ws.state_dir)
        work.actions.append(f"runtime: created {ws.runtime_root}")


def _binding(ws: Workspace, work: _Work) -> None:
    work.notes.extend(root_notes(ws))
    _, problems = packet_binding(ws)  # prepared anyway: plan and doctor refuse to run it
    missing = packet_problem(ws)  # refused once the rest is recorded (prepare's end)
    work.notes.extend(p for p in problems if missing is None or p != str(missing))


def _record(ws: Workspace, work: _Work) -> None:
    lock = _lock(ws, work)
    if {k: v for k, v in work.previous.items() if k != "prepared_at"} != lock:
        write_json_atomic(ws.layout.lock, {**lock, "prepared_at": _now()})
        work.actions.append(f"lock: wrote {ws.layout.lock}")
    entry = read_registration(registration_path(ws.id))
    if entry is None or entry.manifest != ws.manifest_path:
        register_workspace(ws)
        was = f" (it named {entry.manifest})" if entry is not None else ""
        work.actions.append(f"registry: registered {ws.id!r} -> {ws.manifest_path}{was}")


def _lock(ws: Workspace, work: _Work) -> dict[str, Any]:
    return {
        "schema": LOCK_SCHEMA,
        "schema_version": 1,
        "workspace": ws.id,
        "manifest": str(ws.manifest_path),
        "runner_version": __version__,
        "repositories": {
            name: {
                "path": str(repo.clone),
                "remote": repo.remote,
                "ref": repo.ref,
                "branch": repo.branch,
                "head": git.head_sha(repo.clone),
            }
            for name, repo in ws.repositories.items()
        },
        "artifacts": work.artifacts,
    }


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


STEPS: tuple[Callable[[Workspace, _Work], None], ...] = (
    _check,
    _runtime,
    _clones,
    _artifacts,
    _binding,
    _record,
)
"""The steps of :func:`prepare`, in order."""

HELD_FROM = 2
"""``STEPS[HELD_FROM:]`` run with runs held off (:func:`.claims.runs_held_off`)."""


def prepare(ws: Workspace) -> PrepareResult:
    """Make ``ws``'s clones, artifacts and runtime root what the manifest says.

    Raises:
        UserError: an unmet requirement, a root that is (or lies under) a file,
            the id registered from another manifest that still carries it, or an
            existing clone that is dirty, shared, foreign or diverged (nothing is
            written for all but the last); a ``packet.path`` that names no packet
            in its clone, once everything else is prepared and recorded.
        RunLiveError: a run of the workspace is live (an ``InfrastructureError``,
            exit 3, naming the run and ``prompt-runner stop``; nothing written).
        InfrastructureError: git or an artifact build failed.
        StorageError: the lock, registry or runtime root cannot be written.
    """
    work = _Work()
    for step in STEPS[:HELD_FROM]:
        step(ws, work)
    with runs_held_off(ws):
        for step in STEPS[HELD_FROM:]:
            step(ws, work)
    missing = packet_problem(ws)
    if missing is not None:  # the clones are right; the manifest names no packet in them
        raise UserError(
            f"{missing.reason}; the clones are prepared, but there is no packet to run",
            file=ws.manifest_path,
            key=missing.key,
            fix=f"{missing.fix}, then prepare again",
        )
    return PrepareResult(
        workspace=ws.id,
        changed=bool(work.actions),
        actions=tuple(work.actions),
        notes=tuple(work.notes),
        heads={name: git.head_sha(repo.clone) for name, repo in ws.repositories.items()},
        lock=str(ws.layout.lock),
    )
