"""``workspace plan``: what ``prepare`` and a run would do, read-only (no network, no writes).

For each repository: clone it (from where, at which ref, onto which branch),
update it (fetch and fast-forward), or refuse it (dirty, shared, foreign).
An id registered from another manifest and a live run of the workspace are
problems too (prepare refuses both, :mod:`.claims`).
Then the artifacts to build, where the packet and its state live, the run's
argv, and the problems that would stop ``prepare`` (:attr:`WorkspacePlan.problems`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .binding import packet_binding
from .claims import live_run_of, live_sentence, other_manifest
from .clones import inspect_clone
from .model import Workspace
from .ready import packet_problem, root_notes, root_problems
from .requirements import unmet_requirements
from .runspec import run_command


@dataclass(frozen=True)
class RepoPlan:
    """One repository: ``action`` is ``clone``, ``update`` or ``refuse``; ``detail`` says how."""

    name: str
    clone: str
    remote: str
    ref: str
    branch: str | None
    action: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class WorkspacePlan:
    """What ``prepare`` and ``start`` would do for a workspace.

    Attributes:
        workspace: the workspace id; ``manifest``: its path.
        repositories: one :class:`RepoPlan` each.
        artifacts: ``{"id", "build", "in", "installed"}`` each.
        packet: ``{"repo", "path", "dir", "state_dir", "bound"}``; ``bound`` maps each
            packet repo to its clone, once the packet's clone exists (else ``None``).
        settings: containment, commits, failure policy, runtime and workspace roots.
        run: the run's argv (:func:`~.runspec.run_command`).
        problems: sentences that would stop ``prepare`` or the run (empty: none).
        unmet: those of ``problems`` that are the manifest's bad input, which
            ``prepare`` or ``start`` refuse with exit 2 (``workspace plan`` exits 2
            too): an unmet ``requires``, ``operator.workspace_root`` or
            ``runtime_root`` not a directory, a ``packet.path`` naming no packet.
        notes: what is worth knowing but stops nothing (a root inside a git
            work tree: :func:`.ready.root_notes`).
    """

    workspace: str
    manifest: str
    repositories: tuple[RepoPlan, ...]
    artifacts: tuple[dict[str, Any], ...]
    packet: dict[str, Any]
    settings: dict[str, Any]
    run: tuple[str, ...]
    problems: tuple[str, ...]
    unmet: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No problems."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.workspace.plan/v1", ...}``."""
        return {
            "schema": "prompt_runner.workspace.plan/v1",
            "workspace": self.workspace,
            "manifest": self.manifest,
            "ok": self.ok,
            "repositories": [r.to_dict() for r in self.repositories],
            "artifacts": [dict(a) for a in self.artifacts],
            "packet": dict(self.packet),
            "settings": dict(self.settings),
            "run": list(self.run),
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def plan(ws: Workspace) -> WorkspacePlan:
    """The plan of ``ws`` (reads the clones that exist; writes nothing).

    Bad input ``prepare`` and ``start`` refuse with exit 2 -- an unmet
    ``requires``, a root that is not a directory, a ``packet.path`` that names no
    packet in its clone -- is in :attr:`WorkspacePlan.unmet` as well as in
    ``problems``, in the same sentences (:mod:`.ready`).
    """
    roots = [str(problem) for problem in root_problems(ws)]
    unmet = (*unmet_requirements(ws), *roots)
    problems = list(unmet)
    if roots:  # the clones and state cannot be looked at where they cannot be
        return _plan(ws, [], problems, unmet)
    other = other_manifest(ws)
    if other is not None:
        problems.append(
            f"the id {ws.id!r} is already registered from another manifest, {other}, whose "
            "clones and state are these; prepare refuses it: give this manifest an id of its own"
        )
    found = live_run_of(ws)
    if found is not None:
        problems.append(live_sentence(ws, found))
    repos = []
    for name, repo in ws.repositories.items():
        state = inspect_clone(repo)
        on = f", then branch {repo.branch}" if repo.branch else ""
        if not state.present:
            via = repo.source or repo.remote
            action, detail = "clone", f"git clone --no-hardlinks {via} at {repo.ref}{on}"
        elif state.problem is not None:
            action, detail = "refuse", f"{state.path} {state.problem}"
            problems.append(f"repository {name!r}: {detail}")
        elif state.dirty:
            action, detail = "refuse", f"uncommitted changes: {', '.join(state.dirty[:10])}"
            problems.append(f"repository {name!r}: the clone has {detail}")
        else:
            action, detail = "update", f"fetch origin, fast-forward only{on}"
        repos.append(
            RepoPlan(name, str(repo.clone), repo.remote, repo.ref, repo.branch, action, detail)
        )
    bound, binding_problems = packet_binding(ws)
    problems.extend(binding_problems)
    missing = packet_problem(ws)
    if missing is not None:
        unmet = (*unmet, str(missing))
    return _plan(ws, repos, problems, unmet, bound)


def _plan(
    ws: Workspace,
    repos: list[RepoPlan],
    problems: list[str],
    unmet: tuple[str, ...],
    bound: dict[str, str] | None = None,
) -> WorkspacePlan:
    return WorkspacePlan(
        notes=tuple(root_notes(ws)),
        workspace=ws.id,
        manifest=str(ws.manifest_path),
        repositories=tuple(repos),
        artifacts=tuple(
            {
                "id": a.id,
                "build": list(a.build),
                "in": str(ws.clone(a.repo) / a.project),
                "output": a.output,
                "installed": str(a.installed),
            }
            for a in ws.artifacts
        ),
        packet={
            "repo": ws.packet_repo,
            "path": ws.packet_path,
            "dir": str(ws.packet_dir),
            "state_dir": str(ws.state_dir),
            "bound": bound,
        },
        settings={
            "workspace_root": str(ws.workspace_root),
            "runtime_root": str(ws.runtime_root),
            "containment": ws.containment,
            "commits": {
                "mode": ws.commits.mode,
                "committer": ws.commits.committer,
                "push": ws.commits.push,
                "branch": ws.commits.branch,
            },
            "failure_policy": ws.failure_policy,
        },
        run=run_command(ws).argv,
        problems=tuple(problems),
        unmet=unmet,
    )
