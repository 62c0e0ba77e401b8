"""``workspace doctor``: is the workspace ready to run? Read-only.

Each check is ``ok``, ``warning`` or ``error``; the workspace is ready when no
check is an error. A dirty clone is a *warning* (resumable work: a crash
must never make unfinished work impossible to resume), never an error.
Checks: the requirements, the roots (``operator.workspace_root`` and
``runtime_root`` directories, or not there yet; either one a file ends the
checks), the id (not registered from another manifest that
still carries it and shares these clones or state: ``registry``), each clone
(present, independent, its origin, on the expected branch and holding the
expected ref), the packet and its repo binding, what ``run``'s own preflight
refuses in the clones (``ready``: no identity, signing that fails, an
unfinished merge -- ``packet.preflight``'s one check), the runtime root
writable, git and the agents' CLIs on PATH, the ``.tool-versions`` pins of each clone,
the artifacts installed, the containment.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import PromptRunnerError
from ..packet.loader import load_packet
from ..packet.preflight import preflight_report
from ..planning.launch import check_launchable
from ..planning.resolve import resolve_plan
from .binding import packet_binding
from .claims import other_manifest
from .clones import CloneState, inspect_clone
from .model import Repository, Workspace
from .ready import root_problems
from .requirements import unmet_requirements
from .toolchain import check_pin, containment_available, read_pins

Level = Literal["ok", "warning", "error"]


@dataclass(frozen=True)
class Check:
    """One finding: ``name`` (what was checked), ``level``, ``message``."""

    name: str
    level: Level
    message: str


@dataclass(frozen=True)
class WorkspaceDoctorReport:
    """``ready`` when no check is an error; ``checks`` in the order they ran."""

    workspace: str
    checks: tuple[Check, ...]

    @property
    def ready(self) -> bool:
        return all(c.level != "error" for c in self.checks)

    @property
    def resumable(self) -> tuple[str, ...]:
        """The repositories whose clones hold uncommitted (resumable) work."""
        return tuple(c.name.split(":", 1)[1] for c in self.checks if c.name.startswith("dirty:"))

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.workspace.doctor/v1", "ready", "checks": [...]}``."""
        return {
            "schema": "prompt_runner.workspace.doctor/v1",
            "workspace": self.workspace,
            "ready": self.ready,
            "resumable": list(self.resumable),
            "checks": [c.__dict__ for c in self.checks],
        }


def doctor(ws: Workspace) -> WorkspaceDoctorReport:
    """Check ``ws`` (nothing is written; git runs without optional locks)."""
    checks: list[Check] = []
    unmet = unmet_requirements(ws)
    checks += [Check("requires", "error", u) for u in unmet] or [
        Check("requires", "ok", "this build meets the requirements")
    ]
    roots = root_problems(ws)  # the sentences prepare and start refuse with
    checks += [Check(str(p.key), "error", str(p)) for p in roots]
    if roots:
        return WorkspaceDoctorReport(ws.id, tuple(checks))
    other = other_manifest(ws)
    if other is not None:
        checks.append(
            Check(
                "registry",
                "error",
                f"the id {ws.id!r} is registered from another manifest, {other}, which "
                "still carries it and whose clones and state these are: give this manifest an "
                "id of its own",
            )
        )
    for repo in ws.repositories.values():
        checks += _clone_checks(repo, inspect_clone(repo))
    _, problems = packet_binding(ws)
    checks += [Check("packet", "error", p) for p in problems]
    if not problems and ws.packet_dir.is_dir():
        checks.append(Check("packet", "ok", f"{ws.packet_dir} loads; its repos are the clones"))
        checks += _readiness_checks(ws)
        checks += _agent_checks(ws)
    checks.append(_runtime_check(ws.runtime_root))
    checks.append(
        Check("tool:git", "ok", shutil.which("git") or "")
        if shutil.which("git")
        else Check("tool:git", "error", "git is not on PATH")
    )
    for repo in ws.repositories.values():
        for pin in read_pins(repo.clone):
            why = check_pin(pin)
            checks.append(
                Check(f"pin:{pin.tool}", "error", why)
                if why
                else Check(f"pin:{pin.tool}", "ok", f"{pin.tool} {pin.version} ({pin.file})")
            )
    for artifact in ws.artifacts:
        path = artifact.installed
        ok = path.is_file() and os.access(path, os.X_OK)
        checks.append(
            Check(f"artifact:{artifact.id}", "ok", str(path))
            if ok
            else Check(f"artifact:{artifact.id}", "error", f"{path} is not built; run prepare")
        )
    available, what = containment_available(ws.containment)
    checks.append(Check("containment", "ok" if available else "error", f"{ws.containment}: {what}"))
    return WorkspaceDoctorReport(ws.id, tuple(checks))


