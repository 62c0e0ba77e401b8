"""The library's packet inspection calls: what ``list``, ``packet explain|lint|doctor|
preflight``, ``checklist sync`` and ``capabilities`` print, as typed results.

Each function takes a packet directory (or its manifest file, or a loaded
:class:`~prompt_runner.packet.loader.Packet`) and returns a frozen result
whose ``to_dict()`` is the JSON document the CLI prints with ``--json``. The
CLI handlers call these same functions and only render them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import watch
from .api_calls import public
from .errors import ArgumentError
from .packet import doctor as packet_doctor
from .packet import lint as packet_lint
from .packet import loader
from .packet import preflight as packet_preflight
from .packet.lint import LintReport
from .packet.loader import Packet
from .state.layout import StateLayout

PacketArg = Packet | str | os.PathLike[str]


def _loaded(caller: str, packet: Any) -> Packet:
    if isinstance(packet, Packet):
        return packet
    return load_packet(_path(caller, packet))


def _path(caller: str, packet: Any) -> Path:
    """The path of ``packet``: a loaded Packet's root, or the path given.

    Raises:
        ArgumentError: neither a path nor a Packet.
    """
    if isinstance(packet, Packet):
        return packet.root
    if not isinstance(packet, str | os.PathLike):
        raise ArgumentError(
            f"must be a packet directory (a path) or a loaded Packet, not {packet!r}",
            key=f"{caller}(packet=...)",
            fix="pass e.g. 'path/to/packet'",
        )
    return Path(packet)


# -- explain ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExplainedPrompt:
    """One prompt as the loader resolved it: ``file`` relative to the packet,
    ``targets`` the resolved repo names, ``verify`` its contract as written."""

    id: str
    name: str
    phase: str | None
    file: str
    targets: tuple[str, ...]
    depends_on: tuple[str, ...]
    verify: dict[str, Any]


@dataclass(frozen=True)
class PacketExplanation:
    """The resolved manifest of a packet (``packet explain``).

    Attributes:
        packet: its name; ``root`` its directory.
        manifest: the validated manifest, as JSON (defaults filled in).
        repos: logical repo name -> absolute work-tree path (``packet`` included).
        default_repo: the repo a prompt without ``targets`` works in.
        prompts: every prompt, in run order.
    """

    packet: str
    root: Path
    manifest: dict[str, Any]
    repos: dict[str, Path]
    default_repo: str | None
    prompts: tuple[ExplainedPrompt, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.packet_explain/v1", "packet", "root", "manifest",
        "repos", "default_repo", "prompts": [...]}`` (paths as strings)."""
        return {
            "schema": "prompt_runner.packet_explain/v1",
            "packet": self.packet,
            "root": str(self.root),
            "manifest": self.manifest,
            "repos": {k: str(v) for k, v in self.repos.items()},
            "default_repo": self.default_repo,
            "prompts": [
                {
                    "id": p.id,
                    "name": p.name,
                    "phase": p.phase,
                    "file": p.file,
                    "targets": list(p.targets),
                    "depends_on": list(p.depends_on),
                    "verify": p.verify,
                }
                for p in self.prompts
            ],
        }


@public
def explain(packet: PacketArg) -> PacketExplanation:
    """The packet's resolved manifest, repos and prompts (``packet explain``).

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or an invalid manifest or prompt.
    """
    loaded = _loaded("explain", packet)
    return PacketExplanation(
        packet=loaded.name,
        root=loaded.root,
        manifest=loaded.manifest.model_dump(mode="json"),
        repos=dict(loaded.repos),
        default_repo=loaded.default_repo,
        prompts=tuple(
            ExplainedPrompt(
                id=p.id,
                name=p.name,
                phase=p.phase,
                file=p.relfile,
                targets=tuple(p.targets),
                depends_on=tuple(p.front.depends_on),
                verify=p.contract.to_raw(),
            )
            for p in loaded.prompts
        ),
    )


# -- lint, doctor, preflight ------------------------------------------------------------


@public
def lint(packet: PacketArg, *, strict: bool = False) -> LintReport:
    """Authoring hazards: constructs that load and run and silently do something else.

    Args:
        strict: promote every warning to an error (what CI wants).

    Returns:
        A :class:`~prompt_runner.packet.lint.LintReport` (``passed`` is false
        with any error; ``to_dict()`` is ``packet lint --json``).

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: ``packet`` is not a packet directory (a bad file inside is a finding).
    """
    return packet_lint.lint_packet(_path("lint", packet), strict=strict, plan=_planned)


lint_packet = lint  # its name before the library calls (``prompt_runner.lint_packet``)

# Exported from prompt_runner as they stand, their arguments checked (api_calls.public).
load_packet = public(loader.load_packet)
doctor_report = public(packet_doctor.doctor_report)
preflight_report = public(packet_preflight.preflight_report)
sample = public(watch.sample)


def _planned(root: Path) -> Packet:
    """The packet at ``root`` as ``plan`` resolves it (lint's whole-packet check)."""
    # lazy: only lint resolves a plan; list, explain and doctor need no runner
    from .api import plan

    return plan(root).packet


