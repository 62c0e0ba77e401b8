"""The public library API: everything the CLI does, a program can do.

Pipeline: ``load_packet -> resolve_plan -> run_plan -> report``. API runs
default to the in-memory store and the no-op committer (no filesystem writes,
no commits) unless asked (``runtime_store="file"``, ``committer="git"``); the CLI
passes ``file``/``git``.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from .api_options import callables, prompt_id_arg, prompt_ids, run_options
from .api_status import status as status  # the CLI's status calls it too (no pydantic there)
from .committer import CallbackCommitter, Committer, make_committer
from .errors import ArgumentError, CallbackError, StorageError, UserError
from .packet.loader import Packet, load_packet
from .planning import Plan, RunOptions, launch_argv, resolve_plan
from .render.text import Console
from .runner import lifecycle
from .runner.budget import open_ledger, usd
from .runner.context import Callbacks, RunContext
from .runner.engine import RunResult, fingerprint, open_run, run_plan
from .state._clock import iso_now
from .state.records import RunStatus, exit_code_for
from .state.store import RuntimeStore

STATE_DIR = ".prompt_runner"


def make_store(kind: str, packet: Packet) -> RuntimeStore:
    """``file`` (``<packet>/.prompt_runner``), ``memory`` or ``noop``."""
    from .state.store import FileStore, MemoryStore, NoopStore

    if kind == "file":
        # Group-commit the per-prompt logs (fsync at most every 200 ms and at each
        # prompt's end); progress.log, journals and state.json stay fsynced per write.
        return FileStore(packet.root / STATE_DIR, fsync_interval_ms=200)
    if kind == "noop":
        return NoopStore()
    return MemoryStore()


def _packet(caller: str, packet: Packet | str | Path) -> Packet:
    if isinstance(packet, Packet):
        return packet
    if not isinstance(packet, str | os.PathLike):
        raise ArgumentError(
            f"must be a packet directory (a path) or a loaded Packet, not {packet!r}",
            key=f"{caller}(packet=...)",
            fix="pass e.g. 'path/to/packet'",
        )
    return load_packet(packet)


def _progress(store: RuntimeStore) -> dict[str, str]:
    return {k: v.status for k, v in store.read_progress().items()}


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
        UserError: bad packet or options.
    """
    return _plan(
        _packet("plan", packet),
        run_options("plan", options),
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )


def _plan(
    loaded: Packet, opts: RunOptions, *, default_runtime_store: str, default_committer: str
) -> Plan:
    kind = opts.runtime_store or default_runtime_store
    progress: dict[str, str] = {}
    if kind == "file" or (loaded.root / STATE_DIR / "progress.log").exists():
        from .state.store import FileStore

        file_store = FileStore(loaded.root / STATE_DIR)
        progress = _progress(file_store)
        if (opts.remaining or opts.continue_run) and not progress:
            lifecycle.check_progress_not_lost(file_store)
        if opts.remaining:
            progress = lifecycle.reopen_changed_contracts(loaded, file_store.root, progress)
    resolved = resolve_plan(
        loaded,
        opts,
        progress=progress,
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )
    validate_provider_options(resolved)
    return resolved


def validate_provider_options(p: Plan) -> None:
    """Ask each selected prompt's provider whether it supports the resolved options.

    Raises:
        UserError: an option the provider cannot honour (at plan time, not at launch).
    """
    from .planning.launch import request_for
    from .providers.registry import get_provider

    providers: dict[str, Any] = {}
    for pp in p.selected_prompts():
        provider = providers.get(pp.provider)
        if provider is None:
            provider = providers[pp.provider] = get_provider(pp.provider)
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
            + (
                "SKIPPED (--no-commit)"
                if p.committer == "noop"
                else repr(prompt.front.commit or f"prompt-runner: {prompt.id} {prompt.name}")
            ),
        ]
        argv = launch_argv(p.packet, pp)
        if argv is not None:
            lines.append(f"  launch: {shlex.join(argv)}")
    lines.extend(p.notes)
    return "\n".join(lines)


