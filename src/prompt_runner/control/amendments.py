"""Contract amendments (SPEC 5): ``amend`` adds a requirement, ``relax`` removes one.

Each amendment is one JSON line in ``<state_root>/amendments/<prompt_id>.jsonl``::

    {"schema_version": 1, "prompt": "01", "direction": "amend"|"relax",
     "operation": "add"|"drop"|"remove", "add"|"drop"|"remove": ...,
     "reason": "...", "author": "ada"|null, "phase": "pre_verify"|"post_failure"|"post_success",
     "persist": false, "run_id": "..."|null, "at": ISO8601,
     "before": {clause: [entry, ...]}, "after": {clause: [entry, ...]},
     "applies_to": {"verification": "in_progress"|"next"|"deferred", ...}}

``applies_to`` says which verification the amendment changes (see
``control/verifying.py``, which also keeps it true while a verification runs).

Run-local by default: the prompt file stays authoritative, and the runner
verifies :func:`effective_contract` = the file's contract with the
amendments in force for its run applied in order (:func:`in_force`). A run
from clean state (no ``.prompt_runner/``) therefore uses the file's contract.
With ``persist`` this one change is also written back into the prompt file's
``verify:`` block through a ruamel.yaml round trip (comments and key order
kept; ``control/persist.py``). A live run loaded its prompts before that edit, so a persisted record
made during an unfinished run is in force for that run too, exactly like a
run-local one; later runs read it from the file. Applying a record is
idempotent (an add skips entries already there, a drop of a missing clause is
a no-op), so a persisted record applied again over a file that has it
changes nothing.

Writers serialise on :func:`~prompt_runner.control.audit.amendment_lock` (an
exclusive ``flock`` on ``<state_root>/amendments/.lock``): the read of the prompt file and of the
records, the new record's ``before``/``after``, the prompt file's atomic
replacement and the record's append happen as one step, so concurrent
``amend --persist`` calls never lose each other's change.

The phase says when, relative to verification, the contract changed: the
verifier report of the prompt's latest recorded attempt decides
(``pre_verify`` when there is none, e.g. before any run or after a pre-flight
completion).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..state._clock import iso_now
from ..state.layout import StateLayout
from ..verifier import check_contract_paths, parse_contract
from .audit import append_record_line

if TYPE_CHECKING:
    from ..packet.loader import Prompt
    from ..verifier.model import Contract

SCHEMA_VERSION = 1
PHASES = ("pre_verify", "post_failure", "post_success")


def amendments_path(state_root: Path, prompt_id: str) -> Path:
    """``<state_root>/amendments/<prompt_id>.jsonl``."""
    return StateLayout(state_root).amendments(prompt_id)


def read_amendments(state_root: Path | None, prompt_id: str) -> list[dict[str, Any]]:
    """Every complete amendment record of ``prompt_id``, oldest first (``[]`` if none)."""
    if state_root is None:
        return []
    try:
        data = amendments_path(state_root, prompt_id).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return []
    out: list[dict[str, Any]] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a torn last line: the record was never written whole
        if isinstance(value, dict):
            out.append(value)
    return out


def phase_of(record: Mapping[str, Any]) -> str:
    """The amendment phase from a prompt record (``{"attempts": [...]}``).

    Returns:
        ``pre_verify`` when no attempt has a verifier report, else
        ``post_success`` or ``post_failure`` by the latest report's ``pass``.
    """
    attempts = record.get("attempts") or []
    for attempt in reversed(attempts):
        verifier = attempt.get("verifier") if isinstance(attempt, Mapping) else None
        if isinstance(verifier, Mapping) and "pass" in verifier:
            return "post_success" if verifier["pass"] else "post_failure"
    return "pre_verify"


def canonical(raw: Mapping[str, Any], *, file: str, key: str) -> dict[str, list[Any]]:
    """Validate a ``{clause: value}`` mapping and return its canonical raw form.

    Raises:
        UserError: an unknown clause, a bad entry or an escaping path.
    """
    return parse_contract(dict(raw), file=file, key=key).to_raw()


def apply_record(raw: Mapping[str, list[Any]], record: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Return ``raw`` (canonical contract) with one amendment record applied.

    ``add`` appends entries not already present; ``drop`` removes whole
    clauses; ``remove`` removes equal entries (a clause left empty goes).
    """
    out = {k: list(v) for k, v in raw.items()}
    for clause, entries in (record.get("add") or {}).items():
        have = out.setdefault(clause, [])
        have.extend(e for e in entries if e not in have)
    for clause in record.get("drop") or []:
        out.pop(clause, None)
    for clause, entries in (record.get("remove") or {}).items():
        kept = [e for e in out.get(clause, []) if e not in entries]
        if kept:
            out[clause] = kept
        else:
            out.pop(clause, None)
    return out