@dataclass(frozen=True)
class DoctorReport:
    """Authoring gaps and runtime readiness (``packet doctor``).

    Attributes:
        packet: the packet's name; ``root`` its directory.
        authoring_ready: no gap; ``authoring_warnings`` the gaps, each
            ``{kind, prompt_id, path, message}``.
        runtime_ready: the packet loads and its repos are ready;
            ``repos`` / ``readiness_errors`` as in :class:`PreflightReport`;
            ``load_error`` the sentence when the packet does not load.
    """

    packet: str
    root: Path
    authoring_ready: bool
    authoring_warnings: tuple[dict[str, Any], ...]
    runtime_ready: bool
    repos: tuple[dict[str, Any], ...]
    readiness_errors: tuple[dict[str, Any], ...]
    load_error: str | None

    @property
    def ready(self) -> bool:
        """Both authoring and runtime ready (``packet doctor`` exits 0)."""
        return self.authoring_ready and self.runtime_ready

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.doctor/v1", "packet", "root", "authoring_ready",
        "authoring_warnings", "runtime_ready", "repos", "readiness_errors", "load_error"}``."""
        from .packet.doctor import SCHEMA

        return {
            "schema": SCHEMA,
            "packet": self.packet,
            "root": str(self.root),
            "authoring_ready": self.authoring_ready,
            "authoring_warnings": list(self.authoring_warnings),
            "runtime_ready": self.runtime_ready,
            "repos": list(self.repos),
            "readiness_errors": list(self.readiness_errors),
            "load_error": self.load_error,
        }


@public
def doctor(packet: PacketArg) -> DoctorReport:
    """Authoring gaps (no prompts, no default repo, a prompt with no targets or no
    verify items, scaffold placeholders left) and runtime readiness.

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or its manifest is invalid (a prompt that does
            not load is ``load_error``, not raised).
    """
    from .packet.doctor import doctor_report

    doc = doctor_report(_path("doctor", packet))
    return DoctorReport(
        packet=doc["packet"],
        root=Path(doc["root"]),
        authoring_ready=doc["authoring_ready"],
        authoring_warnings=tuple(doc["authoring_warnings"]),
        runtime_ready=doc["runtime_ready"],
        repos=tuple(doc["repos"]),
        readiness_errors=tuple(doc["readiness_errors"]),
        load_error=doc["load_error"],
    )


@dataclass(frozen=True)
class PreflightReport:
    """Runtime readiness (``packet preflight``; what ``run`` checks before any session).

    Attributes:
        packet: the packet's name; ``root`` its directory.
        runtime_ready: no readiness error.
        repos: per repo ``{name, path, exists, git, ready, errors: [{kind}]}``.
        readiness_errors: ``{scope, name, kind, path}`` each (a ``scope:
            "prompt"`` one also ``file``, ``key``, ``reason``, ``fix``).
        warnings: ``{scope, name, kind, path, message}`` (a detached HEAD...).
    """

    packet: str
    root: Path
    runtime_ready: bool
    repos: tuple[dict[str, Any], ...]
    readiness_errors: tuple[dict[str, Any], ...]
    warnings: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.preflight/v1", "packet", "root", "runtime_ready",
        "repos", "readiness_errors", "warnings"}``."""
        return {
            "schema": "prompt_runner.preflight/v1",
            "packet": self.packet,
            "root": str(self.root),
            "runtime_ready": self.runtime_ready,
            "repos": list(self.repos),
            "readiness_errors": list(self.readiness_errors),
            "warnings": list(self.warnings),
        }


@public
def preflight(packet: PacketArg) -> PreflightReport:
    """Check every repo of the packet is there, a git work tree, and that no
    contract reaches into a submodule (``packet preflight``).

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or an invalid one.
    """
    from .packet.preflight import preflight_report

    doc = preflight_report(_loaded("preflight", packet))
    return PreflightReport(
        packet=doc["packet"],
        root=Path(doc["root"]),
        runtime_ready=doc["runtime_ready"],
        repos=tuple(doc["repos"]),
        readiness_errors=tuple(doc["readiness_errors"]),
        warnings=tuple(doc["warnings"]),
    )


# -- checklist sync ---------------------------------------------------------------------


@dataclass(frozen=True)
class Checklist:
    """One ``*.prompt.checklist.md`` written: the prompt's ``prompt_id`` and
    ``name``, the file's ``path``, and ``empty`` when its contract has no item."""

    prompt_id: str
    name: str
    path: Path
    empty: bool


@dataclass(frozen=True)
class ChecklistSync:
    """What ``checklist sync`` wrote: one :class:`Checklist` per prompt, in run order."""

    checklists: tuple[Checklist, ...]

    @property
    def written(self) -> tuple[Path, ...]:
        return tuple(c.path for c in self.checklists)

    @property
    def unverified(self) -> tuple[Checklist, ...]:
        """The prompts with no verification items yet."""
        return tuple(c for c in self.checklists if c.empty)

    def to_dict(self) -> dict[str, Any]:
        """``{"written": [paths], "unverified": [prompt ids]}``."""
        return {
            "written": [str(p) for p in self.written],
            "unverified": [c.prompt_id for c in self.unverified],
        }


