"""Agent-controlled linear runs (SPEC 7): the runner's iteration loop.

With ``agent_control.enabled`` each execution of a prompt is a sequence of
*iterations*. An iteration is one invocation of the ordinary attempt loop
(:func:`prompt_runner.runner.attempts.run_prompt` -- retries, resumes and
repairs stay inside it) with a private request file, progress file and token
passed to the provider in its environment, and the exact commands appended to
the prompt. When the iteration's attempt loop completes (the ordinary
``verify`` passed) and the runner's commit succeeded, the runner reads the
agent's directive and acts:

=============  ===============================================================
``continue``   the prompt is completed; the run advances
``repeat``     the iteration is recorded; a fresh session runs iteration N+1
``finish``     ``completion_verify`` runs: pass completes the prompt and closes
               the whole selected sequence; fail starts iteration N+1 with the
               unmet items attached; a verifier fault halts the run
``blocked``    the prompt stops as ``agent_control_blocked`` with the reason;
               the run stops non-zero
(none)         ``default_action`` (recorded with ``source: default``)
=============  ===============================================================

A failed attempt loop (the provider failed, or the contract stayed unmet) is
never an iteration and never falls through to ``default_action``; a directive
written before a failed verify is discarded before the next session. Reaching
``max_iterations`` ends the prompt as ``iteration_limit`` (resumable: its
``progress.log`` line is ``failed``).

The directive protocol -- files, token, authentication -- is
:mod:`prompt_runner.agent`; the prompt's records are :mod:`.agent_record`; the
run-level hooks (the completion pre-check, a closed sequence) are
:mod:`.agent_sequence`. A rejected request or progress record (and every
refusal the agent side logged) is journaled (``agent_control_rejected``) and
kept in the prompt's ``agent_control.rejections``. Files live in ``<state
root>/runs/<run_id>/agent-control/`` for a file store, or in a private
temporary directory, removed afterwards, for the memory and noop stores.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent import protocol
from ..agent.invocation import (
    Invocation,
    control_directory,
    discard_directive,
    live_marker,
    open_invocation,
    read_client_rejections,
    read_directive,
    read_progress,
    seal,
)
from ..committer import CommitResult
from ..planning import PromptPlan
from ..state._clock import iso_now
from ..state.records import PromptStatus
from .agent_record import BLOCKED, FINISH_REJECTED, FINISHED, ITERATION_COMPLETED, Recorder
from .agent_sequence import verify_completion
from .attempts import run_prompt
from .completion import commit_prompt, record_outcome
from .context import RunContext
from .loop_state import PromptOutcome
from .repair import render_failures
from .stages import COMMITTING, staged

__all__ = ["controlled_prompt", "run_controlled"]


def run_controlled(ctx: RunContext, pp: PromptPlan, journal: Any) -> str:
    """Run ``pp`` as an agent-controlled prompt; returns its final status.

    Returns:
        ``completed``, ``agent_control_finished`` (completed, and the sequence
        is closed), ``agent_control_blocked``, ``iteration_limit``,
        ``verifier_fault`` (halt) or another failure status of the attempt loop.
    """
    controller = _Controller(ctx, pp, journal)
    try:
        return controller.run()
    finally:
        controller.close()


class _Controller:
    """Runs one prompt's iterations (see the module doc)."""

    def __init__(self, ctx: RunContext, pp: PromptPlan, journal: Any) -> None:
        self.ctx = ctx
        self.pp = pp
        self.journal = journal
        self.cfg = ctx.plan.agent_control
        self.rec = Recorder(ctx, pp, journal)
        self.record = self.rec.record
        self.directory, self.temporary = control_directory(ctx.store.root, ctx.run_id)
        self.rejections_offset = _size(self.directory / protocol.REJECTIONS_NAME)
        self.commits: dict[str, str] = {}  # newest commit per repo across iterations

    def run(self) -> str:
        ctx, pp = self.ctx, self.pp
        sessions = 0
        finish_failures: list[dict[str, Any]] | None = None
        for iteration in range(1, self.cfg.max_iterations + 1):
            inv = open_invocation(
                self.directory, ctx.run_id, pp.id, iteration, self.cfg.max_iterations
            )
            self.record.iteration = iteration
            self.record.live = live_marker(inv)
            self.rec.save({"status": PromptStatus.RUNNING})
            ctx.console.say(
                f"[{pp.id}] agent control: iteration {iteration} of at most "
                f"{self.cfg.max_iterations}"
            )
            text = controlled_prompt(
                pp.prompt.body,
                inv,
                default_action=self.cfg.default_action,
                finish_failures=finish_failures,
            )
            try:
                outcome = run_prompt(
                    ctx,
                    pp,
                    initial_text=text,
                    body=text,
                    extra_env=inv.env(),
                    session_offset=sessions,
                    before_session=self.before_session(inv),
                    controlled=True,
                )
                sessions += outcome.sessions
                self.record.live = None
                self.collect(inv)
                status = self.after_iteration(inv, outcome)
            finally:
                self.record.live = None
                seal(inv)
            if isinstance(status, str):
                return status
            finish_failures = status
        return self.rec.iteration_limit()

    def before_session(self, inv: Invocation) -> Callable[[str], None]:
        def hook(mode: str) -> None:
            if mode != "run" and discard_directive(inv):
                self.ctx.console.say(
                    f"[{self.pp.id}] discarded the directive written before the failed "
                    f"verify; the {mode} session must choose again"
                )
                self.journal.append(
                    "agent_control_discarded",
                    {"prompt_id": self.pp.id, "iteration": inv.iteration, "before": mode},
                )

        return hook

    def collect(self, inv: Invocation) -> None:
        """Pick up the agent's progress and the agent side's refusals."""
        progress, problem = read_progress(inv)
        if problem is not None:
            self.rec.reject(inv, "progress", problem)
        elif progress is not None:
            self.record.progress = progress
        lines, self.rejections_offset = read_client_rejections(
            self.directory, self.rejections_offset
        )
        for line in lines:
            what = f"agent-control {line.get('command')} (refused by the agent side)"
            self.rec.reject(inv, what, str(line.get("reason")))

    def after_iteration(
        self, inv: Invocation, outcome: PromptOutcome
    ) -> str | list[dict[str, Any]] | None:
        """Act on a finished iteration.

        Returns:
            A final prompt status (str), the failed completion items for the next
            iteration (after a rejected ``finish``), or ``None`` (``repeat``).
        """
        if outcome.action != "complete":
            discard_directive(inv)
            self.rec.save()
            return record_outcome(self.ctx, self.pp, outcome, self.journal)
        directive, problem = read_directive(inv)
        if problem is not None:
            self.rec.reject(inv, "directive", problem)
        commit = self.commit(outcome)
        if not commit.ok:
            self.rec.save()
            why = f"the commit failed: {commit.error}"
            return self.rec.fail(outcome, PromptStatus.COMMIT_FAILED, why, commit)
        if directive is not None:
            action, source, reason = directive.action, "agent", directive.reason
        else:
            action, source, reason = self.cfg.default_action, "default", None
        self.record.verified += 1
        self.record.action, self.record.source, self.record.reason = action, source, reason
        entry = {"iteration": inv.iteration, "action": action, "source": source, "reason": reason}
        self.record.history.append({**entry, "at": iso_now()})
        self.journal.append("agent_control_directive", {"prompt_id": self.pp.id, **entry})
        label = f"{action} ({source}{': ' + reason if reason else ''})"
        self.ctx.console.say(f"[{self.pp.id}] agent control: iteration {inv.iteration} -> {label}")
        if action == "continue":
            return self.rec.complete(outcome, commit)
        if action == "repeat":
            self.rec.save({"status": ITERATION_COMPLETED})
            return None
        if action == "blocked":
            why = f"the agent reported blocked: {reason}"
            return self.rec.fail(outcome, BLOCKED, why, commit)
        return self.finish(inv, outcome, commit)

    def finish(
        self, inv: Invocation, outcome: PromptOutcome, commit: CommitResult
    ) -> str | list[dict[str, Any]]:
        """The agent asked to ``finish``: judge the packet's completion contract."""
        report = verify_completion(self.ctx, self.pp.id)
        self.record.history[-1]["completion_verify"] = {
            "pass": report.passed,
            "unmet": len(report.failures()),
            "fault": report.fault is not None,
        }
        if report.fault is not None:
            self.rec.save({"completion_verify": report.to_dict()})
            halted = PromptOutcome(
                "halt",
                PromptStatus.VERIFIER_FAULT,
                "completion_verify could not judge the work (verifier fault); halting the run",
                report=report,
                attempts=outcome.attempts,
            )
            return record_outcome(self.ctx, self.pp, halted, self.journal)
        if report.passed:
            self.rec.complete(outcome, commit, {"completion_verify": report.to_dict()})
            return FINISHED
        failures = [item.to_dict() for item in report.failures()]
        self.record.action, self.record.source = "finish", "agent"
        self.record.history[-1]["rejected"] = True
        self.ctx.console.say(
            f"[{self.pp.id}] finish rejected: the completion contract has "
            f"{len(failures)} unmet item(s); starting a fresh iteration"
        )
        self.journal.append(
            "agent_control_finish_rejected",
            {"prompt_id": self.pp.id, "iteration": inv.iteration, "failures": len(failures)},
        )
        self.rec.save({"status": FINISH_REJECTED, "completion_verify": report.to_dict()})
        return failures

    def commit(self, outcome: PromptOutcome) -> CommitResult:
        """Commit the iteration's work; the result names every iteration's commits."""
        with staged(self.ctx, self.pp.id, COMMITTING):
            result = commit_prompt(self.ctx, self.pp, outcome)
        if not result.ok:
            return result
        # The prompt's record names every iteration's work, not just the last one's.
        self.commits.update(result.commits)
        return CommitResult(dict(self.commits), skipped=result.skipped)

    def close(self) -> None:
        if self.temporary:
            shutil.rmtree(self.directory, ignore_errors=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def command_prefix() -> str:
    """``prompt-runner`` when it is on PATH, else this interpreter's ``-m prompt_runner``."""
    if shutil.which("prompt-runner"):
        return "prompt-runner"
    return f"{shlex.quote(sys.executable)} -m prompt_runner"


def controlled_prompt(
    body: str,
    inv: Invocation,
    *,
    default_action: str,
    finish_failures: list[dict[str, Any]] | None = None,
) -> str:
    """``body`` plus the ``## Prompt Runner agent control`` block of ``inv``."""
    cmd = f"{command_prefix()} agent-control"
    lines = [
        body.rstrip(),
        "",
        "## Prompt Runner agent control",
        "",
        f"This is iteration {inv.iteration} of at most {inv.max_iterations} for prompt "
        f"{inv.prompt_id}. The runner checks this prompt's contract and commits your work "
        "before it acts on your directive. When this iteration's work is done, issue exactly "
        "one directive (the first one wins; a second is rejected):",
        "",
        f"    {cmd} continue [--reason R]   # this prompt is done: move to the next prompt",
        f"    {cmd} repeat [--reason R]     # run this prompt again in a fresh session",
        f"    {cmd} finish --reason R       # the whole packet objective is complete",
        f"    {cmd} blocked --reason R      # you cannot go on: stop the run with the reason",
        "",
        "Record where you are at any time (repeatable; the latest record wins):",
        "",
        f"    {cmd} progress --cursor C [--unit U] --summary S",
        "",
        f"Without a directive the runner applies the default action: {default_action}. "
        "`finish` is accepted only when the packet's completion contract passes.",
    ]
    if finish_failures is not None:
        lines += [
            "",
            "### The previous `finish` request was rejected",
            "",
            "The packet completion contract does not pass yet. Finish this work before "
            "requesting `finish` again; these checks still fail:",
            "",
            render_failures(finish_failures),
        ]
    return "\n".join(lines) + "\n"