def run(
    packet: Packet | str | Path,
    *,
    stream: TextIO | None = None,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
    on_prompt_started: Callable[[str], None] | None = None,
    on_prompt_completed: Callable[[str, dict[str, Any]], None] | None = None,
    on_prompt_failed: Callable[[str, dict[str, Any]], None] | None = None,
    on_run_completed: Callable[[dict[str, Any]], None] | None = None,
    commit_callback: Callable[[str, str, Mapping[str, Path]], Any] | None = None,
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
        on_*: observer callbacks (see :class:`prompt_runner.runner.context.Callbacks`).
        commit_callback: ``(prompt_id, message, repos) -> CommitResult``; a callback committer.
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
        ArgumentError: an unknown argument or a value of the wrong type (a
            UserError, exit 2, and a TypeError).
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
        _packet("run", packet),
        run_options("run", options),
        default_runtime_store=default_runtime_store,
        default_committer=default_committer,
    )
    console = Console(stream, p.render, roots=session_roots(p))
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
    if not p.selected:
        # Nothing to run, but an agent a killed runner left behind (e.g. one
        # re-running a completed prompt by id) must not go on writing.
        _stop_orphaned_agents(p, None, console)
        message = (
            "Nothing remaining — every prompt in this packet is completed. "
            "Name prompt ids or pass --all to run them again."
            if p.options.remaining
            else "Nothing selected."
        )
        console.say(message)
        return RunResult(None, RunStatus.NOTHING, exit_code_for(RunStatus.NOTHING), message=message)

    store, committer = _prepare(p, commit_callback)
    return _execute(
        p,
        store,
        committer,
        console,
        callbacks,
        sleep=sleep,
        rand=rand,
        executor=run_plan,
    )


_READINESS = {
    "path_not_found": ("does not exist", "create it (git init) or fix its path"),
    "not_a_directory": (
        "is a file, not a directory",
        "point the repo's path at its work tree directory",
    ),
    "not_git_repo": ("is not a git repository", "run `git init` in it, or use --no-commit"),
    "no_git_identity": (
        "has no git identity to commit with",
        "set `git config user.name` and `git config user.email`, or use --no-commit",
    ),
    "git_operation_in_progress": (
        "is in the middle of a merge, rebase, cherry-pick or revert",
        "finish or abort it (e.g. `git merge --abort`), or use --no-commit",
    ),
}


def _prepare(
    p: Plan, commit_callback: Callable[[str, str, Mapping[str, Path]], Any] | None
) -> tuple[RuntimeStore, Committer]:
    """Check providers and repos, then make the store and committer for ``p``.

    Raises:
        ProviderMissingError: a selected prompt's provider CLI is missing (exit 3).
        UserError: the runtime preflight failed (unless ``skip_preflight``).
        StorageError: the runtime state directory cannot be written (exit 3).
    """
    from .providers.registry import get_provider

    for name in sorted({pp.provider for pp in p.selected_prompts()}):
        get_provider(name).check_available()
    if not p.options.skip_preflight:
        from .packet.preflight import preflight_report

        git_needed = p.committer == "git"
        report = preflight_report(
            p.packet, needs_git=git_needed, needs_identity=git_needed, prompts=p.selected
        )
        if not report["runtime_ready"]:
            first = report["readiness_errors"][0]
            if first["scope"] == "prompt":  # a contract that reaches into a submodule
                raise UserError(
                    f"preflight failed: {first['reason']}",
                    file=first["file"],
                    key=first["key"],
                    fix=f"{first['fix']}; or pass --skip-preflight",
                )
            problem, fix = _READINESS[first["kind"]]
            raise UserError(
                f"preflight failed: repo {first['name']!r} ({first['path']}) {problem}",
                file=p.packet.manifest_file,
                key=f"repos.{first['name']}.path",
                fix=f"{fix}; or pass --skip-preflight",
            )
    store = make_store(p.runtime_store, p.packet)
    committer: Committer
    if commit_callback is not None:
        committer = CallbackCommitter(commit_callback)
    else:
        committer = make_committer(p.committer)
    if store.root is not None:
        from .state.usable import prepare_state_dir

        # Before any session: a read-only, full or misplaced state directory is
        # one sentence and exit 3, not a traceback after the agent worked.
        prepare_state_dir(store.root)
    return store, committer