def _clone_checks(repo: Repository, state: CloneState) -> list[Check]:
    name = f"clone:{repo.name}"
    if not state.present:
        return [Check(name, "error", f"{repo.clone} does not exist; run prepare")]
    if state.problem is not None:
        return [Check(name, "error", f"{repo.clone} {state.problem}")]
    out: list[Check] = []
    want = repo.branch or (repo.ref if state.branch is not None or state.target else None)
    if repo.branch and state.branch != repo.branch:
        out.append(
            Check(
                name,
                "error",
                f"is on {state.branch or 'a detached HEAD'}, not the "
                f"work branch {repo.branch}; run prepare",
            )
        )
    elif state.target is None:
        out.append(Check(name, "error", f"{repo.ref!r} is not known in the clone; run prepare"))
    elif state.behind and not state.ahead:
        out.append(
            Check(
                name,
                "warning",
                f"{state.behind} commit(s) behind {repo.ref}; prepare fast-forwards it",
            )
        )
    elif state.behind:
        out.append(
            Check(
                name,
                "warning",
                f"diverged from {repo.ref} ({state.ahead} ahead, {state.behind} behind)",
            )
        )
    else:
        ahead = f", {state.ahead} commit(s) of work on top" if state.ahead else ""
        out.append(Check(name, "ok", f"at {repo.ref} on {want or 'HEAD'}{ahead}"))
    if state.dirty:
        shown = ", ".join(state.dirty[:10])
        out.append(
            Check(
                f"dirty:{repo.name}",
                "warning",
                f"resumable work: {len(state.dirty)} uncommitted path(s) ({shown})",
            )
        )
    return out


def _readiness_checks(ws: Workspace) -> list[Check]:
    """What ``run``'s own preflight refuses in the clones (``packet preflight``'s
    one check, with the workspace's committer): an identity to commit with,
    commits git can sign, no unfinished merge or rebase. One ``ready`` check
    when there is nothing to say."""
    try:
        report = preflight_report(
            load_packet(ws.packet_dir), needs_git=ws.commits.committer == "git"
        )
    except PromptRunnerError as exc:
        return [Check("ready", "error", str(exc))]
    failures = [
        Check(
            f"ready:{err['name']}",
            "error",
            f"repo {err['name']!r} ({err['path']}) {err.get('reason') or err['kind']}; "
            f"{err.get('fix') or 'see packet preflight'}",
        )
        for err in report["readiness_errors"]
    ]
    return failures or [Check("ready", "ok", "the clones pass run's preflight")]


def _agent_checks(ws: Workspace) -> list[Check]:
    try:
        p = resolve_plan(load_packet(ws.packet_dir))
    except PromptRunnerError as exc:
        return [Check("plan", "error", str(exc))]
    out: list[Check] = []
    seen: set[str] = set()
    for pp in p.selected_prompts():
        if pp.provider in seen:
            continue
        seen.add(pp.provider)
        try:
            check_launchable(p.packet, pp)
        except PromptRunnerError as exc:
            out.append(Check(f"agent:{pp.provider}", "error", str(exc)))
        else:
            out.append(Check(f"agent:{pp.provider}", "ok", "can start"))
    return out


def _runtime_check(root: Path) -> Check:
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.is_dir() and os.access(probe, os.W_OK | os.X_OK):
        made = "" if probe == root else f" (created under {probe} by prepare)"
        return Check("runtime", "ok", f"{root} is writable{made}")
    return Check("runtime", "error", f"{root} is not writable ({probe})")
