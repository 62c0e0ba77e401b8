"""Agent-controlled linear runs (SPEC 7): the runner's half.

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

Authentication and files: :mod:`prompt_runner.runner.agent_invocation`. A
rejected request or progress record (and every refusal the agent side logged)
is journaled (``agent_control_rejected``) and kept in the prompt's
``agent_control.rejections``. Files live in ``<state root>/runs/<run_id>/
agent-control/`` for a file store, or in a private temporary directory,
removed afterwards, for the memory and noop stores.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..state._clock import iso_now
from ..state.records import RunStatus, exit_code_for
from . import agent_control_client as client
from .agent_invocation import (
    Invocation,
    control_directory,
    controlled_prompt,
    discard_directive,
    live_marker,
    open_invocation,
    progress_view,
    read_client_rejections,
    read_directive,
    read_progress,
    seal,
)
from .agent_owned import agent_owned_findings, validate_agent_owned

__all__ = [
    "BLOCKED",
    "FINISHED",
    "ITERATION_LIMIT",
    "PRECHECK_MESSAGE",
    "agent_owned_findings",
    "closed_before_start",
    "ends_sequence",
    "run_controlled",
    "validate_agent_owned",
]

if TYPE_CHECKING:
    from ..committer import CommitResult
    from ..planning import PromptPlan
    from .attempts import PromptOutcome
    from .context import RunContext
    from .engine import RunResult

FINISHED = "agent_control_finished"
"""Status :func:`run_controlled` returns when ``finish`` closed the sequence."""
BLOCKED = "agent_control_blocked"
ITERATION_LIMIT = "iteration_limit"
FINISH_REJECTED = "agent_control_finish_rejected"
ITERATION_COMPLETED = "iteration_completed"
PRECHECK_MESSAGE = "Packet completion contract already passes — no session was run."
MAX_REJECTIONS = 20


# --------------------------------------------------------------------------- the iteration loop


@dataclass
class _Record:
    """The prompt's ``agent_control`` state record, kept up to date as it runs."""

    max_iterations: int
    default_action: str
    iteration: int = 0
    verified: int = 0
    action: str | None = None
    source: str | None = None
    reason: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    progress: dict[str, Any] | None = None
    rejections: list[dict[str, Any]] = field(default_factory=list)
    live: dict[str, Any] | None = None

    def looping(self) -> bool:
        """True when the prompt actually uses loop semantics (status shows the iteration)."""
        return (
            self.iteration > 1
            or self.default_action == "repeat"
            or any(h["action"] != "continue" for h in self.history)
        )

    def to_dict(self, run_id: str, prompt_id: str) -> dict[str, Any]:
        return {
            "enabled": True,
            "action": self.action,
            "source": self.source,
            "reason": self.reason,
            "iteration": self.iteration,
            "max_iterations": self.max_iterations,
            "verified_iterations": self.verified,
            "default_action": self.default_action,
            "looping": self.looping(),
            "history": list(self.history),
            "progress": progress_view(self.progress, run_id, prompt_id, self.iteration),
            "rejections": self.rejections[-MAX_REJECTIONS:],
            "live": self.live,
        }


