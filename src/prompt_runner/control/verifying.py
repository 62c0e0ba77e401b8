"""Which verification a contract amendment applies to: the runner's side (SPEC 5).

An amendment can arrive at any moment, also while the runner is verifying the
prompt it changes. Its receipt says which verification it applies to, and the
runner makes that true. Both sides meet under the amendment lock
(:func:`~prompt_runner.control.audit.amendment_lock`):

* **The runner** (``runner/judging.py``), starting a verification, reads the
  effective contract and records the verification in the marker
  ``<state_root>/amendments/verifying.json`` (``control/marker.py``) -- one
  step under the lock (:func:`begin`). When the verifier is done it re-reads
  the contract under the lock (:func:`settle`): if an amendment arrived
  meanwhile, the contract is verified again; else the marker's stage becomes
  ``verified`` with the verdict. A verification re-run :data:`MAX_ROUNDS`
  times is *frozen* for its last round: amendments arriving then are told
  they apply to the next verification, and they do. Once the attempt's
  outcome is recorded the stage becomes ``recorded`` (:func:`done`).
* **A writer** (``control amend|relax`` and amend/relax requests), under the
  lock, asks :func:`~prompt_runner.control.applies_to.target` whether the
  amendment is part of the verification in progress (``in_progress``), of
  the prompt's next one (``next``), or comes after a verdict that stands
  (``deferred``); the answer is the record's ``applies_to`` and goes into its
  receipt.

Completions remember their contract: a passing verification records
``contract_fingerprint`` on the prompt -- the fingerprint of the prompt file's
contract it was judged under (the contract the run loaded plus the persisted
amendments in force; run-local ones expire with their run and do not count).
A completed prompt whose prompt file's contract has another fingerprint now
(amended with ``--persist`` after it completed, or edited by hand) is not
completed for ``--remaining`` or a resume: :func:`changed_contracts`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..state.layout import StateLayout
from ..state.store import FileStore
from .amendments import apply_record, effective_contract, in_force, read_amendments
from .audit import quiet_amendment_lock
from .marker import RECORDED, new_marker, write_marker

if TYPE_CHECKING:
    from ..packet.loader import Packet, Prompt
    from ..verifier.model import Contract

MAX_ROUNDS = 5
"""Verifications of one attempt at most: the last one runs against a frozen contract."""


_WRITTEN: dict[Path, tuple[int, dict[str, Any]]] = {}
"""The marker this process last wrote, per state root: ``(pid, marker)``.

