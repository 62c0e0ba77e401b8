"""The library's packet inspection calls: what ``packet explain|lint|doctor|preflight``
print, as typed results (``list``, ``checklist sync`` and ``capabilities`` are
:mod:`prompt_runner.api_prompts`).

Each function takes a packet directory (or its manifest file, or a loaded
:class:`~prompt_runner.packet.loader.Packet`) and returns a frozen result
whose ``to_dict()`` is the JSON document the CLI prints with ``--json``. The
CLI handlers call these same functions and only render them.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import watch
from .api_calls import public
from .errors import ArgumentError, UserError
from .packet import doctor as packet_doctor
from .packet import lint as packet_lint
from .packet import loader
from .packet import preflight as packet_preflight
from .packet.lint import LintReport
from .packet.loader import Packet

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
sample = public(watch.sample)


@public
def preflight_report(
    packet: PacketArg,
    *,
    needs_git: bool = True,
    needs_identity: bool | None = None,
    prompts: Collection[str] | None = None,
    check_ignored: bool = False,
) -> dict[str, Any]:
    """Check every declared repo, and the contracts of ``prompts``: the document
    :func:`prompt_runner.packet.preflight.preflight_report` returns (which says
    what each argument does), for a packet path or a loaded ``Packet``.

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet, or another
            argument is of the wrong type.
        UserError: ``packet`` is a path to an invalid packet.
    """
    given = packet if isinstance(packet, Packet) else _path("preflight_report", packet)
    return packet_preflight.preflight_report(
        given,
        needs_git=needs_git,
        needs_identity=needs_identity,
        prompts=prompts,
        check_ignored=check_ignored,
    )


def _planned(root: Path) -> Packet:
    """The packet at ``root`` as ``plan`` resolves it (lint's whole-packet check)."""
    # lazy: only lint resolves a plan; list, explain and doctor need no runner
    from .api import plan

    return plan(root).packet


def _launch_errors(packet: Packet | Path) -> list[dict[str, Any]]:
    """What ``run`` checks first -- each prompt's provider CLI (and its failover
    targets') can start -- as readiness errors (``planning.launch_readiness_errors``)."""
    # lazy: only doctor and preflight resolve a plan; list and explain need no runner
    from .api import plan
    from .planning import launch_readiness_errors

    p = plan(packet)
    return launch_readiness_errors(p.packet, p.selected_prompts())


@dataclass(frozen=True)
class DoctorReport:
    """Authoring gaps and runtime readiness (``packet doctor``).

    Attributes:
        packet: the packet's name; ``root`` its directory.
        authoring_ready: no gap; ``authoring_warnings`` the gaps, each
            ``{kind, prompt_id, path, message}``.
        runtime_ready: the packet loads, its repos are ready and each
            prompt's provider CLI can start (``run``'s first check);
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
        return {
            "schema": packet_doctor.SCHEMA,
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
    doc = packet_doctor.doctor_report(_path("doctor", packet))
    if doc["load_error"] is None:
        try:
            launch = _launch_errors(Path(doc["root"]))
        except UserError as exc:  # the plan does not resolve: what run would say first
            doc["load_error"], launch = str(exc), []
            doc["runtime_ready"] = False
        doc["readiness_errors"] = [*doc["readiness_errors"], *launch]
        doc["runtime_ready"] = doc["runtime_ready"] and not launch
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
            "prompt"`` one also ``file``, ``key``, ``reason``, ``fix``; a
            ``scope: "provider"`` one, ``kind: "provider_missing"``, also
            ``reason`` and ``prompts``, the ids whose sessions could not start).
        warnings: ``{scope, name, kind, path, message}`` (a detached HEAD; an
            ``output_ignored`` contract output also ``repo``, ``file``, ``key``).
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
    """Check every repo of the packet is there, a git work tree, that no
    contract reaches into a submodule, and that each prompt's provider CLI can
    start (``packet preflight``); warn about contract outputs git ignores.

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or an invalid one.
    """
    loaded = _loaded("preflight", packet)
    doc = packet_preflight.preflight_report(loaded, check_ignored=True)
    launch = _launch_errors(loaded)
    doc["readiness_errors"] = [*doc["readiness_errors"], *launch]
    doc["runtime_ready"] = doc["runtime_ready"] and not launch
    return PreflightReport(
        packet=doc["packet"],
        root=Path(doc["root"]),
        runtime_ready=doc["runtime_ready"],
        repos=tuple(doc["repos"]),
        readiness_errors=tuple(doc["readiness_errors"]),
        warnings=tuple(doc["warnings"]),
    )