def _execute(
    p: Plan,
    store: RuntimeStore,
    committer: Committer,
    console: Console,
    callbacks: Callbacks,
    *,
    sleep: Callable[[float], None] | None,
    rand: Callable[[], float] | None,
    executor: Callable[[RunContext], RunResult],
) -> RunResult:
    from .providers.registry import get_provider

    lock = store.lock()
    if store.root is None and p.committer == "git":
        # An in-memory run still commits to the packet's repos: hold the same
        # run lock as a file-store run, so two runs never commit at once.
        from .state.lock import RunLock
        from .state.usable import prepare_state_dir

        prepare_state_dir(p.packet.root / STATE_DIR)
        lock = RunLock(p.packet.root / STATE_DIR / "run.pid")
    lock.acquire()
    repo_locks: list[Any] = []
    failure: BaseException | None = None  # what ended the run early, reported over cleanup faults
    try:
        repo_locks = _lock_target_repos(p, lock)
        agents_dir = _stop_orphaned_agents(p, lock, console)
        foreign: dict[str, set[str]] = {}
        carry = None
        if p.committer == "git":
            foreign, carry = lifecycle.warn_foreign_changes(p, console)
        run_id, resumed = open_run(p, store, console)
        previous = store.read_current_run() or {}
        started = iso_now()
        # Touch state first: a corrupt record of truth fails here, before the run
        # is recorded as running.
        store.set_run_meta({"run_id": run_id, "packet": p.packet.name, "started_at": started})
        adopted: dict[str, dict[str, set[str]]] = {}
        if resumed:
            interrupted = lifecycle.settle_interrupted(store, console)
            if p.committer == "git":
                adopted = lifecycle.adopt_interrupted_work(p, interrupted, foreign, console)
        elif store.root is not None:
            lifecycle.claim_amendments(p, store.root, run_id, console)
        fence = list(previous.get("targets") or p.selected) if resumed else list(p.selected)
        store.write_current_run(
            {
                "run_id": run_id,
                "fingerprint": fingerprint(p),
                "status": "running",
                "targets": fence,
                "packet": p.packet.name,
                "started_at": previous.get("started_at", started) if resumed else started,
                "resumed_at": started if resumed else None,
            }
        )
        journal = store.journal(run_id)
        try:
            journal.append(
                "run_resumed" if resumed else "run_started",
                {"targets": list(p.selected), "fingerprint": fingerprint(p)},
            )
        finally:
            journal.close()
        skip: list[str] = []
        if resumed and not p.options.ids:
            done = {k: v.status for k, v in store.read_progress().items()}
            done = lifecycle.reopen_changed_contracts(p.packet, store.root, done)
            skip = [i for i in p.selected if done.get(i) == "completed"]
        todo = [i for i in p.selected if i not in skip]
        verb = "Resuming" if resumed else "Starting"
        console.say(f"{verb} run {run_id}: {p.packet.name}, prompts {', '.join(todo) or '(none)'}")
        if skip:
            console.say(
                f"Skipping {', '.join(skip)}: already completed in this run "
                "(name their ids to run them again)."
            )
        ctx = RunContext(
            plan=p,
            store=store,
            committer=committer,
            console=console,
            run_id=run_id,
            provider_factory=get_provider,
            callbacks=callbacks,
            skip=set(skip),
        )
        ctx.state_view["foreign_changes"] = foreign
        ctx.state_view["agents_dir"] = agents_dir
        ctx.workspace_carry = carry
        ctx.state_view["foreign_snapshot"] = lifecycle.without_adopted(
            carry.snapshot if carry is not None else {}, adopted
        )
        ctx.state_view["adopted"] = adopted
        ctx.cost, spent_note = open_ledger(p, store, run_id, resumed)
        if spent_note is not None:
            console.say(spent_note)
        if sleep is not None:
            ctx.sleep = sleep
        if rand is not None:
            ctx.rand = rand
        ctx.control = _start_control(ctx)
        status = "interrupted"
        try:
            result = executor(ctx)
            status = result.status
        except BaseException as exc:
            failure = exc
            lifecycle.record_interruption(ctx)
            if isinstance(exc, KeyboardInterrupt):
                # What the run did before the signal, for `run --json`'s one document.
                exc.run_result = _interrupted_result(ctx)  # type: ignore[attr-defined]
            raise
        finally:
            console.flush()  # event lines still gathered when a session was cut short
            try:
                current = dict(store.read_current_run() or {})
                current.update({"status": status, "finished_at": iso_now()})
                store.write_current_run(current)
            except StorageError:
                if failure is None:
                    raise  # else the first fault (a full disk fails every write) is reported
            _finish_control(ctx, status)
        console.say(result.message)
        ctx.notify("on_run_completed", result.to_dict())
        observer_errors = ctx.observer_errors
    except BaseException as exc:
        failure = exc
        raise
    finally:
        try:
            close = getattr(store, "close", None)
            if callable(close):
                close()  # may raise StorageError (a full disk): the locks go anyway
        except StorageError:
            if failure is None:
                raise
        finally:
            for held in reversed(repo_locks):
                held.release()
            lock.release()
    if observer_errors:
        # Raised only now: the run, its state and its locks are finished first.
        raise CallbackError(result, observer_errors) from observer_errors[0][1]
    return result


