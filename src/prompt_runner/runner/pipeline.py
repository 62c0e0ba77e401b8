"""The run pipeline: a resolved plan in, a :class:`RunResult` out.

``prompt_runner.run`` and ``prompt_runner.repair`` resolve the plan, then::

    prepare_run      providers there, orphans stopped, repos ready, store made (prepare.py)
    hold_locks       run.pid, the work trees' locks, survivors stopped       (locks.py)
      open_run       run id, start recorded, skip set, foreign/adopted work  (opening.py)
      run_context    the RunContext the prompts run in                       (here)
      execute_run    the executor under the control plane; finish_run        (finishing.py)
      maintain_repos git's auto-maintenance, batched, however the run ended  (completion.py)
    (store closed, locks released)
    notifier closed  queued notifications get at most notify.timeout          (notifying.py)
    observer errors  raised last, as CallbackError                            (here)

Each step is a plain function of what the one before returned, testable alone
(``tests/runner/test_<step>.py``; ``tests/helpers/run_context.py`` builds a
context from a dict-built packet).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..committer import Committer
from ..errors import CallbackError
from ..planning import Plan
from ..providers import registry
from ..render.text import Console
from ..state.store import RuntimeStore
from . import notifying
from .budget import open_ledger
from .completion import maintain_repos
from .context import Callbacks, RunContext
from .finishing import Executor, execute_run
from .lifecycle import without_adopted
from .locks import hold_locks
from .opening import OpenedRun, open_run
from .result import RunResult


def run_pipeline(
    p: Plan,
    store: RuntimeStore,
    committer: Committer,
    console: Console,
    callbacks: Callbacks,
    *,
    executor: Executor,
    sleep: Callable[[float], None] | None = None,
    rand: Callable[[], float] | None = None,
) -> RunResult:
    """Hold the locks, open the run, execute it, finish it (see the module doc).

    Args:
        executor: ``engine.run_plan`` (a run) or ``engine.repair_executor(...)``.
        sleep, rand: injectable clock and jitter for retries (``None``: the real ones).

    Raises:
        CallbackError: an observer callback raised (after the run finished and
            its locks were released), carrying the result.
        LockHeldError, InfrastructureError, StorageError, StateError,
        PacketChangedError, UserError: the run could not be opened or recorded.
    """
    ctx: RunContext | None = None
    try:
        with hold_locks(p, store, console) as held:
            opened = open_run(p, store, console)
            ctx = run_context(
                p,
                store,
                committer,
                console,
                opened,
                callbacks=callbacks,
                agents_dir=held.agents_dir,
                sleep=sleep,
                rand=rand,
            )
            try:
                try:
                    result = execute_run(ctx, executor)
                except BaseException as exc:
                    notifying.run_cut_short(ctx.notifier, exc)
                    raise
                notifying.run_ended(ctx.notifier, result)
            finally:  # git's auto-maintenance, batched: once as the run ends, however
                maintain_repos(committer, console, due_only=False)
    finally:
        if ctx is not None:  # after the locks: waits at most notify.timeout
            notifying.close(ctx.notifier, console)
    if ctx.observer_errors:
        # Raised only now: the run, its state and its locks are finished first.
        raise CallbackError(result, ctx.observer_errors) from ctx.observer_errors[0][1]
    return result


def run_context(
    p: Plan,
    store: RuntimeStore,
    committer: Committer,
    console: Console,
    opened: OpenedRun,
    *,
    callbacks: Callbacks | None = None,
    agents_dir: Path | None = None,
    sleep: Callable[[float], None] | None = None,
    rand: Callable[[], float] | None = None,
) -> RunContext:
    """The :class:`RunContext` an opened run's prompts run in.

    Its cost ledger counts what a resumed run already spent (saying so); the
    foreign snapshot leaves out the work adopted by interrupted prompts.

    Raises:
        StateError: a resumed run with a cost budget cannot read its records.
    """
    ctx = RunContext(
        plan=p,
        store=store,
        committer=committer,
        console=console,
        run_id=opened.run_id,
        provider_factory=registry.get_provider,
        callbacks=callbacks if callbacks is not None else Callbacks(),
        skip=set(opened.skip),
        foreign_changes=opened.foreign_changes,
        foreign_snapshot=without_adopted(
            opened.carry.snapshot if opened.carry is not None else {}, opened.adopted
        ),
        adopted=opened.adopted,
        agents_dir=agents_dir,
        workspace_carry=opened.carry,
    )
    ctx.notifier = notifying.open_for_run(p, store.root, opened.run_id, ctx.env, console)
    ctx.cost, spent_note = open_ledger(p, store, opened.run_id, opened.resumed)
    if spent_note is not None:
        console.say(spent_note)
    if sleep is not None:
        ctx.sleep = sleep
    if rand is not None:
        ctx.rand = rand
    return ctx