class _Controller:
    """Runs one prompt's iterations (see the module doc)."""

    def __init__(self, ctx: RunContext, pp: PromptPlan, journal: Any) -> None:
        self.ctx = ctx
        self.pp = pp
        self.journal = journal
        cfg = ctx.plan.agent_control
        self.cfg = cfg
        self.record = _Record(cfg.max_iterations, cfg.default_action)
        self.directory, self.temporary = control_directory(ctx.store.root, ctx.run_id)
        self.rejections_offset = _size(self.directory / client.REJECTIONS_NAME)
        self.commits: dict[str, str] = {}  # newest commit per repo across iterations

    # -- recording ----------------------------------------------------------------

    def save(self, fields: dict[str, Any] | None = None) -> None:
        doc = {"agent_control": self.record.to_dict(self.ctx.run_id, self.pp.id)}
        self.ctx.store.update_prompt(self.pp.id, {**doc, **(fields or {})})

    def reject(self, inv: Invocation, what: str, problem: str) -> None:
        entry = {"at": iso_now(), "iteration": inv.iteration, "what": what, "reason": problem}
        self.record.rejections.append(entry)
        self.ctx.console.say(f"[{self.pp.id}] agent control rejected {what}: {problem}")
        self.journal.append("agent_control_rejected", {"prompt_id": self.pp.id, **entry})

    def collect(self, inv: Invocation) -> None:
        """Pick up the agent's progress and the agent side's refusals."""
        progress, problem = read_progress(inv)
        if problem is not None:
            self.reject(inv, "progress", problem)
        elif progress is not None:
            self.record.progress = progress
        lines, self.rejections_offset = read_client_rejections(
            self.directory, self.rejections_offset
        )
        for line in lines:
            what = f"agent-control {line.get('command')} (refused by the agent side)"
            self.reject(inv, what, str(line.get("reason")))

    # -- the loop -----------------------------------------------------------------

    def run(self) -> str:
        from .attempts import run_prompt

        ctx, pp = self.ctx, self.pp
        sessions = 0
        finish_failures: list[dict[str, Any]] | None = None
        for iteration in range(1, self.cfg.max_iterations + 1):
            inv = open_invocation(
                self.directory, ctx.run_id, pp.id, iteration, self.cfg.max_iterations
            )
            self.record.iteration = iteration
            self.record.live = live_marker(inv)
            self.save({"status": "running"})
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
        return self.iteration_limit()

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

    def after_iteration(
        self, inv: Invocation, outcome: PromptOutcome
    ) -> str | list[dict[str, Any]] | None:
        """Act on a finished iteration.

        Returns:
            A final prompt status (str), the failed completion items for the next
            iteration (after a rejected ``finish``), or ``None`` (``repeat``).
        """
        from .engine import record_outcome

        if outcome.action != "complete":
            discard_directive(inv)
            self.save()
            return record_outcome(self.ctx, self.pp, outcome, self.journal)
        directive, problem = read_directive(inv)
        if problem is not None:
            self.reject(inv, "directive", problem)
        commit = self.commit(outcome)
        if not commit.ok:
            self.save()
            return self.fail(outcome, "commit_failed", f"the commit failed: {commit.error}", commit)
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
            return self.complete(outcome, commit)
        if action == "repeat":
            self.save({"status": ITERATION_COMPLETED})
            return None
        if action == "blocked":
            why = f"the agent reported blocked: {reason}"
            return self.fail(outcome, BLOCKED, why, commit)
        return self.finish(inv, outcome, commit)

    def finish(
        self, inv: Invocation, outcome: PromptOutcome, commit: CommitResult
    ) -> str | list[dict[str, Any]]:
        from ..verifier import VerifyContext, verify
        from .attempts import run_baseline, verify_registrar

        packet = self.ctx.plan.packet
        assert packet.completion_contract is not None
        self.ctx.workspace_carry = None  # its commands may write files: snapshot afresh
        report = verify(
            packet.completion_contract,
            VerifyContext(
                repos=packet.repos,
                default_repo=packet.default_repo,
                env=self.ctx.env,
                baseline=run_baseline(self.ctx),
                on_process_start=verify_registrar(self.ctx, self.pp.id),
            ),
        )
        self.record.history[-1]["completion_verify"] = {
            "pass": report.passed,
            "unmet": len(report.failures()),
            "fault": report.fault is not None,
        }
        if report.fault is not None:
            self.save({"completion_verify": report.to_dict()})
            from .attempts import PromptOutcome as Outcome
            from .engine import record_outcome

            halted = Outcome(
                "halt",
                "verifier_fault",
                "completion_verify could not judge the work (verifier fault); halting the run",
                report=report,
                attempts=outcome.attempts,
            )
            return record_outcome(self.ctx, self.pp, halted, self.journal)
        if report.passed:
            self.complete(outcome, commit, {"completion_verify": report.to_dict()})
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
        self.save({"status": FINISH_REJECTED, "completion_verify": report.to_dict()})
        return failures

    # -- terminal records -----------------------------------------------------------

    def commit(self, outcome: PromptOutcome) -> CommitResult:
        from ..committer import CommitResult
        from .engine import commit_prompt

        result = commit_prompt(self.ctx, self.pp, outcome)
        if not result.ok:
            return result
        # The prompt's record names every iteration's work, not just the last one's.
        self.commits.update(result.commits)
        return CommitResult(dict(self.commits), skipped=result.skipped)

    def _fields(self, outcome: PromptOutcome) -> dict[str, Any]:
        return {
            "last_verifier": outcome.report.to_dict() if outcome.report else None,
            "last_error": outcome.last_error,
            "session_ran": True,
            "completed_at": iso_now(),
            **self.ctx.cost.record_fields(self.pp.id),
            "agent_control": self.record.to_dict(self.ctx.run_id, self.pp.id),
        }

    def complete(
        self, outcome: PromptOutcome, commit: CommitResult, extra: dict[str, Any] | None = None
    ) -> str:
        ctx, prompt = self.ctx, self.pp.prompt
        fields = self._fields(outcome)
        fields.update(
            {
                "status": "completed",
                "source": outcome.source,
                "commit_info": {"commits": dict(commit.commits), "skipped": commit.skipped},
                **(extra or {}),
            }
        )
        ctx.store.update_prompt(prompt.id, fields)
        ctx.store.append_progress(prompt.id, "completed", commit.progress_suffix())
        ctx.console.say(
            f"✓ {prompt.id} completed ({outcome.source}; agent control "
            f"{self.record.action}/{self.record.source}; {commit.progress_suffix()})"
        )
        self.journal.append("prompt_completed", {"prompt_id": prompt.id, "source": outcome.source})
        ctx.notify_record("on_prompt_completed", prompt.id)
        return "completed"

    def fail(
        self, outcome: PromptOutcome, status: str, reason: str, commit: CommitResult | None
    ) -> str:
        ctx, prompt = self.ctx, self.pp.prompt
        fields = self._fields(outcome)
        fields.update({"status": status, "reason": reason})
        if commit is not None and not commit.ok:
            fields["commit_error"] = commit.error
        ctx.store.update_prompt(prompt.id, fields)
        ctx.store.append_progress(prompt.id, "failed")
        ctx.console.say(f"✗ {prompt.id} {status}: {reason}")
        self.journal.append(
            "prompt_failed", {"prompt_id": prompt.id, "status": status, "reason": reason}
        )
        ctx.notify_record("on_prompt_failed", prompt.id)
        return status

    def iteration_limit(self) -> str:
        ctx, prompt = self.ctx, self.pp.prompt
        reason = (
            f"agent_control_iteration_limit: prompt {prompt.id} reached max_iterations "
            f"{self.cfg.max_iterations} without continue or an accepted finish; "
            "the prompt stays resumable (--remaining)"
        )
        ctx.store.update_prompt(
            prompt.id,
            {
                "status": ITERATION_LIMIT,
                "reason": reason,
                "completed_at": iso_now(),
                "agent_control": self.record.to_dict(ctx.run_id, prompt.id),
            },
        )
        ctx.store.append_progress(prompt.id, "failed")
        ctx.console.say(f"✗ {prompt.id} {ITERATION_LIMIT}: {reason}")
        self.journal.append("prompt_failed", {"prompt_id": prompt.id, "status": ITERATION_LIMIT})
        ctx.notify_record("on_prompt_failed", prompt.id)
        return ITERATION_LIMIT

    def close(self) -> None:
        if self.temporary:
            shutil.rmtree(self.directory, ignore_errors=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def run_controlled(ctx: RunContext, pp: PromptPlan, journal: Any) -> str:
    """Run ``pp`` as an agent-controlled prompt; returns its final status.

    Returns:
        ``completed``, :data:`FINISHED` (completed, and the sequence is
        closed), :data:`BLOCKED`, :data:`ITERATION_LIMIT`, ``verifier_fault``
        (halt) or another failure status of the attempt loop.
    """
    controller = _Controller(ctx, pp, journal)
    try:
        return controller.run()
    finally:
        controller.close()


# --------------------------------------------------------------------------- run-level hooks


def closed_before_start(ctx: RunContext, result: RunResult, journal: Any) -> bool:
    """SPEC 7: before a normal run, a passing ``completion_verify`` means success, no session.

    Explicit prompt ids run anyway. Fills ``result`` and journals
    ``run_finished`` when the run ends here.

    Returns:
        True when the run is over (success, or halted by a verifier fault).
    """
    plan = ctx.plan
    contract = plan.packet.completion_contract
    if not plan.agent_control.enabled or contract is None or plan.options.ids:
        return False
    from ..verifier import VerifyContext, verify
    from .attempts import run_baseline, verify_registrar

    packet = plan.packet
    ctx.workspace_carry = None  # its commands may write files: snapshot afresh
    report = verify(
        contract,
        VerifyContext(
            repos=packet.repos,
            default_repo=packet.default_repo,
            env=ctx.env,
            baseline=run_baseline(ctx),
            on_process_start=verify_registrar(ctx, "completion_verify"),
        ),
    )
    if report.fault is not None:
        result.status = RunStatus.HALTED
        result.exit_code = exit_code_for(result.status)
        result.message = (
            "Run halted: the packet completion contract could not be judged "
            f"(verifier fault: {report.fault.details}); fix it and run again."
        )
    elif report.passed:
        result.message = PRECHECK_MESSAGE
    else:
        return False
    journal.append(
        "run_finished",
        {"status": result.status, "source": "completion_verify", "prompts": {}},
    )
    return True


def ends_sequence(ctx: RunContext, prompt_id: str, status: str, result: RunResult) -> bool:
    """Apply a controlled prompt's sequence-level outcome to ``result``.

    ``finish`` (accepted) closes the selected sequence successfully, naming
    the selected prompts that were not run; ``blocked`` stops the run with
    exit code 1 and the agent's reason. Returns True when the run stops here.
    """
    if status == FINISHED:
        result.prompts[prompt_id] = "completed"
        rest = list(ctx.plan.selected)
        rest = rest[rest.index(prompt_id) + 1 :]
        result.message = (
            f"Run finished: prompt {prompt_id}'s finish passed the packet completion contract."
        )
        if rest:
            result.message += f" Not run (the sequence is closed): {', '.join(rest)}."
        return True
    if status == BLOCKED:
        record = ctx.store.load_prompt(prompt_id)
        reason = (record.get("agent_control") or {}).get("reason") or "(no reason)"
        result.prompts[prompt_id] = BLOCKED
        result.failures.append(prompt_id)
        result.status = RunStatus.FAILED
        result.exit_code = exit_code_for(result.status)
        result.message = f"agent_control_blocked: prompt {prompt_id} is blocked: {reason}"
        return True
    return False
