"""Pre-flight verification (SPEC 3.3): a prompt whose contract already holds
completes without a session.

On by default for ``--remaining`` without ids (``--verify-first`` /
``--no-verify-first`` choose); never under agent-owned completion or agent
control (the agent owns movement there). A contract that is empty, or judges
the session's changes (``changed_paths_only``), cannot hold before a session;
one whose named outputs are uncommitted is left for a session to commit.
"""

from __future__ import annotations

from .. import git
from ..control import verifying
from ..control.amendments import effective_contract
from ..planning import Plan, PromptPlan
from ..state._clock import iso_now
from ..state.records import PromptStatus
from ..verifier import VerifierReport
from .baseline import verify_context
from .completion import contract_paths
from .context import RunContext
from .judging import judge


def preverify_enabled(plan: Plan) -> bool:
    """Whether the run verifies its selected prompts before any session."""
    options = plan.options
    enabled = options.verify_first
    if enabled is None:
        enabled = options.remaining and not options.ids
    if not enabled or plan.execution.completion == "agent_owned":
        return False
    return not plan.agent_control.enabled  # completion_verify pre-checks there


def preflight_verify(ctx: RunContext) -> set[str]:
    """Record each selected prompt whose contract already holds (and whose
    named outputs are committed) completed with ``source: preflight_verify``
    and no session. Returns their ids."""
    if not preverify_enabled(ctx.plan):
        return set()
    done: set[str] = set()
    for prompt_id in ctx.plan.selected:
        verifying.done(ctx.store.root)  # the previous prompt's verdict is recorded
        pp = ctx.plan.prompt(prompt_id)
        report = already_satisfied(ctx, pp)
        if report is None or outputs_uncommitted(ctx.plan, pp):
            continue
        record_satisfied(ctx, prompt_id, report)
        done.add(prompt_id)
    verifying.done(ctx.store.root)
    return done


def already_satisfied(ctx: RunContext, pp: PromptPlan) -> VerifierReport | None:
    """The passing report of ``pp``'s contract (amendments in force) on the
    workspace as it is, or ``None`` (it fails, or cannot hold before a session)."""
    contract = pp.prompt.contract
    if ctx.store.root is not None:
        contract = effective_contract(ctx.store.root, pp.prompt, ctx.run_id)
    if contract.is_empty() or contract.has("changed_paths_only"):
        return None
    ctx.workspace_carry = None  # its commands may write files: snapshot afresh
    report = judge(ctx, pp, verify_context(ctx, pp), attempt=None)
    return report if report.passed else None


def outputs_uncommitted(plan: Plan, pp: PromptPlan) -> bool:
    """True when a path ``pp``'s contract names is changed or untracked in its repo
    (a repo git cannot read counts as clean)."""
    default = pp.prompt.targets[0] if pp.prompt.targets else None
    for repo_name, path in contract_paths(pp):
        repo = plan.packet.repos.get(repo_name or default or "packet")
        if repo is None:
            continue
        try:
            entries = git.porcelain_status(repo)
            prefix = git.show_prefix(repo)
        except Exception:
            continue
        wanted = (prefix + path).rstrip("/")
        if any(e.path == wanted or e.path.startswith(wanted + "/") for e in entries):
            return True
    return False


def record_satisfied(ctx: RunContext, prompt_id: str, report: VerifierReport) -> None:
    """Record ``prompt_id`` completed without a session (state and progress.log)."""
    ctx.store.update_prompt(
        prompt_id,
        {
            "status": PromptStatus.COMPLETED,
            "source": "preflight_verify",
            "session_ran": False,
            "last_verifier": report.to_dict(),
            "run_id": ctx.run_id,
            "completed_at": iso_now(),
        },
    )
    ctx.store.append_progress(prompt_id, PromptStatus.COMPLETED, "no_session")
    ctx.store.flush()  # the record is durable before it is acknowledged
    ctx.console.say(f"✓ {prompt_id} already satisfies its contract — no session was run.")
