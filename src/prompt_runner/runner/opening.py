"""Opening a run: its identity decided, its start recorded, what it skips and adopts.

:func:`open_run` is the run pipeline's step inside the locks
(:mod:`prompt_runner.runner.pipeline`), a sequence of named steps::

    foreign_changes     the target repos' uncommitted changes (git committer)
    choose_run_id       resume the unfinished run or start a new generation
    set_run_meta        touch state first: a corrupt record of truth fails here
    settle_previous     a resumed run settles what the dead runner left;
                        a new one claims the amendments waiting for it
    record_start        runs/current.json says "running"; the journal's first line
    completed_in_run    a resumed run skips what it already completed
    announce            "Starting run ..." / "Resuming run ..."

and returns the :class:`OpenedRun` the run's context is built from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import PacketChangedError, StateError, UserError
from ..planning import Plan
from ..planning.agent_owned import validate_agent_owned
from ..render.text import Console
from ..state._clock import iso_now
from ..state.records import PromptStatus, RunStatus
from ..state.store import RuntimeStore
from . import lifecycle
from .identity import fingerprint, new_run_id
from .workspace import Carry

ForeignChanges = dict[str, set[str]]
"""Per target repo, the paths already uncommitted as the run opened (not the run's work)."""

AdoptedWork = dict[str, dict[str, set[str]]]
"""Per interrupted prompt, per repo, the paths its dead runner left uncommitted."""


@dataclass(frozen=True)
class OpenedRun:
    """What opening a run decided (the run's context is built from it).

    Attributes:
        run_id: the run generation id (a resumed run keeps its id).
        resumed: True when an unfinished run of the same packet goes on.
        skip: selected prompts a resumed run already completed (not run again).
        foreign_changes: per target repo, the paths uncommitted before the run
            (git committer only; see :func:`lifecycle.warn_foreign_changes`),
            minus the adopted ones.
        adopted: interrupted prompts' uncommitted work, committed with them
            (see :func:`lifecycle.adopt_interrupted_work`).
        carry: the snapshot the foreign changes were read from, the first
            session's "before" (``None``: no git committer).
    """

    run_id: str
    resumed: bool
    skip: frozenset[str] = frozenset()
    foreign_changes: ForeignChanges = field(default_factory=dict)
    adopted: AdoptedWork = field(default_factory=dict)
    carry: Carry | None = None


def open_run(p: Plan, store: RuntimeStore, console: Console) -> OpenedRun:
    """Open (or resume) the run of ``p`` in ``store``; say what it starts.

    Raises:
        PacketChangedError: an unfinished run's packet changed (fails closed).
        UserError: resuming would widen the unfinished run's selection fence,
            or agent-owned completion is misconfigured.
        StateError: a record of truth is corrupt (before the run is recorded).
        StorageError: the state cannot be written.
    """
    foreign, carry = foreign_changes(p)
    run_id, resumed = choose_run_id(p, store, console)
    previous = store.read_current_run() or {}
    opened_at = iso_now()
    # Touch state first: a corrupt record of truth fails here, before the run
    # is recorded as running.
    store.set_run_meta({"run_id": run_id, "packet": p.packet.name, "started_at": opened_at})
    adopted = settle_previous(p, store, console, run_id, resumed=resumed, foreign=foreign)
    # said once the interrupted prompts took back their own work: theirs is not the user's
    lifecycle.warn_foreign_changes(foreign, console)
    record_start(p, store, run_id, resumed=resumed, previous=previous, opened_at=opened_at)
    skip = completed_in_run(p, store, resumed=resumed)
    announce(p, console, run_id, resumed=resumed, skip=skip)
    return OpenedRun(run_id, resumed, frozenset(skip), foreign, adopted, carry)


def foreign_changes(p: Plan) -> tuple[ForeignChanges, Carry | None]:
    """The git committer's uncommitted changes already in the target repos,
    and its snapshot as a carry (``({}, None)`` otherwise)."""
    if p.committer != "git":
        return {}, None
    return lifecycle.foreign_changes(p)


def choose_run_id(p: Plan, store: RuntimeStore, console: Console) -> tuple[str, bool]:
    """Decide the run id: resume an unfinished run or start a new generation.

    ``--new-run`` over an unfinished run appends ``run_superseded`` to the old
    run's journal, naming its successor (``new_run_id``,
    ``new_packet_fingerprint``, ``reason: "explicit_new_run"``), as the
    reference does.

    Returns:
        ``(run_id, resumed)``.

    Raises:
        PacketChangedError: an unfinished run's packet changed (fails closed).
        UserError: resuming would widen the unfinished run's selection fence.
    """
    validate_agent_owned(p.packet)  # before the run is recorded
    current = store.read_current_run()
    if not current or current.get("status") == RunStatus.COMPLETED or not current.get("run_id"):
        return new_run_id(), False
    old_id = str(current["run_id"])
    fp = fingerprint(p)
    if p.options.new_run:
        new_id = new_run_id()
        supersede(store, old_id, new_id, fp, console)
        console.say(f"Superseding unfinished run {old_id} with {new_id} (--new-run).")
        return new_id, False
    if current.get("fingerprint") not in (None, fp):
        raise PacketChangedError(
            f"the packet changed since unfinished run {old_id} started",
            file=p.packet.root,
            fix="pass --new-run to start a new run generation (completed prompts stay "
            "completed), or restore the packet",
        )
    fence = list(current.get("targets") or [])
    outside = [i for i in p.selected if fence and i not in fence]
    if outside:
        raise UserError(
            f"resuming unfinished run {old_id} would widen its selection to "
            f"{', '.join(outside)} (its fence is {', '.join(fence)})",
            file=p.packet.root,
            fix="select prompts inside the fence, or pass --new-run",
        )
    return old_id, True


def supersede(store: RuntimeStore, old_id: str, new_id: str, fp: str, console: Console) -> None:
    """The reference's record: the old run's journal names its successor
    (a corrupt old journal is a warning: it must not block a new run)."""
    superseded = {
        "reason": "explicit_new_run",
        "new_run_id": new_id,
        "new_packet_fingerprint": fp,
        "by": "new_run",
        "at": iso_now(),
    }
    try:
        journal = store.journal(old_id)
        try:
            journal.append("run_superseded", superseded)
        finally:
            journal.close()
    except StateError as exc:
        console.say(f"warning: could not record the supersession: {exc}")


def settle_previous(
    p: Plan,
    store: RuntimeStore,
    console: Console,
    run_id: str,
    *,
    resumed: bool,
    foreign: ForeignChanges,
) -> AdoptedWork:
    """A resumed run records what the dead runner left "running" as interrupted
    and (git committer) adopts those prompts' uncommitted work, taking it out
    of ``foreign`` in place; a new run claims the run-local amendments made
    while no run was unfinished. Returns the adopted work."""
    if resumed:
        interrupted = lifecycle.settle_interrupted(store, console)
        if p.committer == "git":
            return lifecycle.adopt_interrupted_work(p, interrupted, foreign, console)
    elif store.root is not None:
        lifecycle.claim_amendments(p, store.root, run_id, console)
    return {}


def record_start(
    p: Plan,
    store: RuntimeStore,
    run_id: str,
    *,
    resumed: bool,
    previous: dict[str, Any],
    opened_at: str,
) -> None:
    """Record the run as running: ``runs/current.json`` (its fence, first start
    and this resumption) and ``run_started`` / ``run_resumed`` in its journal.

    Args:
        previous: ``runs/current.json`` as it was before this run opened.
        opened_at: when this invocation opened the run (ISO 8601 UTC).
    """
    fence = list(previous.get("targets") or p.selected) if resumed else list(p.selected)
    store.write_current_run(
        {
            "run_id": run_id,
            "fingerprint": fingerprint(p),
            "status": RunStatus.RUNNING,
            "targets": fence,
            "packet": p.packet.name,
            "started_at": previous.get("started_at", opened_at) if resumed else opened_at,
            "resumed_at": opened_at if resumed else None,
        }
    )
    journal = store.journal(run_id)
    try:
        journal.append(
            "run_resumed" if resumed else "run_started",
            {"targets": list(p.selected), "fingerprint": fingerprint(p)},
        )
    finally:
        journal.close()


def completed_in_run(p: Plan, store: RuntimeStore, *, resumed: bool) -> list[str]:
    """The selected prompts a resumed run already completed, in plan order
    (none when prompts are named: naming one runs it again). A completion
    judged under a contract changed since does not count, nor one this run
    re-ran and lost to a crash (its state record says interrupted)."""
    if not resumed or p.options.ids:
        return []
    done = {k: v.status for k, v in store.read_progress().items()}
    done = lifecycle.reopen_changed_contracts(p.packet, store.root, done)
    done = lifecycle.reopen_interrupted_reruns(store, done)
    return [i for i in p.selected if done.get(i) == PromptStatus.COMPLETED]


def announce(p: Plan, console: Console, run_id: str, *, resumed: bool, skip: Sequence[str]) -> None:
    """``Starting run <id>: <packet>, prompts ...`` (or ``Resuming``) and what it skips."""
    todo = [i for i in p.selected if i not in skip]
    verb = "Resuming" if resumed else "Starting"
    console.say(f"{verb} run {run_id}: {p.packet.name}, prompts {', '.join(todo) or '(none)'}")
    if skip:
        console.say(
            f"Skipping {', '.join(skip)}: already completed in this run "
            "(name their ids to run them again)."
        )