@public
def checklist_sync(packet: PacketArg) -> ChecklistSync:
    """Write each prompt's ``<stem>.prompt.checklist.md`` from its contract (replacing it).

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or an invalid one.
        OSError: a checklist file cannot be written.
    """
    from .verifier import render_checklist

    loaded = _loaded("checklist_sync", packet)
    made = []
    for prompt in loaded.prompts:
        default = prompt.targets[0] if prompt.targets else None
        text = render_checklist(prompt.id, prompt.name, prompt.contract, default_repo=default)
        target = prompt.file.with_name(
            prompt.file.name.replace(".prompt.md", ".prompt.checklist.md")
        )
        target.write_text(text, encoding="utf-8")
        made.append(Checklist(prompt.id, prompt.name, target, prompt.contract.is_empty()))
    return ChecklistSync(tuple(made))


# -- list -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListedPrompt:
    """One prompt of ``list``: where it runs and its ``status`` -- what ``run
    --remaining`` acts on (``pending``, ``completed``, ``contract_changed`` for
    one completed under a contract that has changed since, ``failed``...)."""

    id: str
    name: str
    phase: str | None
    file: str
    targets: tuple[str, ...]
    provider: str
    model: str | None
    status: str


@dataclass(frozen=True)
class PromptList:
    """The packet's prompts in run order with their status (``list``)."""

    packet: str
    root: Path
    prompts: tuple[ListedPrompt, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"packet", "prompts": [{id, name, phase, file, targets, provider, model,
        status}]}``."""
        return {
            "packet": self.packet,
            "prompts": [
                {
                    "id": p.id,
                    "name": p.name,
                    "phase": p.phase,
                    "file": p.file,
                    "targets": list(p.targets),
                    "provider": p.provider,
                    "model": p.model,
                    "status": p.status,
                }
                for p in self.prompts
            ],
        }


@public
def list_prompts(packet: PacketArg) -> PromptList:
    """The packet's prompts, where each runs, and its recorded status (``list``).

    Reads ``<packet>/.prompt_runner`` (never writes): a prompt ``running``
    while no runner lives is shown ``interrupted``.

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or an invalid one.
        StateError: the progress records are corrupt.
    """
    from .api import plan
    from .api_status import status
    from .runner.lifecycle import reopen_changed_contracts
    from .state.store import FileStore

    p = plan(_loaded("list_prompts", packet), default_runtime_store="file", default_committer="git")
    state = status(p.packet)
    layout = StateLayout.of_packet(p.packet.root)
    progress = FileStore(layout.root).read_progress()
    recorded: dict[str, str] = {}
    for pp in p.prompts:
        record = state.get("prompts", {}).get(pp.id, {})
        # what --remaining acts on: the progress record, then the state's
        recorded[pp.id] = (
            progress[pp.id].status
            if pp.id in progress and record.get("status") != "interrupted"
            else record.get("status", "pending")
        )
    # completed under a contract changed since: --remaining runs it again
    statuses = reopen_changed_contracts(p.packet, layout.root, recorded)
    return PromptList(
        packet=p.packet.name,
        root=p.packet.root,
        prompts=tuple(
            ListedPrompt(
                id=pp.id,
                name=pp.prompt.name,
                phase=pp.prompt.phase,
                file=pp.prompt.relfile,
                targets=tuple(pp.prompt.targets),
                provider=pp.provider,
                model=pp.model,
                status=statuses[pp.id],
            )
            for pp in p.prompts
        ),
    )


# -- capabilities -----------------------------------------------------------------------


@dataclass(frozen=True)
class Capabilities:
    """What this build supports (``capabilities``): ``providers``, the contract's
    ``verify_clauses``, the ``runtime_stores`` and ``committers``, and which
    selectors (``selector``) and agent-control modes (``agent_control``) exist."""

    version: str
    providers: tuple[str, ...]
    verify_clauses: tuple[str, ...]
    selector: dict[str, Any]
    agent_control: dict[str, Any]
    runtime_stores: tuple[str, ...]
    committers: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"schema": "prompt_runner.capabilities/v1", "version", "providers", ...}``."""
        return {
            "schema": "prompt_runner.capabilities/v1",
            "version": self.version,
            "providers": list(self.providers),
            "verify_clauses": list(self.verify_clauses),
            "selector": dict(self.selector),
            "agent_control": dict(self.agent_control),
            "runtime_stores": list(self.runtime_stores),
            "committers": list(self.committers),
        }


@public
def capabilities() -> Capabilities:
    """What this build supports: providers, contract clauses, stores, committers."""
    from . import __version__
    from .providers.registry import provider_names
    from .verifier import contract_keys

    return Capabilities(
        version=__version__,
        providers=tuple(provider_names()),
        verify_clauses=tuple(contract_keys()),
        selector={
            "ids": True,
            "phase": True,
            "remaining": True,
            "upper_bound": True,
            "lower_bound": True,
            "continue": "api",
        },
        agent_control={"linear": True},
        runtime_stores=("file", "memory", "noop"),
        committers=("git", "noop", "callback"),
    )