def _claims(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Pending record ``at`` -> the run that claimed it."""
    out: dict[str, str] = {}
    for r in records:
        if r.get("op") == "claim":
            for at in r.get("claims") or []:
                out[str(at)] = str(r.get("run_id"))
    return out


def in_force(records: Sequence[Mapping[str, Any]], run_id: str | None) -> list[dict[str, Any]]:
    """The records that apply to run ``run_id`` on top of the prompt file.

    A run-local amendment belongs to one run and expires with it: the
    unfinished run it was made in, or -- made when no run was unfinished --
    the next run to start, which claims it (:func:`claim_pending`).

    A persisted amendment made during an unfinished run is in force for that
    run as well: the run loaded its prompts before the file was edited, and a
    persisted change is at least as strong as a run-local one. Applying it
    over a file that already has it changes nothing. A persisted amendment
    made between runs is never replayed: it lives in the prompt file (which
    the user may have edited since), and the next run reads it from there.
    """
    if run_id is None:
        return []
    claims = _claims(records)
    return [
        dict(r)
        for r in records
        if r.get("op") != "claim"
        and (
            r.get("run_id") == run_id
            or (
                not r.get("persist")
                and r.get("run_id") is None
                and claims.get(str(r.get("at"))) == run_id
            )
        )
    ]


def pending(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Run-local records made with no unfinished run, not yet claimed by a run."""
    claims = _claims(records)
    return [
        dict(r)
        for r in records
        if r.get("op") != "claim"
        and not r.get("persist")
        and r.get("run_id") is None
        and str(r.get("at")) not in claims
    ]


def claim_pending(state_root: Path | None, prompt_id: str, run_id: str) -> int:
    """A new run adopts the amendments waiting for it; returns how many."""
    if state_root is None:
        return 0
    waiting = pending(read_amendments(state_root, prompt_id))
    if waiting:
        append_record_line(
            amendments_path(state_root, prompt_id),
            {
                "schema_version": SCHEMA_VERSION,
                "op": "claim",
                "prompt": prompt_id,
                "run_id": run_id,
                "claims": [r.get("at") for r in waiting],
            },
        )
    return len(waiting)


def effective_raw(
    state_root: Path | None, prompt: Prompt, run_id: str | None
) -> dict[str, list[Any]]:
    """The canonical contract the runner enforces for ``prompt`` in run ``run_id``."""
    raw = prompt.contract.to_raw()
    for record in in_force(read_amendments(state_root, prompt.id), run_id):
        raw = apply_record(raw, record)
    return raw


def effective_contract(state_root: Path | None, prompt: Prompt, run_id: str | None) -> Contract:
    """The contract to verify: the prompt file's plus the amendments in force (:func:`in_force`).

    Cheap when there are none (one failed ``open``), so the attempt loop may
    call it before every verification.

    Args:
        state_root: the packet's ``.prompt_runner/`` (``None`` = in-memory run).
        prompt: the loaded prompt.

    Raises:
        UserError: the amended contract no longer validates (names the file).
    """
    if not in_force(read_amendments(state_root, prompt.id), run_id):
        return prompt.contract
    return parse_contract(
        effective_raw(state_root, prompt, run_id), file=str(prompt.file), key="verify (amended)"
    )


def amendment_fields(state_root: Path | None, prompt_id: str, run_id: str | None) -> dict[str, Any]:
    """Prompt-record fields naming the amendments in force in ``run_id`` (``{}`` when none)."""
    records = in_force(read_amendments(state_root, prompt_id), run_id)
    if not records or state_root is None:
        return {}
    return {
        "amended": True,
        "amendments": [
            {
                k: r.get(k)
                for k in ("direction", "operation", "add", "drop", "remove", "reason", "phase")
                if r.get(k) is not None
            }
            | {"author": r.get("author"), "at": r.get("at"), "persist": bool(r.get("persist"))}
            for r in records
        ],
        "amendments_file": str(amendments_path(state_root, prompt_id)),
    }


def make_record(
    prompt: Prompt,
    command: str,
    params: Mapping[str, Any],
    *,
    state_root: Path,
    author: str | None,
    phase: str,
    run_id: str | None,
    applies_to: Mapping[str, Any] | None = None,
    repos: Mapping[str, Path] | None = None,
) -> dict[str, Any]:
    """Build (not write) the amendment record of a validated ``amend``/``relax``.

    Args:
        params: output of ``requests.validate_amendment``.
        applies_to: which verification it applies to (``control/verifying.py``
            :func:`~prompt_runner.control.verifying.target`), kept in the record.
        repos: the packet's repos (``Packet.repos``): given, the amended
            contract must pass the loader's own checks (:func:`check_loads`).

    Raises:
        UserError: an added/removed entry is invalid, an added path holds a
            control character, a dropped clause is not in the effective
            contract, or (with ``repos``) the amended contract is one the
            packet loader refuses.
    """
    before = effective_raw(state_root, prompt, run_id)
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "prompt": prompt.id,
        "direction": command,
    }
    file = str(prompt.file)
    if command == "amend":
        record["operation"] = "add"
        record["add"] = canonical(params["add"], file=file, key="--add")
        _refuse_control_characters(record["add"], file=file)
    else:
        if params.get("drop"):
            missing = [c for c in params["drop"] if c not in before]
            if missing:
                raise UserError(
                    f"the contract has no `{missing[0]}` clause",
                    file=file,
                    key="verify",
                    fix=f"drop one of {', '.join(before) or '(none: the contract is empty)'}",
                )
            record["drop"] = list(params["drop"])
        if params.get("remove"):
            record["remove"] = canonical(params["remove"], file=file, key="--remove")
        record["operation"] = "drop" if params.get("drop") else "remove"
    after = apply_record(before, record)
    if repos is not None:
        check_loads(prompt, after, repos=repos)
    record.update(
        {
            "reason": params["reason"],
            "author": author,
            "phase": phase,
            "persist": bool(params.get("persist")),
            "run_id": run_id,
            "at": iso_now(),
            "before": before,
            "after": after,
        }
    )
    if applies_to is not None:
        record["applies_to"] = dict(applies_to)
    return record


