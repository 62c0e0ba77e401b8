"""The public library API: everything the CLI does, a program can do.

Pipeline: ``load_packet -> resolve_plan -> run_plan -> report``. API runs
default to the in-memory store and the no-op committer (no filesystem writes,
no commits) unless asked (``runtime_store="file"``, ``committer="git"``); the CLI
passes ``file``/``git``. :func:`run` and :func:`repair` resolve the plan and
hand it to the run pipeline (:mod:`prompt_runner.runner.pipeline`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .api_calls import keyword_names, public
from .api_options import callables, packet_arg, prompt_id_arg, run_options
from .api_status import status as status  # the CLI's status calls it too (no pydantic there)
from .api_verify import verify as verify  # prompt_runner.verify and the CLI's verify
from .errors import ArgumentError, UserError
from .packet.loader import Packet
from .planning import Plan, RunOptions, launch_argv, resolve_plan
from .planning.budget import usd
from .planning.launch import request_for
from .planning.selection import normalize_id
from .providers import registry
from .render.text import Console
from .runner import lifecycle, notifying
from .runner.context import Callbacks
from .runner.result import RunResult
from .state.layout import StateLayout
from .state.records import RunStatus, exit_code_for
from .state.store import FileStore

if TYPE_CHECKING:
    from .runner.prepare import CommitCallback

# The run pipeline (runner.engine, .pipeline, .prepare, .locks, .repair_run, and
# through them the control plane: ~45 modules, ~40 ms) is imported by run() and
# repair() when they start one: plan() and list_prompts() never need it.

__all__ = ["RunResult", "budget_text", "dry_run_text", "plan", "repair", "run", "status", "verify"]


@public
def plan(
    packet: Packet | str | Path,
    *,
    default_runtime_store: str = "memory",
    default_committer: str = "noop",
    **options: Any,
) -> Plan:
    """Resolve the execution plan of ``packet`` under ``options`` (see :class:`RunOptions`).

    Raises:
        ArgumentError: an unknown argument or a value of the wrong type (a UserError).
        UserError: bad packet or options; a repo's path is a git directory or
            inside one (:func:`prompt_runner.packet.preflight.refuse_git_dir`, as
            ``run`` refuses it).
    """
    return _plan(
        packet_arg("plan", packet),
        run_options("plan", options, named=keyword_names(plan)),
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )


def listing_plan(loaded: Packet) -> Plan:
    """``plan(loaded)`` as ``list`` resolves it (file store, git committer), without
    :func:`~prompt_runner.packet.preflight.refuse_git_dirs`: ``list`` never looks
    inside a repo, so it starts no ``git`` (and its output can be kept,
    ``cli/kept_output.py``); every command that does refuses such a path."""
    return _plan(
        loaded,
        run_options("plan", {}, named=keyword_names(plan)),
        default_runtime_store="file",
        default_committer="git",
        git_dirs=False,
    )


def _plan(
    loaded: Packet,
    opts: RunOptions,
    *,
    default_runtime_store: str,
    default_committer: str,
    git_dirs: bool = True,
) -> Plan:
    if git_dirs:
        # lazy: the preflight (git, commit errors) loads only once a plan is resolved
        from .packet.preflight import refuse_git_dirs

        # plan, lint's whole-packet check, run (also --dry-run), repair: a repo
        # path at a .git or a bare repository is refused as run refuses it
        refuse_git_dirs(loaded)
    kind = opts.runtime_store or default_runtime_store
    progress: dict[str, str] = {}
    layout = StateLayout.of_packet(loaded.root, opts.state_dir)
    if kind == "file" or layout.progress_log.exists():
        file_store = FileStore(layout.root)
        progress = {k: v.status for k, v in file_store.read_progress().items()}
        if (opts.remaining or opts.continue_run) and not progress:
            lifecycle.check_progress_not_lost(file_store)
        if opts.remaining:
            progress = lifecycle.reopen_changed_contracts(loaded, file_store.root, progress)
            progress = lifecycle.reopen_interrupted_reruns(file_store, progress)
    resolved = resolve_plan(
        loaded,
        opts,
        progress=progress,
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )
    validate_provider_options(resolved)
    return notifying.with_workspace_notify(resolved)


def validate_provider_options(p: Plan) -> None:
    """Ask each selected prompt's provider whether it supports the resolved options.

    Raises:
        UserError: an option the provider cannot honour (at plan time, not at launch).
    """
    providers: dict[str, Any] = {}
    for pp in p.selected_prompts():
        provider = providers.get(pp.provider)
        if provider is None:
            provider = providers[pp.provider] = registry.get_provider(pp.provider)
        try:
            provider.validate_options(request_for(p.packet, pp, pp.prompt.body))
        except UserError as exc:
            if exc.file is None:
                key, where = pp.option_key(exc.key or "")
                raise UserError(exc.reason, file=where, key=key or None, fix=exc.fix) from None
            raise


def session_roots(p: Plan) -> dict[str, Path]:
    """Prompt id -> its session's working directory (a relative path an agent
    reports is relative to it)."""
    return {pp.id: pp.cwd or p.packet.root for pp in p.prompts}


def budget_text(budget: float | None, key: str) -> str:
    """``$0.50 (max_cost_usd)`` or ``none``."""
    return "none" if budget is None else f"{usd(budget)} ({key})"


def dry_run_text(p: Plan) -> str:
    """The ``run --dry-run`` report: per selected prompt, what would run where."""
    lines = [
        f"Dry run: {p.packet.name} ({len(p.selected)} of {len(p.prompts)} prompt(s)); "
        f"run cost budget: {budget_text(p.max_run_cost_usd, 'max_run_cost_usd')}"
    ]
    for pp in p.selected_prompts():
        prompt = pp.prompt
        lines += [
            f"{prompt.id} {prompt.name}",
            f"  provider: {pp.provider}",
            f"  model: {pp.model or '(provider default)'}",
            f"  cwd: {pp.cwd}",
            f"  permission mode: {pp.permission_mode}",
            f"  targets: {', '.join(prompt.targets) or '(none)'}",
            f"  cost budget: {budget_text(pp.max_cost_usd, 'max_cost_usd')}",
            "  git commit: "
            + ("SKIPPED (--no-commit)" if p.committer == "noop" else repr(prompt.commit_message)),
        ]
        argv = launch_argv(p.packet, pp)
        if argv is not None:
            lines.append(f"  launch: {shlex.join(argv)}")
    lines.extend(p.notes)
    return "\n".join(lines)


@public
def run(
    packet: Packet | str | Path,
    *,
    stream: TextIO | None = None,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
    on_prompt_started: Callable[[str], None] | None = None,
    on_prompt_completed: Callable[[str, dict[str, Any]], None] | None = None,
    on_prompt_failed: Callable[[str, dict[str, Any]], None] | None = None,
    on_run_completed: Callable[[dict[str, Any]], None] | None = None,
    commit_callback: CommitCallback | None = None,
    sleep: Callable[[float], None] | None = None,
    rand: Callable[[], float] | None = None,
    default_runtime_store: str = "memory",
    default_committer: str = "noop",
    **options: Any,
) -> RunResult:
    """Run a packet.

    Args:
        packet: a packet directory (or a loaded :class:`Packet`).
        stream: where human output goes (``None`` = nowhere).
        on_*: observer callbacks (see :class:`prompt_runner.runner.context.Callbacks`),
            plain functions: they are called on the runner's thread, and the
            run waits for each (a slow one delays the run, its control
            requests and its status); an ``async def`` one is refused.
        commit_callback: ``(prompt_id, message, repos) -> CommitResult``; a
            callback committer (``repos``: repo name -> work-tree path). It must
            return a :class:`~prompt_runner.CommitResult` (``commits={repo:
            sha}``, or ``error="why"``); one that returns anything else (``None``
            too) or raises records the prompt ``commit_failed`` with a reason
            naming it, and the run halts there.
        sleep, rand: injectable clock/jitter for retries (tests).
        default_runtime_store, default_committer: used when ``options`` do not
            choose (the CLI passes ``file``/``git``).
        **options: :class:`RunOptions` fields (``provider``, ``model``, ``ids``,
            ``remaining``, ``no_commit``, ``new_run``, ``continue_run``...).

    Observer callbacks never stop a run: an exception one raises is logged
    (logger ``prompt_runner``, with its traceback) when it happens, the run
    goes on to its end, and then :class:`CallbackError` is raised from the
    first one, carrying the run's result as ``.result``.

    Returns:
        A :class:`RunResult` (exit code 0, 1 or 3).

    Raises:
        ArgumentError: an unknown argument or a value of the wrong type, an
            ``async def`` callback among them (a UserError, exit 2, and a TypeError).
        UserError: bad packet/options (exit 2); LockHeldError,
            ProviderMissingError and StorageError (the state directory is
            read-only, full or a file; exit 3).
        CallbackError: an observer callback raised (after the run finished).
    """
    callbacks = Callbacks(
        on_event=on_event,
        on_prompt_started=on_prompt_started,
        on_prompt_completed=on_prompt_completed,
        on_prompt_failed=on_prompt_failed,
        on_run_completed=on_run_completed,
    )
    callables("run", {**vars(callbacks), "commit_callback": commit_callback})
    p = _plan(
        packet_arg("run", packet),
        run_options("run", options, named=keyword_names(run)),
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )
    console = Console(stream, p.render, roots=session_roots(p))
    settled = _settled_without_running(p, console)
    if settled is not None:
        return settled
    # lazy: the run pipeline loads only for a run (see the imports above)
    from .runner.engine import run_plan
    from .runner.pipeline import run_pipeline
    from .runner.prepare import prepare_run

    checked = None if commit_callback is None else checked_commit_callback(commit_callback)
    store, committer = prepare_run(p, checked, console=console)
    return run_pipeline(
        p, store, committer, console, callbacks, executor=run_plan, sleep=sleep, rand=rand
    )


def checked_commit_callback(callback: CommitCallback) -> CommitCallback:
    """``callback`` wrapped so that what it does wrong is the prompt's commit failure.

    Args:
        callback: ``(prompt_id, message, repos) -> CommitResult``.

    Returns:
        A callback of the same shape that returns ``callback``'s
        :class:`~prompt_runner.CommitResult` unchanged; when ``callback``
        raises (an ``Exception``) or returns anything else (``None``,
        ``True``, a dict...), a ``CommitResult`` whose ``error`` says so, so
        the prompt is recorded ``commit_failed`` with that reason and the run
        halts as for any refused commit. ``KeyboardInterrupt`` and
        ``SystemExit`` pass through.
    """
    from .committer import CommitResult  # lazy: the run pipeline's (see the imports above)

    def commit(prompt_id: str, message: str, repos: Mapping[str, Path]) -> CommitResult:
        try:
            result = callback(prompt_id, message, repos)
        except Exception as exc:
            return CommitResult(error=f"commit_callback raised {type(exc).__name__}: {exc}")
        if not isinstance(result, CommitResult):
            return CommitResult(
                error=(
                    f"commit_callback returned {type(result).__name__}, not a "
                    "prompt_runner.CommitResult; return CommitResult(commits={repo: sha}) "
                    "after committing, or CommitResult(error='why') when it could not"
                )
            )
        problem = _commits_problem(result.commits, repos)
        if problem is not None and result.error is None:
            return CommitResult(error=f"commit_callback returned {problem}")
        return result

    return commit


_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _commits_problem(commits: object, repos: Mapping[str, Path]) -> str | None:
    """What is wrong with a callback's ``CommitResult.commits`` (``None``: nothing):
    it must map the prompt's target repo names to full commit ids, as git prints
    them (``git rev-parse HEAD``), which the records and ``progress.log`` keep."""
    if not isinstance(commits, Mapping):
        return f"commits={type(commits).__name__}, not a mapping of repo name -> sha"
    for name, sha in commits.items():
        if name not in repos:
            known = ", ".join(repos) or "none"
            return f"a commit for {name!r}, which is not a target repo of the prompt ({known})"
        if not isinstance(sha, str) or not _FULL_SHA.fullmatch(sha):
            return (
                f"commits[{name!r}]={sha!r}, not a full commit id; "
                "give the 40-hex sha `git rev-parse HEAD` prints, not a short one"
            )
    return None


def _settled_without_running(p: Plan, console: Console) -> RunResult | None:
    """Before anything is locked: the plan's notes as warnings, an unfinished
    scaffold refused, and the result of a dry run or of a run that selects
    nothing (``None``: the run goes on).

    Raises:
        UserError: a selected prompt's body still has scaffold placeholders.
    """
    for note in p.notes:
        console.say(f"warning: {note}")
    lifecycle.check_ready_to_send(p, console)
    if p.options.dry_run:
        console.say(dry_run_text(p))
        return RunResult(
            None,
            RunStatus.DRY_RUN,
            exit_code_for(RunStatus.DRY_RUN),
            message="Dry run: nothing was executed.",
        )
    if p.selected:
        return None
    # Nothing to run, but an agent a killed runner left behind (e.g. one
    # re-running a completed prompt by id) must not go on writing.
    from .runner.locks import close_dead_run, stop_orphaned_agents  # lazy: a run's step

    stop_orphaned_agents(p, None, console)
    close_dead_run(p, console)
    message = (
        "Nothing remaining — every prompt in this packet is completed. "
        "Name prompt ids or pass --all to run them again."
        if p.options.remaining
        else "Nothing selected."
    )
    console.say(message)
    return RunResult(None, RunStatus.NOTHING, exit_code_for(RunStatus.NOTHING), message=message)


@public(instead={"ids": "repair re-runs one prompt: pass its id as prompt_id"})
def repair(
    packet: Packet | str | Path,
    prompt_id: str | int,
    *,
    stream: TextIO | None = None,
    default_runtime_store: str = "memory",
    default_committer: str = "noop",
    sleep: Callable[[float], None] | None = None,
    rand: Callable[[], float] | None = None,
    **options: Any,
) -> RunResult:
    """Re-run one prompt as a repair session built from its recorded unmet items.

    The repair prompt is the body plus the stored ``last_error`` and the failed
    items of the stored ``last_verifier`` (``(none recorded)`` when there are
    none). The attempt loop then continues as usual (verify, recover, commit).

    Raises:
        ArgumentError: an unknown argument, ``ids`` (repair takes one
            ``prompt_id``), or a value of the wrong type.
        UserError: unknown prompt id or bad options.
    """
    loaded = packet_arg("repair", packet)
    opts = run_options("repair", options, named=keyword_names(repair))
    if opts.ids:
        raise ArgumentError(
            "repair re-runs one prompt and takes no ids",
            key="repair(ids=...)",
            fix="pass the prompt's id as prompt_id",
        )
    prompt = loaded.prompt(normalize_id(prompt_id_arg("repair", prompt_id), loaded.ids()))
    p = _plan(
        loaded,
        replace(opts, ids=(prompt.id,)),
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )
    console = Console(stream, p.render, roots=session_roots(p))
    # lazy: the run pipeline loads only for a repair (see the imports above)
    from .runner.pipeline import run_pipeline
    from .runner.prepare import prepare_run
    from .runner.repair_run import repair_executor, repair_text

    store, committer = prepare_run(p, None, console=console)
    executor = repair_executor(prompt.id, repair_text(p, prompt, store))
    return run_pipeline(
        p, store, committer, console, Callbacks(), executor=executor, sleep=sleep, rand=rand
    )
