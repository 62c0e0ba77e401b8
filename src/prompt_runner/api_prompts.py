"""The library's per-prompt calls: what ``list``, ``checklist sync`` and
``capabilities`` print, as typed results.

``list_prompts`` and ``checklist_sync`` take a packet directory (or its
manifest file, or a loaded :class:`~prompt_runner.packet.loader.Packet`) and
return a frozen result whose ``to_dict()`` is the JSON document the CLI prints
with ``--json``. The CLI handlers call these same functions and only render them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .api_calls import public
from .api_packet import PacketArg, _loaded
from .errors import UserError
from .packet.gc_pause import gc_paused
from .providers.registry import provider_names
from .verifier import contract_keys
from .verifier.checklist import render_checklist

if TYPE_CHECKING:
    from .packet.loader import Packet, Prompt

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

    Every value (prompt id, name, each item's label) is written on its own line:
    a control character in it -- a newline in a contract path above all -- is
    shown as its escape (``\\n``), so no value can start a line of its own (a
    forged ``- [x]`` item). Each checklist is written to a new file renamed over
    its name (atomic; a hard link to it keeps its old content, so a file linked
    from outside the packet is never overwritten). A checklist that is a symlink
    is written through only when its real location is a
    ``*.prompt.checklist.md`` inside the packet; nothing is written unless every
    checklist passes that check.

    Raises:
        ArgumentError: ``packet`` is not a path or a Packet.
        UserError: not a packet, or an invalid one; or a checklist file is a
            directory, or a symlink whose real location is outside the packet, or
            is a packet file that is not a checklist (its prompt, the manifest...):
            nothing written.
        StorageError: a checklist file cannot be written (an ``OSError``; exit 3).
    """
    from .state.atomic import write_text_atomic  # lazy: only sync writes files

    loaded = _loaded("checklist_sync", packet)
    targets = [_checklist_file(loaded, prompt) for prompt in loaded.prompts]
    made = []
    for prompt, (target, write_to) in zip(loaded.prompts, targets, strict=True):
        default = prompt.targets[0] if prompt.targets else None
        write_text_atomic(
            write_to,
            render_checklist(prompt.id, prompt.name, prompt.contract, default_repo=default),
        )
        made.append(Checklist(prompt.id, prompt.name, target, prompt.contract.is_empty()))
    return ChecklistSync(tuple(made))


CHECKLIST_SUFFIX = ".prompt.checklist.md"


def _checklist_file(loaded: Packet, prompt: Prompt) -> tuple[Path, Path]:
    """``(checklist path, the file to replace)`` for ``prompt``: the path itself,
    or a symlink's real location when that is a checklist inside the packet.

    Raises:
        UserError: the checklist is a directory, or a symlink out of the packet,
            or to a packet file that is not a ``*.prompt.checklist.md``.
    """
    target = prompt.file.with_name(prompt.file.name.replace(".prompt.md", CHECKLIST_SUFFIX))
    try:
        real = target.resolve()
    except (RuntimeError, OSError):  # 3.11: a link loop is RuntimeError
        raise UserError(
            "is a symbolic link that loops (it leads back to itself)",
            file=target,
            fix="fix the link or remove it",
        ) from None
    inside = (loaded.root.resolve(), loaded.prompt_dir.resolve())
    if not any(real.is_relative_to(d) for d in inside):
        raise UserError(
            f"is a symlink to {real}, outside the packet; checklist sync would overwrite that file",
            file=target,
            fix="remove the link (sync then writes a regular file), or point it inside the packet",
        )
    if not target.is_symlink():
        if target.is_dir():  # a rename over it fails: the packet's fault, not the disk's
            raise UserError(
                "is a directory, not a checklist file; checklist sync writes the prompt's "
                "checklist there",
                file=target,
                fix="remove it (or move it out of the packet), then run checklist sync again",
            )
        return target, target
    if not real.name.endswith(CHECKLIST_SUFFIX) or real.is_dir():
        raise UserError(
            f"is a symlink to {real}, a packet file that is not a checklist; checklist sync "
            "would overwrite that file",
            file=target,
            fix=(
                "remove the link (sync then writes a regular file), or point it at a "
                f"*{CHECKLIST_SUFFIX} file inside the packet"
            ),
        )
    return target, real


# -- list -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListedPrompt:
    """One prompt of ``list``: where it runs and its ``status`` -- what ``run
    --remaining`` acts on (``pending``, ``completed``, ``contract_changed`` for
    one completed under a contract that has changed since, and for one that ended
    otherwise the word ``status`` shows: ``verification_failed``, ``failed``...)."""

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
    with gc_paused():  # the packet, its plan and its state: no cycles to look for
        return _list_prompts(packet)


def _list_prompts(packet: PacketArg) -> PromptList:
    # lazy: only list resolves a plan and reads the state; checklist sync and
    # capabilities (and the explain/preflight commands beside them) load no runner
    from .api import listing_plan
    from .api_status import status
    from .runner.lifecycle import reopen_changed_contracts
    from .state.layout import StateLayout
    from .state.store import FileStore

    p = listing_plan(_loaded("list_prompts", packet))
    state = status(p.packet)
    layout = p.state
    progress = FileStore(layout.root).read_progress()
    recorded: dict[str, str] = {}
    for pp in p.prompts:
        record = state.get("prompts", {}).get(pp.id, {})
        in_state = record.get("status")
        # what --remaining acts on: the progress record, then the state's
        if pp.id in progress and in_state != "interrupted":
            shown = progress[pp.id].status
            if shown == "failed" and in_state not in (None, "completed", "pending"):
                # progress.log keeps only "failed": the state says which, as status does
                shown = in_state
        else:
            shown = in_state or "pending"
        recorded[pp.id] = shown
    # completed under a contract changed since: --remaining runs it again
    # the records status() folded, when it read this same state root
    same_root = StateLayout.of_packet(p.packet.root).root == layout.root
    records = state.get("prompts") if same_root else None
    statuses = reopen_changed_contracts(p.packet, layout.root, recorded, records)
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
