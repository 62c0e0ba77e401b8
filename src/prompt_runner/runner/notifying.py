"""What the runner tells its notifier: the run-level events and their words.

The runner emits five of the event kinds (:data:`~prompt_runner.notify.EVENT_KINDS`):

============== ==================================================== ========================
kind           when                                                 emitted from
============== ==================================================== ========================
run_completed  the run ended ``completed`` (or had ``nothing`` to do) ``pipeline.run_pipeline``
run_failed     it ended ``failed``, ``halted`` or ``interrupted``    ``pipeline.run_pipeline``
prompt_failed  a prompt failed (any failure status but the two below) ``RunContext.notify_record``
budget_spent   a cost budget refused a prompt's next session         ``RunContext.notify_record``
blocked        a prompt's dependency is not completed, or its agent  ``engine.block``,
               reported ``blocked`` (a person is needed)             ``RunContext.notify_record``
============== ==================================================== ========================

Each says what happened (``reason``) and what the reader does next
(``next_step``, naming the command to run). Only the notifier and plain values
come in here, so any runner module may call it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import shown_path
from ..notify import Notifier, open_notifier
from ..packet.notify_config import packet_notify
from ..packet.profiles import configured_profile
from ..planning import Plan
from ..render.text import Console
from ..state.records import PromptStatus, RunStatus
from .result import RunResult

WORKSPACE_ENV = "PROMPT_RUNNER_WORKSPACE"
"""``workspace.runspec.WORKSPACE_ENV``, named here so that a run outside a
workspace does not import the workspace room (its pydantic manifest: ~12 ms
of every run's start-up); ``tests/runner/test_notify_startup.py`` keeps the two equal."""

FAILURE_KINDS = ("prompt_failed", "budget_spent", "blocked")
"""The kinds a failed prompt's record may become (read only when one is wanted)."""


def with_workspace_notify(plan: Plan, env: Mapping[str, str] | None = None) -> Plan:
    """``plan`` with its workspace manifest's ``notify:`` merged in as the most
    specific level, when it runs for a workspace (``$PROMPT_RUNNER_WORKSPACE``
    names the manifest; ``workspace.runspec`` sets it for a workspace run).

    Raises:
        UserError: the workspace manifest is unreadable or its ``notify`` is
            wrong (naming the manifest and the key).
    """
    manifest = (env if env is not None else os.environ).get(WORKSPACE_ENV)
    if not manifest:
        return plan
    from ..workspace import load_workspace  # lazy: only a workspace's run needs the room

    workspace = load_workspace(manifest)
    if workspace.notify is None:
        return plan
    name, profile, _ = configured_profile(
        plan.packet.manifest.profile, explicit=plan.options.profile
    )
    config = packet_notify(
        plan.packet,
        profile=(name, profile),
        workspace=(shown_path(workspace.manifest_path), dict(workspace.notify)),
    )
    return dataclasses.replace(plan, notify=config)


def open_for_run(
    plan: Plan, state_root: Path | None, run_id: str, env: Mapping[str, str], console: Console
) -> Notifier:
    """The run's notifier (disabled without ``notify:``), recording into the state
    root's ``notifications.jsonl`` (none for a memory store). Warns, naming only
    the variable, when a URL's ``{env:NAME}`` is not set, and when URLs are set
    but ``apprise`` is not installed (a warning, not a refusal: a ``command``
    target still delivers and the run itself is not at stake)."""
    if plan.notify is None:
        return Notifier.disabled()
    notifier = open_notifier(
        plan.notify,
        state_root=state_root,
        packet=plan.packet.name,
        packet_root=plan.packet.root,
        run_id=run_id,
        env=env,
    )
    missing = plan.notify.apprise_missing()
    if missing is not None and missing not in plan.notes:  # run says the plan's notes
        console.say(f"warning: {missing}")
    for name in notifier.missing_env():
        console.say(
            f"warning: notify: ${name} is not set ({{env:{name}}} in {plan.notify.file}); "
            "deliveries to that URL will fail"
        )
    return notifier


def close(notifier: Notifier, console: Console) -> None:
    """Close the run's notifier (waiting at most ``notify.timeout``) and say
    what did not go out -- also when a signal cuts the wait short (the
    deliveries it abandons are recorded by ``close`` and said here)."""
    try:
        notifier.close()
    finally:
        line = notifier.summary()
        if line is not None:
            console.say(f"warning: {line}")


def wants_failure(notifier: Notifier) -> bool:
    """Whether a failed prompt's record is worth reading for ``notifier``."""
    config = notifier.config
    return notifier.enabled and config is not None and any(config.wants(k) for k in FAILURE_KINDS)


def run_ended(notifier: Notifier, result: RunResult) -> None:
    """``run_completed`` or ``run_failed`` for the run's ``result`` (a dry run: nothing)."""
    if not notifier.enabled or result.status == RunStatus.DRY_RUN:
        return
    details: dict[str, Any] = {
        "status": result.status,
        "exit_code": result.exit_code,
        "prompts": dict(result.prompts),
        "failures": list(result.failures),
    }
    packet = _packet_arg(notifier)
    if result.status in (RunStatus.COMPLETED, RunStatus.NOTHING):
        notifier.emit(
            "run_completed",
            reason=result.message or "Run completed.",
            next_step="nothing to do: the work is verified and committed; "
            f"`prompt-runner status {packet}` shows it",
            details=details,
        )
        return
    if result.status == RunStatus.INTERRUPTED:
        step = f"`prompt-runner run {packet} --remaining` goes on where it stopped"
    elif result.status == RunStatus.HALTED:
        step = f"fix the cause named in the reason, then `prompt-runner run {packet} --remaining`"
    else:
        failed = ", ".join(result.failures) or "the failed prompts"
        step = (
            f"read `prompt-runner status {packet}` for {failed}, fix the work or the contract "
            f"(or `prompt-runner repair --packet {packet} ID`), then "
            f"`prompt-runner run {packet} --remaining`"
        )
    notifier.emit(
        "run_failed",
        reason=result.message or f"Run {result.status}.",
        next_step=step,
        details=details,
    )


def run_cut_short(notifier: Notifier, exc: BaseException) -> None:
    """``run_failed`` for a run that ended by raising ``exc``: Ctrl-C or SIGTERM
    (its ``run_result``, the run so far), or a fault that stopped it."""
    result = getattr(exc, "run_result", None)
    if isinstance(result, RunResult):
        run_ended(notifier, result)
        return
    if not notifier.enabled:
        return
    packet = _packet_arg(notifier)
    notifier.emit(
        "run_failed",
        reason=f"the run stopped on an error: {exc}",
        next_step=f"fix what the error names, then `prompt-runner run {packet} --remaining`",
        details={"status": RunStatus.INTERRUPTED, "error": type(exc).__name__},
    )


def prompt_failed(notifier: Notifier, prompt_id: str, record: Mapping[str, Any]) -> None:
    """A failed prompt's record as ``budget_spent``, ``blocked`` (its agent said
    so) or ``prompt_failed``."""
    if not notifier.enabled:
        return
    status = str(record.get("status") or PromptStatus.FAILED)
    reason = str(record.get("commit_error") or record.get("reason") or status)
    packet = _packet_arg(notifier)
    details = {
        "status": status,
        "last_error": record.get("last_error"),
        "cost_usd": record.get("cost_usd"),
    }
    budget = record.get("budget_failure")
    if isinstance(budget, Mapping):
        notifier.emit(
            "budget_spent",
            prompt=prompt_id,
            reason=str(budget.get("message") or reason),
            next_step="raise the budget (max_cost_usd in the prompt's provider options, or "
            f"max_run_cost_usd / --max-run-cost-usd), then `prompt-runner run {packet} "
            "--remaining`",
            details={**details, "budget": dict(budget)},
        )
        return
    if status == PromptStatus.AGENT_CONTROL_BLOCKED:
        blocked(
            notifier,
            prompt_id,
            reason=f"the agent reported prompt {prompt_id} blocked: {reason}",
            next_step=f"resolve what the agent needs, then `prompt-runner run {packet} "
            "--remaining`",
            details=details,
        )
        return
    if status == PromptStatus.COMMIT_FAILED:
        step = (
            f"fix the commit's cause (a hook, a lock), then `prompt-runner run {packet} "
            "--remaining`"
        )
    else:
        step = (
            f"read `prompt-runner status {packet}`, fix the work or the contract (or "
            f"`prompt-runner repair --packet {packet} {prompt_id}`), then "
            f"`prompt-runner run {packet} --remaining`"
        )
    notifier.emit(
        "prompt_failed",
        prompt=prompt_id,
        reason=f"prompt {prompt_id} {status}: {reason}",
        next_step=step,
        details=details,
    )


def blocked_by(notifier: Notifier, prompt_id: str, blockers: Sequence[str]) -> None:
    """``blocked``: ``prompt_id`` did not start, its dependencies not completed."""
    packet = _packet_arg(notifier)
    blocked(
        notifier,
        prompt_id,
        reason=f"prompt {prompt_id} did not start: its dependency {', '.join(blockers)} "
        "is not completed",
        next_step=f"complete {', '.join(blockers)} (see `prompt-runner status {packet}`), then "
        f"`prompt-runner run {packet} --remaining`",
        details={"blocked_by": list(blockers)},
    )


def blocked(
    notifier: Notifier,
    prompt_id: str,
    *,
    reason: str,
    next_step: str,
    details: Mapping[str, Any] | None = None,
) -> None:
    """``blocked`` for ``prompt_id``."""
    if notifier.enabled:
        notifier.emit(
            "blocked", prompt=prompt_id, reason=reason, next_step=next_step, details=details
        )


def _packet_arg(notifier: Notifier) -> str:
    """The packet as a command argument in a next step (its directory, else its name)."""
    return notifier.packet_root or notifier.packet or "PACKET"
