"""What a prompt's verification compares against: its repos, and what was dirty before.

``changed_paths_only`` judges only what the prompt changed: a path that already
had uncommitted changes when the run (or the prompt) started, and is unchanged
since, is the user's or an earlier prompt's work, not the session's.
"""

from __future__ import annotations

from ..planning.prompt_plan import PromptPlan
from ..verifier import VerifyContext
from . import workspace
from .attempt_sink import verify_registrar
from .context import RunContext

Baseline = dict[str, dict[str, tuple[int, int]]]
"""Per repo name, dirty path (relative to the work-tree root) -> ``(size, mtime_ns)``."""


def verify_context(ctx: RunContext, pp: PromptPlan) -> VerifyContext:
    """Where ``pp``'s contract is checked: the packet's repos, its first target as
    the default repo, the run-start baseline, verify commands registered."""
    repos = ctx.plan.packet.repos
    default = pp.prompt.targets[0] if pp.prompt.targets else None
    return VerifyContext(
        repos=repos,
        default_repo=default,
        env=ctx.env,
        baseline=run_baseline(ctx),
        on_process_start=verify_registrar(ctx, pp.id),
    )


def run_baseline(ctx: RunContext) -> Baseline:
    """Per repo name, the paths that had uncommitted changes when the run started,
    with their ``(size, mtime_ns)`` then (from the run-start snapshot)."""
    snap: workspace.Snapshot = ctx.foreign_snapshot
    return {
        name: {row[1]: (row[2], row[3]) for row in value[1]}
        for name, value in snap.items()
        if value is not None
    }


def prompt_baseline(
    ctx: RunContext, before: workspace.Snapshot, own: dict[str, set[str]]
) -> Baseline:
    """Per repo name, the paths that had uncommitted changes when the prompt
    started (its first session's "before" snapshot), with their ``(size,
    mtime_ns)`` then: ``changed_paths_only`` judges only what the prompt changed
    since, never leftovers of earlier prompts (``--no-commit``, a no-op
    committer, ``--keep-going``, a rejected commit) or the user's. ``own``:
    paths that are this prompt's own work already (adopted from a dead runner),
    which stay counted. Repos the snapshot lacks keep the run-start baseline."""
    baseline = run_baseline(ctx)
    for name, value in before.items():
        if value is not None:
            mine = own.get(name, set())
            baseline[name] = {row[1]: (row[2], row[3]) for row in value[1] if row[1] not in mine}
    return baseline