Only :mod:`verifying` writes the marker (others read it under the lock), so
what a state root's file says, when this process wrote it, is what it last
wrote there -- :func:`settle` and :func:`done` take it from here instead of
reading the file back (an ``open``, a read and a JSON parse each, twice a
prompt). The pid guards a forked child, which must not act on its parent's
marker (its own marker's ``pid`` differs)."""

_FINGERPRINTS: dict[int, tuple[Contract, str]] = {}
""":func:`contract_fingerprint` of a loaded prompt's contract, by ``id`` (the
contract is held, so its ``id`` is not reused): the attempt loop fingerprints
the same unamended contract up to three times a prompt."""


def _wrote(state_root: Path, doc: dict[str, Any]) -> None:
    write_marker(state_root, doc)
    _WRITTEN[state_root] = (os.getpid(), doc)


def _own(state_root: Path) -> dict[str, Any] | None:
    """The marker this process last wrote at ``state_root`` (hold the amendment lock)."""
    kept = _WRITTEN.get(state_root)
    return kept[1] if kept is not None and kept[0] == os.getpid() else None


def _fingerprint_of(contract: Contract) -> str:
    kept = _FINGERPRINTS.get(id(contract))
    if kept is not None and kept[0] is contract:
        return kept[1]
    fingerprint = contract_fingerprint(contract.to_raw())
    if len(_FINGERPRINTS) >= 4096:  # many packets loaded in one process (a library user)
        _FINGERPRINTS.clear()
    _FINGERPRINTS[id(contract)] = (contract, fingerprint)
    return fingerprint


def contract_fingerprint(raw: Mapping[str, Sequence[Any]]) -> str:
    """sha256 of a canonical contract (``Contract.to_raw()`` form).

    Order-insensitive: clauses and the entries of a clause are sorted, so a
    contract read back from a prompt file that ``--persist`` rewrote has the
    fingerprint of the contract it was computed from. Empty clauses count as
    absent.
    """
    doc = {
        clause: sorted(json.dumps(e, sort_keys=True, ensure_ascii=False) for e in entries)
        for clause, entries in raw.items()
        if entries
    }
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def begin(
    state_root: Path, run_id: str, prompt: Prompt, attempt: int | None
) -> tuple[Contract, str]:
    """Start a verification of ``prompt``: mark it and read its contract, under the lock.

    Returns:
        ``(effective contract, its fingerprint)``.

    Raises:
        UserError: the amended contract no longer validates (names the file).
    """
    with quiet_amendment_lock(state_root):
        contract = effective_contract(state_root, prompt, run_id)
        fingerprint = _fingerprint_of(contract)
        _wrote(state_root, new_marker(run_id, prompt.id, attempt, "verifying", None, fingerprint))
    return contract, fingerprint


def settle(
    state_root: Path,
    run_id: str,
    prompt: Prompt,
    attempt: int | None,
    fingerprint: str,
    *,
    passed: bool,
    rounds: int,
) -> tuple[Contract, str] | None:
    """Finish a verification round of ``prompt``, under the lock.

    Args:
        fingerprint: the fingerprint of the contract this round verified.
        passed: its verdict.
        rounds: verifications of this attempt so far (this one included).

    Returns:
        ``None`` when the contract is unchanged (or the round was frozen): the
        verdict stands and the marker says ``verified``. Else ``(amended
        contract, fingerprint)`` to verify again; when ``rounds`` reached
        :data:`MAX_ROUNDS` - 1 that next round is frozen.

    Raises:
        UserError: the amended contract no longer validates.
    """
    with quiet_amendment_lock(state_root):
        doc = _own(state_root)
        frozen = doc is not None and doc.get("stage") == "frozen"
        if not frozen:
            contract = effective_contract(state_root, prompt, run_id)
            now = _fingerprint_of(contract)
            if now != fingerprint:
                stage = "frozen" if rounds >= MAX_ROUNDS - 1 else "verifying"
                _wrote(state_root, new_marker(run_id, prompt.id, attempt, stage, None, now))
                return contract, now
        _wrote(state_root, new_marker(run_id, prompt.id, attempt, "verified", passed, fingerprint))
    return None


def done(state_root: Path | None) -> None:
    """The attempt's outcome is recorded: the marker's stage becomes ``recorded``
    (no verification in progress; never raises). Replaced, not unlinked: an
    unlink costs a millisecond on some file systems, at every attempt.

    Nothing is done -- not even the lock taken -- when this process's last
    marker there is ``recorded`` already or it wrote none (a pre-flight pass
    calls this before and after its verification)."""
    if state_root is None:
        return
    doc = _own(state_root)  # only this thread of this process writes it
    if doc is None or doc.get("stage") == RECORDED:
        return
    with quiet_amendment_lock(state_root):
        _wrote(state_root, {**doc, "stage": RECORDED})


def persisted_fingerprint(state_root: Path, prompt: Prompt, run_id: str) -> str:
    """Fingerprint of the prompt file's contract a verdict in run ``run_id`` was judged
    under: the contract the run loaded plus the persisted amendments in force."""
    persisted = [
        r for r in in_force(read_amendments(state_root, prompt.id), run_id) if r.get("persist")
    ]
    if not persisted:
        return _fingerprint_of(prompt.contract)
    raw = prompt.contract.to_raw()
    for record in persisted:
        raw = apply_record(raw, record)
    return contract_fingerprint(raw)


def changed_contracts(
    packet: Packet,
    state_root: Path,
    completed: Sequence[str],
    records: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The ids among ``completed`` whose completion was judged under another contract.

    A prompt whose record carries no ``contract_fingerprint`` (completed
    before fingerprints were recorded) keeps its completion. ``records``: the
    prompt records already folded from this state root (``status``'s
    ``prompts``), so their logs are not read again; a prompt not in it is read.

    Raises:
        StateError: a prompt log is corrupt.
    """
    if not StateLayout(state_root).prompts_dir.is_dir():
        return []
    store = FileStore(Path(state_root))
    wanted = set(completed)
    out: list[str] = []
    for prompt in packet.prompts:
        if prompt.id not in wanted:
            continue
        record = records.get(prompt.id) if records is not None else None
        if record is None:
            record = store.load_prompt(prompt.id)
        recorded = record.get("contract_fingerprint")
        if isinstance(recorded, str) and recorded != contract_fingerprint(prompt.contract.to_raw()):
            out.append(prompt.id)
    return out
