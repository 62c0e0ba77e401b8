"""Which verification a contract amendment applies to (SPEC 5).

An amendment can arrive at any moment, also while the runner is verifying the
prompt it changes. Its receipt says which verification it applies to, and the
runner makes that true. Both sides meet under the amendment lock
(:func:`~prompt_runner.control.amendments.amendment_lock`):

* **The runner** (``runner/judging.py``), starting a verification, reads the
  effective contract and records the verification in
  ``<state_root>/amendments/verifying.json`` -- one step under the lock
  (:func:`begin`). When the verifier is done it re-reads the contract under
  the lock (:func:`settle`): if an amendment arrived meanwhile, the contract is
  verified again; else the marker's stage becomes ``verified`` with the
  verdict. A verification re-run :data:`MAX_ROUNDS` times is *frozen* for its
  last round: amendments arriving then are told they apply to the next
  verification, and they do. Once the attempt's outcome is recorded the
  stage becomes ``recorded`` (:func:`done`).
* **A writer** (``control amend|relax`` and amend/relax requests), under the
  lock, asks :func:`target`: a verification of this prompt in progress (of the
  live runner) -> ``in_progress``, the amendment is part of that verdict; a
  verification that already passed, or a prompt recorded completed ->
  ``deferred``, that verdict stands under the previous contract; otherwise
  ``next``, the prompt's next verification. The answer is the record's
  ``applies_to`` and goes into its receipt::

      {"verification": "in_progress"|"next"|"deferred", "prompt": "01",
       "run_id": "..."|null, "attempt": 2|null, "note": "Applies to ..."}

Marker format (a live view written without fsync, like the control snapshot,
and only while holding the lock, as it is read; one left by a dead runner is
ignored because its ``pid`` must be the live holder of ``run.pid``)::

    {"schema_version": 1, "run_id": "...", "pid": 1234, "prompt": "01",
     "attempt": 2|null, "stage": "verifying"|"frozen"|"verified"|"recorded",
     "pass": true|false|null, "contract_fingerprint": "<sha256>", "at": ISO8601}

``attempt`` is ``null`` for the pre-flight verification of ``--remaining``.

Completions remember their contract: a passing verification records
``contract_fingerprint`` on the prompt -- the fingerprint of the prompt file's
contract it was judged under (the contract the run loaded plus the persisted
amendments in force; run-local ones expire with their run and do not count).
A completed prompt whose prompt file's contract has another fingerprint now
(amended with ``--persist`` after it completed, or edited by hand) is not
completed for ``--remaining`` or a resume: :func:`changed_contracts`.

Only the standard library at import time: ``control steer`` reads the marker
(:func:`read_marker`) on the CLI's hot path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..state.records import PromptStatus

TYPE_CHECKING = False  # typing costs import time on the CLI hot path
if TYPE_CHECKING:
    from typing import Any

    from ..packet.loader import Packet, Prompt
    from ..verifier.model import Contract

SCHEMA_VERSION = 1
MARKER_NAME = "verifying.json"
MAX_ROUNDS = 5
"""Verifications of one attempt at most: the last one runs against a frozen contract."""

IN_PROGRESS, NEXT, DEFERRED = "in_progress", "next", "deferred"
RECORDED = "recorded"
JUDGING = frozenset({"verifying", "frozen", "verified"})
"""Marker stages while a prompt's last session is being judged (no session runs)."""


def marker_path(state_root: Path) -> Path:
    """``<state_root>/amendments/verifying.json``."""
    return Path(state_root) / "amendments" / MARKER_NAME


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


# -- the marker -----------------------------------------------------------------------