def check_loads(prompt: Prompt, raw: Mapping[str, Any], *, repos: Mapping[str, Path]) -> None:
    """Refuse the contract ``raw`` for ``prompt`` unless the packet loader would load it.

    The loader's own checks of a prompt's ``verify:`` block
    (:func:`~prompt_runner.verifier.parse_contract` and
    :func:`~prompt_runner.verifier.check_contract_paths`, the prompt's first
    target its default repo), so an amendment can never hold what the loader
    refuses in the file: a path in a git directory, ``REPO:PATH``, an unknown repo.

    Raises:
        UserError: the loader's sentence (file, ``verify.CLAUSE[i]``, the
            value, the fix), saying the amendment is refused.
    """
    file = str(prompt.file)
    try:
        contract = parse_contract(dict(raw), file=file, key="verify")
        check_contract_paths(
            contract,
            repos=dict(repos),
            default_repo=prompt.targets[0] if prompt.targets else None,
            file=file,
        )
    except UserError as exc:
        raise refused_amendment(
            exc, "the packet loader refuses that, so the amendment is refused"
        ) from None


def refused_amendment(exc: UserError, consequence: str) -> UserError:
    """The loader's refusal ``exc`` (its file, key and fix kept) with
    `` -- CONSEQUENCE`` added to its reason: what it means for the amendment."""
    return UserError(f"{exc.reason} -- {consequence}", file=exc.file, key=exc.key, fix=exc.fix)


def _refuse_control_characters(add: Mapping[str, Sequence[Any]], *, file: str) -> None:
    """Refuse an added path holding a newline or another control character: almost
    surely a paste or quoting mistake, and a check of it prints broken lines."""
    contract = parse_contract(dict(add), file=file, key="--add")
    for clause, entries in contract.entries.items():
        for index, entry in enumerate(entries):
            for path in entry.written_paths():
                if any(unicodedata.category(ch) == "Cc" for ch in path):
                    raise UserError(
                        f"path {json.dumps(path, ensure_ascii=False)} holds a newline or "
                        "another control character",
                        file=file,
                        key=f"--add.{clause}[{index}]",
                        fix="name the path without it (check the shell quoting)",
                    )


def append_record(state_root: Path, record: Mapping[str, Any]) -> Path:
    """Append ``record`` to its prompt's amendments file as one fsynced line.

    Raises:
        OSError: the line cannot be written.
    """
    path = amendments_path(state_root, str(record["prompt"]))
    append_record_line(path, record)
    return path
