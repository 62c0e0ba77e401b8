"""Before a run takes its locks: the providers are there, the repos are ready,
and the store and committer it records and commits with exist.

:func:`prepare_run` is the first step of the run pipeline
(:mod:`prompt_runner.runner.pipeline`); nothing it does writes a record. Before
the runtime preflight it stops what a dead runner left registered (holding the
run lock just for that: :func:`~prompt_runner.runner.locks.stop_orphans_before_preflight`),
so preflight never meets the index lock of a commit the next run is to end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..committer import CallbackCommitter, Committer, make_committer
from ..packet.preflight import not_ready_error, preflight_report, refuse_git_dirs
from ..planning import Plan, check_plan_launchable
from ..render.text import Console
from ..state.layout import StateLayout
from ..state.store import FileStore, MemoryStore, NoopStore, RuntimeStore
from ..state.usable import prepare_state_dir
from .locks import stop_orphans_before_preflight

CommitCallback = Callable[[str, str, Mapping[str, Path]], Any]
"""``(prompt_id, message, repos) -> CommitResult``: a callback committer."""


def make_store(kind: str, state: StateLayout) -> RuntimeStore:
    """``file`` (under ``state``, the plan's state root), ``memory`` or ``noop``."""
    if kind == "file":
        # Group-commit the per-prompt logs (fsync at most every 200 ms and at each
        # prompt's end); progress.log, journals and state.json stay fsynced per write.
        return FileStore(state.root, fsync_interval_ms=200)
    if kind == "noop":
        return NoopStore()
    return MemoryStore()


def prepare_run(
    p: Plan, commit_callback: CommitCallback | None, *, console: Console | None = None
) -> tuple[RuntimeStore, Committer]:
    """Check providers and repos, then make the store and committer for ``p``.

    Returns:
        ``(store, committer)``: the store ``p.runtime_store`` names (its
        directory made usable), and the callback committer when
        ``commit_callback`` is given, else the one ``p.committer`` names.

    Raises:
        ProviderMissingError: a selected prompt's provider CLI, or the CLI of
            one of its ``recovery.failover`` targets, is missing (exit 3).
        UserError: a repo's path is a git directory or inside one (whatever
            ``skip_preflight`` says), or the runtime preflight failed (unless
            ``skip_preflight``).
        StorageError: the runtime state directory cannot be written (exit 3).
    """
    # the executable each one's sessions start (cli_path), failover targets too --
    # the check `packet doctor` and `packet preflight` report (planning.launch_problems)
    check_plan_launchable(p.packet, p.selected_prompts())
    # whatever the flags: a repo path at a .git or a bare repository would have
    # the agent write into git's own data (--skip-preflight skips the rest only)
    refuse_git_dirs(p.packet)
    if not p.options.skip_preflight:
        if console is not None:
            # a commit a dead runner left in its hook holds the index lock: end it first
            stop_orphans_before_preflight(p, console)
        check_repos_ready(p)
    store = make_store(p.runtime_store, p.state)
    committer: Committer
    if commit_callback is not None:
        committer = CallbackCommitter(commit_callback)
    else:
        committer = make_committer(p.committer)
    if store.root is not None:
        # Before any session: a read-only, full or misplaced state directory is
        # one sentence and exit 3, not a traceback after the agent worked.
        prepare_state_dir(store.root)
    return store, committer


def check_repos_ready(p: Plan) -> None:
    """The runtime preflight of the selected prompts (``packet preflight``'s).

    Raises:
        UserError: the first readiness error, naming the repo (or the prompt
            whose contract reaches into a submodule) and the fix.
    """
    git_needed = p.committer == "git"
    report = preflight_report(
        p.packet, needs_git=git_needed, needs_identity=git_needed, prompts=p.selected
    )
    failure = not_ready_error(report, p.packet.manifest_file)
    if failure is not None:
        raise failure
