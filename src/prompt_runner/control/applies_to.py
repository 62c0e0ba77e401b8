"""Which verification an amendment made now applies to: the writers' side (SPEC 5).

A writer of amendments (``control amend|relax`` and amend/relax requests),
holding the amendment lock, asks :func:`target`: a verification of this
prompt in progress (of the live runner, per the marker of
``control/marker.py``) -> ``in_progress``, the amendment is part of that
verdict; a verification that already passed, or a prompt recorded completed
-> ``deferred``, that verdict stands under the previous contract; otherwise
``next``, the prompt's next verification. The answer is the record's
``applies_to`` and goes into its receipt::

    {"verification": "in_progress"|"next"|"deferred", "prompt": "01",
     "run_id": "..."|null, "attempt": 2|null, "note": "Applies to ..."}

The runner's side, which makes the answer true, is ``control/verifying.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..state.records import PromptStatus
from .marker import JUDGING, read_marker

TYPE_CHECKING = False  # typing costs import time on the CLI hot path
if TYPE_CHECKING:
    from typing import Any

IN_PROGRESS, NEXT, DEFERRED = "in_progress", "next", "deferred"


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
