"""A repair: one prompt re-run from its recorded failure (``prompt_runner.repair``).

:func:`repair_text` builds the session's prompt from the prompt's record
(:func:`recorded`: the run's store's, else the packet's ``.prompt_runner/``);
:func:`repair_executor` is the executor the run pipeline runs instead of
``engine.run_plan``: one prompt, starting in ``repair`` mode.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..packet.loader import Prompt
from ..planning import Plan
from ..state.records import PromptStatus, exit_code_for, run_status_for_prompt
from ..state.store import FileStore, RuntimeStore
from . import leftovers
from .attempts import run_prompt
from .context import RunContext
from .engine import pin_branches, record_completed
from .finishing import Executor
from .repair import repair_prompt
from .result import RunResult
from .steering import start_steer_budget


def recorded(p: Plan, prompt_id: str, store: RuntimeStore) -> dict[str, Any]:
    """The prompt's record a repair starts from: the run's store's, or, when that
    store holds none (the library's default memory store starts empty), the one
    in the packet's ``.prompt_runner/`` -- where the CLI's runs and
    ``runtime_store="file"`` record it, as the plan reads its progress there.

    Raises:
        StateError: the record is corrupt.
    """
    record = store.load_prompt(prompt_id)
    if _has_record(record) or store.root is not None:
        return record
    layout = p.state
    if not layout.root.is_dir():
        return record
    return FileStore(layout.root).load_prompt(prompt_id)


def _has_record(record: dict[str, Any]) -> bool:
    return bool(record.get("attempts") or record.get("last_verifier"))


def repair_text(p: Plan, prompt: Prompt, store: RuntimeStore) -> str:
    """The repair session's prompt: the body plus the recorded ``last_error``
    and the failed items of the recorded ``last_verifier`` (``(none recorded)``
    when there are none, as for a prompt recorded completed, which is re-run
    all the same). The record is :func:`recorded`'s.

    Raises:
        UserError: the prompt has no recorded attempt nor verifier report.
        StateError: its record is corrupt.
    """
    record = recorded(p, prompt.id, store)
    if not _has_record(record):
        raise UserError(
            f"prompt {prompt.id} has no recorded failure to repair",
            file=p.packet.display(prompt.file),
            fix=f"run it first: `prompt-runner run {p.packet.root} {prompt.id}`",
        )
    last = record.get("last_verifier") or {}
    failures = [
        item
        for item in (last.get("failures") or last.get("items") or [])
        if isinstance(item, dict) and not item.get("pass", False)
    ]
    return repair_prompt(prompt.body, last_error=record.get("last_error"), failures=failures)


def repair_executor(prompt_id: str, text: str) -> Executor:
    """An executor for :func:`prompt_runner.repair`: one prompt, starting in repair mode
    with ``text``; the run ends as the prompt did (``run_status_for_prompt``)."""

    def execute(ctx: RunContext) -> RunResult:
        journal = ctx.store.journal(ctx.run_id)
        try:
            pp = ctx.plan.prompt(prompt_id)
            ctx.cost.start_prompt(pp.id)
            start_steer_budget(ctx, pp.id)
            ctx.console.say(f"▶ {pp.id} {pp.prompt.name} (repair)")
            fields: dict[str, Any] = {"status": PromptStatus.REPAIRING, "run_id": ctx.run_id}
            if ctx.committer.name == "git":  # an earlier execution's bound (leftovers.py)
                fields[leftovers.FIELD] = None
            ctx.store.update_prompt(pp.id, fields)
            pin_branches(ctx)
            outcome = run_prompt(ctx, pp, initial_text=text, initial_mode="repair")
            status = record_completed(ctx, pp, outcome, journal)
            run_status = run_status_for_prompt(status)
            code = exit_code_for(run_status)
            result = RunResult(
                ctx.run_id,
                run_status,
                code,
                {pp.id: status},
                [] if code == 0 else [pp.id],
                f"Repair of {pp.id}: {status}.",
            )
            journal.append("run_finished", {"status": result.status, "prompts": result.prompts})
            return result
        finally:
            journal.close()

    return execute