def _interrupted_result(ctx: RunContext) -> RunResult:
    """The run so far, after Ctrl-C or SIGTERM: each selected prompt's recorded
    status (``interrupted`` for the one that was running; not yet started ones
    left out). Never raises: an unreadable record is left out."""
    prompts: dict[str, str] = {}
    for prompt_id in ctx.plan.selected:
        try:
            recorded = ctx.store.load_prompt(prompt_id).get("status")
        except Exception:
            continue
        if isinstance(recorded, str) and recorded != "pending":
            prompts[prompt_id] = recorded
    return RunResult(
        ctx.run_id,
        RunStatus.INTERRUPTED,
        exit_code_for(RunStatus.INTERRUPTED),
        prompts=prompts,
        failures=[i for i, v in prompts.items() if v not in ("completed", "interrupted")],
        message="Run interrupted.",
    )


def _lock_target_repos(p: Plan, lock: Any) -> list[Any]:
    """Holding the packet's lock: also lock each target work tree
    (``<git dir>/prompt-runner.pid``), so two packets never run sessions and
    commit in one work tree at once (each would sweep in the other's files).

    Only runs that hold a real packet lock take them. Returns the locks held.

    Raises:
        InfrastructureError: another live run holds a target work tree (exit 3);
            nothing is left locked.
    """
    from . import git
    from .errors import InfrastructureError, LockHeldError
    from .state.lock import RunLock

    if not isinstance(lock, RunLock):
        return []
    held: list[RunLock] = []
    seen: set[str] = set()
    try:
        for name, path in lifecycle.selected_target_repos(p).items():
            if not path.is_dir():
                continue
            res = git.run_git(path, "rev-parse", "--absolute-git-dir")
            git_dir = res.stdout.strip()
            if not res.ok or not git_dir or git_dir in seen:
                continue
            seen.add(git_dir)
            repo_lock = RunLock(Path(git_dir) / "prompt-runner.pid")
            try:
                repo_lock.acquire()
            except LockHeldError as exc:
                raise InfrastructureError(
                    f"repo {name!r} ({path}) is in use by another run (pid {exc.pid}, lock "
                    f"{exc.pid_file}); wait for that run to finish or stop it, then run again"
                ) from None
            held.append(repo_lock)
    except BaseException:
        for repo_lock in reversed(held):
            repo_lock.release()
        raise
    return held


def _stop_orphaned_agents(p: Plan, lock: Any, console: Console) -> Path | None:
    """Stop agents a dead runner left running (runner/orphans.py), whatever the run selects.

    A run holding the packet's run lock stops them at once. A run that takes
    no lock (memory store, no commits; or one that selects nothing) takes it
    just for this when agents are registered or a ``run.pid`` is left (a dead
    runner's is then removed); if a live run holds it, the agents are that
    run's and are left alone.

    Returns the directory this run registers its own agents in, or ``None``
    when the run holds no real lock (then it registers none).
    """
    from .errors import LockHeldError
    from .runner import orphans
    from .state.lock import RunLock

    directory = p.packet.root / STATE_DIR / orphans.AGENTS_DIR
    if isinstance(lock, RunLock):
        _say_stopped(orphans.reap(directory), console)
        return directory
    pid_file = p.packet.root / STATE_DIR / "run.pid"
    if orphans.registered(directory) or pid_file.exists():
        # Also a dead runner's run.pid: taken over and released, it is gone.
        own = RunLock(pid_file)
        try:
            own.acquire()
        except LockHeldError:
            return None
        try:
            _say_stopped(orphans.reap(directory), console)
        finally:
            own.release()
    return None