def read_marker(state_root: Path) -> dict[str, Any] | None:
    """The verification marker of the live runner, or ``None``.

    ``None`` when there is none, it is unreadable, or its ``pid`` is not the
    live process holding ``<state_root>/run.pid`` (a runner that died). Hold
    the amendment lock to act on the answer (:func:`locked_marker` does).
    """
    try:
        doc = json.loads(marker_path(state_root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not _held_by(state_root, doc.get("pid")):
        return None
    return doc


def _held_by(state_root: Path, pid: object) -> bool:
    if not isinstance(pid, int):
        return False
    from ..state.lock import identity_alive, read_pid_file

    try:
        ident = read_pid_file(Path(state_root) / "run.pid")
    except Exception:
        return False
    return ident is not None and ident.pid == pid and identity_alive(ident)


def _write_marker(state_root: Path, doc: Mapping[str, Any]) -> None:
    """Rewrite the marker in place; an I/O error only costs the receipts' precision.

    In place, not by temp file and rename: every writer and every reader that
    acts on it holds the amendment lock, and replacing (or unlinking) a file
    frees an inode, which costs milliseconds on a busy disk -- three times per
    verification.
    """
    path = marker_path(state_root)
    data = json.dumps(dict(doc), ensure_ascii=False).encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:
            return
    except OSError:
        return
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    except OSError:
        pass
    finally:
        os.close(fd)


def locked_marker(state_root: Path) -> dict[str, Any] | None:
    """:func:`read_marker` under the amendment lock (a whole marker, never half of one)."""
    with _locked(state_root):
        return read_marker(state_root)


@contextlib.contextmanager
def _locked(state_root: Path) -> Iterator[None]:
    """The amendment lock, or nothing when it cannot be taken (a read-only state root)."""
    from .amendments import amendment_lock

    with contextlib.ExitStack() as stack:
        with contextlib.suppress(OSError):
            stack.enter_context(amendment_lock(state_root))
        yield


# -- the runner's side ------------------------------------------------------------------


def begin(
    state_root: Path, run_id: str, prompt: Prompt, attempt: int | None
) -> tuple[Contract, str]:
    """Start a verification of ``prompt``: mark it and read its contract, under the lock.

    Returns:
        ``(effective contract, its fingerprint)``.

    Raises:
        UserError: the amended contract no longer validates (names the file).
    """
    from ..state._clock import iso_now
    from .amendments import effective_contract

    with _locked(state_root):
        contract = effective_contract(state_root, prompt, run_id)
        fingerprint = contract_fingerprint(contract.to_raw())
        _write_marker(
            state_root,
            {
                "schema_version": SCHEMA_VERSION,
                "run_id": run_id,
                "pid": os.getpid(),
                "prompt": prompt.id,
                "attempt": attempt,
                "stage": "verifying",
                "pass": None,
                "contract_fingerprint": fingerprint,
                "at": iso_now(millis=True),
            },
        )
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
    from ..state._clock import iso_now
    from .amendments import effective_contract

    with _locked(state_root):
        doc = _own_marker(state_root)
        frozen = doc is not None and doc.get("stage") == "frozen"
        if not frozen:
            contract = effective_contract(state_root, prompt, run_id)
            now = contract_fingerprint(contract.to_raw())
            if now != fingerprint:
                stage = "frozen" if rounds >= MAX_ROUNDS - 1 else "verifying"
                _write_marker(state_root, _marker(run_id, prompt.id, attempt, stage, None, now))
                return contract, now
        marker = _marker(run_id, prompt.id, attempt, "verified", passed, fingerprint)
        marker["at"] = iso_now(millis=True)
        _write_marker(state_root, marker)
    return None


def done(state_root: Path | None) -> None:
    """The attempt's outcome is recorded: the marker's stage becomes ``recorded``
    (no verification in progress; never raises). Replaced, not unlinked: an
    unlink costs a millisecond on some file systems, at every attempt."""
    if state_root is None:
        return
    with _locked(state_root):
        doc = _own_marker(state_root)
        if doc is not None and doc.get("stage") != RECORDED:
            _write_marker(state_root, {**doc, "stage": RECORDED})


def _own_marker(state_root: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(marker_path(state_root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("pid") == os.getpid() else None


def _marker(
    run_id: str, prompt_id: str, attempt: int | None, stage: str, passed: bool | None, fp: str
) -> dict[str, Any]:
    from ..state._clock import iso_now

    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "pid": os.getpid(),
        "prompt": prompt_id,
        "attempt": attempt,
        "stage": stage,
        "pass": passed,
        "contract_fingerprint": fp,
        "at": iso_now(millis=True),
    }


def persisted_fingerprint(state_root: Path, prompt: Prompt, run_id: str) -> str:
    """Fingerprint of the prompt file's contract a verdict in run ``run_id`` was judged
    under: the contract the run loaded plus the persisted amendments in force."""
    from .amendments import apply_record, in_force, read_amendments

    raw = prompt.contract.to_raw()
    for record in in_force(read_amendments(state_root, prompt.id), run_id):
        if record.get("persist"):
            raw = apply_record(raw, record)
    return contract_fingerprint(raw)


def changed_contracts(packet: Packet, state_root: Path, completed: Sequence[str]) -> list[str]:
    """The ids among ``completed`` whose completion was judged under another contract.

    A prompt whose record carries no ``contract_fingerprint`` (completed
    before fingerprints were recorded) keeps its completion.

    Raises:
        StateError: a prompt log is corrupt.
    """
    from ..state.store import FileStore

    if not (Path(state_root) / "prompts").is_dir():
        return []
    store = FileStore(Path(state_root))
    wanted = set(completed)
    out: list[str] = []
    for prompt in packet.prompts:
        if prompt.id not in wanted:
            continue
        recorded = store.load_prompt(prompt.id).get("contract_fingerprint")
        if isinstance(recorded, str) and recorded != contract_fingerprint(prompt.contract.to_raw()):
            out.append(prompt.id)
    return out


# -- the writers' side ---------------------------------------------------------------------


def target(
    state_root: Path,
    prompt_id: str,
    *,
    run_id: str | None,
    record: Mapping[str, Any],
    persist: bool,
) -> tuple[dict[str, Any], str | None]:
    """Which verification an amendment of ``prompt_id`` made now applies to.

    Call it holding the amendment lock, with the prompt's stored record.

    Args:
        run_id: the unfinished run the amendment is made for, or ``None``.
        record: the prompt's record (``{"status", "attempts": [...]}``).
        persist: the amendment edits the prompt file.

    Returns:
        ``(applies_to, phase)``: ``applies_to`` as in the module docstring;
        ``phase`` is ``post_success``/``post_failure`` when the marker holds a
        verdict the record does not show yet, else ``None``.
    """
    marker = read_marker(state_root) if run_id is not None else None
    if marker is not None and (
        (marker.get("prompt"), marker.get("run_id")) != (prompt_id, run_id)
        or marker.get("stage") not in JUDGING
    ):
        marker = None
    attempt = marker.get("attempt") if marker is not None else _last_attempt(record)
    if marker is not None and marker.get("stage") == "verifying":
        note = (
            f"Applies to the verification of {prompt_id} in progress "
            f"({_where(run_id, attempt)}): its verdict is judged against the amended contract."
        )
        return _doc(IN_PROGRESS, prompt_id, run_id, attempt, note), None
    phase = None
    passed = False
    if marker is not None and marker.get("stage") == "verified":
        passed = marker.get("pass") is True
        phase = "post_success" if passed else "post_failure"
    if passed or _completed(record):
        return _doc(DEFERRED, prompt_id, run_id, attempt, _deferred(prompt_id, run_id, persist)), (
            phase
        )
    later = f" in run {run_id}" if run_id else " (in the next run)"
    note = f"Applies to the next verification of {prompt_id}{later}."
    return _doc(NEXT, prompt_id, run_id, None, note), phase


def _deferred(prompt_id: str, run_id: str | None, persist: bool) -> str:
    head = (
        f"Deferred: {prompt_id} passed its verification under the previous contract, "
        "and that verdict stands."
    )
    if persist:
        return (
            f"{head} Its completion was judged against a contract the prompt file no longer "
            f"has, so `run --remaining` (or resuming the run) runs {prompt_id} again."
        )
    scope = f"run {run_id}" if run_id else "the next run"
    return (
        f"{head} This run-local amendment applies only if {prompt_id} is verified again in "
        f"{scope} (`run PACKET {prompt_id}` does that); `run --remaining` skips a completed "
        "prompt (with --persist it would run it again)."
    )


def _where(run_id: str | None, attempt: object) -> str:
    where = f"attempt {attempt}" if isinstance(attempt, int) else "pre-flight"
    return f"{where} of run {run_id}" if run_id else where


def _doc(
    verification: str, prompt_id: str, run_id: str | None, attempt: object, note: str
) -> dict[str, Any]:
    return {
        "verification": verification,
        "prompt": prompt_id,
        "run_id": run_id,
        "attempt": attempt if isinstance(attempt, int) else None,
        "note": note,
    }


def _last_attempt(record: Mapping[str, Any]) -> int | None:
    attempts = record.get("attempts") or []
    last = attempts[-1] if attempts else None
    value = last.get("attempt") if isinstance(last, Mapping) else None
    return value if isinstance(value, int) else None


def _completed(record: Mapping[str, Any]) -> bool:
    """Recorded completed, or its last attempt decided to complete (its commit pending)."""
    if record.get("status") == PromptStatus.COMPLETED:
        return True
    attempts = record.get("attempts") or []
    last = attempts[-1] if attempts else None
    return isinstance(last, Mapping) and last.get("decision") == "complete"
