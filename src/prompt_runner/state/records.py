"""The words Prompt Runner writes down: prompt, attempt and run statuses, and
the exit code a run ends with.

Each status is a :class:`enum.StrEnum`, so a member *is* its string: it
compares equal to the bare word, ``json.dumps`` writes the bare word and
``f"{status}"`` prints it. Saved files and ``--json`` output are therefore the
same bytes whether a caller passes the member or the word, and a record read
back from disk (a plain ``str``) compares equal to the member.

Stdlib ``enum`` only: the CLI's hot paths (``status``, ``control``) import this
module. The record dataclasses are in :mod:`prompt_runner.state.prompt_records`
(``dataclasses`` costs ~15 ms of start-up that ``control status`` does not pay).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "HALTING_PROMPT_STATUSES",
    "AttemptStatus",
    "PromptStatus",
    "RunStatus",
    "exit_code_for",
    "run_status_for_prompt",
]


class PromptStatus(StrEnum):
    """A prompt's ``status`` in ``state.json`` (and in results' ``prompts`` maps).

    ``progress.log`` (the resume source) keeps only ``completed`` and
    ``failed``; ``contract_changed`` is derived when reading it.
    """

    PENDING = "pending"
    """No record yet: the prompt has not started (what ``status`` shows)."""
    RUNNING = "running"
    """A session or its verification is under way (or the runner died during it)."""
    REPAIRING = "repairing"
    """``repair`` is re-verifying the prompt."""
    COMPLETED = "completed"
    """The contract held and the work is committed."""
    FAILED = "failed"
    """A provider failure or a budget ended the prompt."""
    INTERRUPTED = "interrupted"
    """Ctrl-C / SIGTERM, or the runner died while the prompt ran."""
    VERIFICATION_FAILED = "verification_failed"
    """The session ended but the contract has unmet items and no repair is left."""
    VERIFIER_FAULT = "verifier_fault"
    """The verifier could not judge (a verify command broke); the run halts."""
    COMMIT_FAILED = "commit_failed"
    """The contract held but the commit failed (a hook, an index lock); the run halts."""
    BLOCKED_BY_DEPENDENCY = "blocked_by_dependency"
    """A ``depends_on`` prompt is not completed; this one did not start."""
    AGENT_OWNED_INCOMPLETE = "agent_owned_incomplete"
    """An agent-owned prompt spent its repeats without meeting its contract."""
    AGENT_CONTROL_FINISHED = "agent_control_finished"
    """Agent control: ``finish`` was accepted and closed the sequence (returned by
    the execution, the saved record says ``completed``)."""
    AGENT_CONTROL_BLOCKED = "agent_control_blocked"
    """Agent control: the agent reported ``blocked``."""
    AGENT_CONTROL_FINISH_REJECTED = "agent_control_finish_rejected"
    """Agent control: a ``finish`` was refused (its contract did not hold); the
    sequence goes on."""
    ITERATION_LIMIT = "iteration_limit"
    """Agent control: ``max_iterations`` was reached (resumable with ``--remaining``)."""
    ITERATION_COMPLETED = "iteration_completed"
    """Agent control: an iteration ended with ``repeat``; the next one follows."""
    CONTRACT_CHANGED = "contract_changed"
    """Derived, never saved: completed under a contract that has changed since."""


class AttemptStatus(StrEnum):
    """One attempt's ``status`` in a prompt's ``attempts`` map."""

    RUNNING = "running"
    """The attempt started and has not finished (the default of a new attempt)."""
    COMPLETED = "completed"
    """The verifier accepted the workspace."""
    FAILED = "failed"
    """The provider failed (or a budget refused the next session)."""
    INCOMPLETE = "incomplete"
    """Agent-owned: the agent asked to repeat, or its repeats are spent."""
    VERIFICATION_FAILED = "verification_failed"
    """The session ended but the contract has unmet items."""
    VERIFIER_FAULT = "verifier_fault"
    """The verifier could not judge."""
    INTERRUPTED = "interrupted"
    """Ctrl-C / SIGTERM, or the runner died during the attempt."""


class RunStatus(StrEnum):
    """A run's ``status`` (``RunResult.status``, ``runs/current.json``, the journal's
    ``run_finished``, the control snapshot)."""

    RUNNING = "running"
    """The run holds the packet (``runs/current.json`` while it runs)."""
    COMPLETED = "completed"
    """Every selected prompt completed."""
    FAILED = "failed"
    """A selected prompt failed (exit 1)."""
    HALTED = "halted"
    """An infrastructure fault stopped the run: a verifier fault or a failed commit (exit 3)."""
    INTERRUPTED = "interrupted"
    """Ctrl-C / SIGTERM (exit 130)."""
    NOTHING = "nothing"
    """The selection was empty or already done; no session ran."""
    DRY_RUN = "dry_run"
    """``--dry-run``: the plan was shown, nothing ran."""
    UNKNOWN = "unknown"
    """Control snapshot only: the run was recorded ``running`` but its runner is gone."""


HALTING_PROMPT_STATUSES = frozenset({PromptStatus.VERIFIER_FAULT, PromptStatus.COMMIT_FAILED})
"""Prompt statuses that are infrastructure faults: the run halts (exit 3)."""

_EXIT_CODES = {
    RunStatus.COMPLETED: 0,
    RunStatus.NOTHING: 0,
    RunStatus.DRY_RUN: 0,
    RunStatus.FAILED: 1,
    RunStatus.HALTED: 3,
}


def exit_code_for(status: str, *, signum: int = 2) -> int:
    """The exit code (SPEC 10) of a ``run``, ``repair`` or ``verify`` that ended ``status``.

    Args:
        status: a :class:`RunStatus` (or its word).
        signum: for ``interrupted``, the signal that ended the run (default SIGINT).

    Returns:
        0 ``completed``/``nothing``/``dry_run``, 1 ``failed`` (the work failed),
        3 ``halted`` (an infrastructure fault), 128 + ``signum`` ``interrupted``
        (130 for Ctrl-C).

    Raises:
        ValueError: ``status`` is not how a run ends (``running``, ``unknown``,
            or not a run status).
    """
    if status == RunStatus.INTERRUPTED:
        return 128 + signum
    try:
        return _EXIT_CODES[RunStatus(status)]
    except (KeyError, ValueError):
        raise ValueError(f"{status!r} is not how a run ends") from None


def run_status_for_prompt(status: str) -> RunStatus:
    """The run status of a one-prompt run (``repair``) whose prompt ended ``status``:
    ``completed``, ``halted`` for a verifier fault or a failed commit, else ``failed``."""
    if status == PromptStatus.COMPLETED:
        return RunStatus.COMPLETED
    if status in HALTING_PROMPT_STATUSES:
        return RunStatus.HALTED
    return RunStatus.FAILED