def _say_stopped(records: list[dict[str, Any]], console: Console) -> None:
    for record in records:
        console.say(
            f"warning: stopped {record.get('kind') or 'agent'} pid {record.get('pid')} "
            f"(prompt {record.get('prompt_id')}, run {record.get('run_id')}) that a runner "
            "which died left running; whatever it wrote stays uncommitted in the work tree"
        )


def _start_control(ctx: RunContext) -> Any:
    """The run's control plane (``None`` for runs without disk state); see control/plane.py."""
    from .control.run_plane import start_plane

    return start_plane(ctx)


def _finish_control(ctx: RunContext, status: str) -> None:
    """Record the run's end status in the control snapshot (never raises)."""
    from .control.run_plane import finish_plane

    finish_plane(ctx.control, status)


def verify(
    packet: Packet | str | Path, *, ids: str | int | tuple[str, ...] | list[str] = ()
) -> dict[str, Any]:
    """Check contracts only: no session, no state or progress change.

    Args:
        ids: one prompt id (``"01"``) or several (``["01", "03"]``); empty = all.

    Returns:
        ``{"schema": "prompt_runner.verify/v1", "pass", "prompts", "failures",
        "faults", "reports": [{prompt_id, name, pass, items: [...]}]}``.

    Raises:
        ArgumentError: ``ids`` is not an id or a list of ids.
        UserError: unknown prompt id.
    """
    from .runner.selection import normalize_id
    from .verifier import VerifyContext
    from .verifier import verify as run_contract

    loaded = _packet("verify", packet)
    wanted = prompt_ids("verify", ids)
    known = loaded.ids()
    chosen = [loaded.prompt(normalize_id(i, known)).id for i in wanted] if wanted else known
    reports = []
    failures = faults = 0
    for prompt_id in chosen:
        prompt = loaded.prompt(prompt_id)
        default = prompt.targets[0] if prompt.targets else None
        report = run_contract(
            prompt.contract,
            VerifyContext(
                repos=loaded.repos,
                default_repo=default,
                on_process_start=_verify_registrar(loaded.root, prompt_id),
            ),
        )
        doc = report.to_dict()
        failures += len(report.failures())
        faults += 1 if report.fault is not None else 0
        reports.append({"prompt_id": prompt_id, "name": prompt.name, **doc})
    return {
        "schema": "prompt_runner.verify/v1",
        "pass": failures == 0 and faults == 0,
        "prompts": len(chosen),
        "failures": failures,
        "faults": faults,
        "reports": reports,
    }


def _verify_registrar(root: Path, prompt_id: str) -> Callable[[int], Any]:
    """``verify`` registers each command in the packet's orphan registry while it
    runs, as a run does (runner/orphans.py), so one left by a ``verify`` killed
    with -9 is stopped by the next run. A ``.prompt_runner/`` it had to create
    for that is removed again once empty: ``verify`` leaves no state behind.
    A packet where it cannot be made still verifies, unregistered."""
    from .runner import orphans
    from .state.usable import GITIGNORE

    state = root / STATE_DIR
    agents = state / orphans.AGENTS_DIR

    def on_start(pid: int) -> Callable[[], None] | None:
        created = not state.exists()
        try:
            if created:
                state.mkdir()
                (state / ".gitignore").write_bytes(GITIGNORE)
        except OSError:
            return None
        undo = orphans.registrar(
            agents, run_id="verify", prompt_id=prompt_id, kind=orphans.VERIFY_COMMAND
        )(pid)

        def forget() -> None:
            if undo is not None:
                undo()
            if created:
                with contextlib.suppress(OSError):
                    agents.rmdir()
                    if [p.name for p in state.iterdir()] == [".gitignore"]:
                        (state / ".gitignore").unlink()
                        state.rmdir()

        return forget

    return on_start


def repair(
    packet: Packet | str | Path,
    prompt_id: str,
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
    from .runner.engine import repair_executor
    from .runner.repair import repair_prompt
    from .runner.selection import normalize_id

    loaded = _packet("repair", packet)
    opts = run_options("repair", options)
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
    store, committer = _prepare(p, None)
    record = store.load_prompt(prompt.id)
    if not record.get("attempts") and not record.get("last_verifier"):
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
    text = repair_prompt(prompt.body, last_error=record.get("last_error"), failures=failures)
    return _execute(
        p,
        store,
        committer,
        console,
        Callbacks(),
        sleep=sleep,
        rand=rand,
        executor=repair_executor(prompt.id, text),
    )
