"""What one run carries through its prompts: plan, store, committer, output, hooks."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..committer import Committer
from ..notify import Notifier
from ..planning import Plan
from ..providers.base import Provider, SessionHandle
from ..providers.events import Event
from ..render.text import Console
from ..state.store import RuntimeStore
from . import notifying, workspace
from .branch_pins import BranchPins
from .budget import CostLedger
from .position import Position
from .usage_book import UsageBook


@dataclass
class Callbacks:
    """Observer callbacks of the public API; each may be ``None``.

    * ``on_event(prompt_id, event_dict)`` -- every canonical event;
    * ``on_prompt_started(prompt_id)``;
    * ``on_prompt_completed(prompt_id, record)``;
    * ``on_prompt_failed(prompt_id, record)``;
    * ``on_run_completed(summary)``.

    A callback that raises never breaks the run: the exception is logged
    (logger ``prompt_runner``, with its traceback) and said on the console, the
    run goes on, and the library raises
    :class:`~prompt_runner.errors.CallbackError` from the first one once the
    run has finished (``RunContext.observer_errors`` collects them).
    """

    on_event: Callable[[str, dict[str, Any]], None] | None = None
    on_prompt_started: Callable[[str], None] | None = None
    on_prompt_completed: Callable[[str, dict[str, Any]], None] | None = None
    on_prompt_failed: Callable[[str, dict[str, Any]], None] | None = None
    on_run_completed: Callable[[dict[str, Any]], None] | None = None


class ControlHooks(Protocol):
    """The control plane's half of a run (see ``control/plane.py``)."""

    def on_event(self, prompt_id: str, event: Event, encoded: str | None = None) -> None:
        """Fold and buffer ``event``; ``encoded`` is its shared JSON encoding."""
        ...

    def on_events(
        self, prompt_id: str, events: Sequence[Event], encoded: Sequence[str | None]
    ) -> None:
        """:meth:`on_event` for several events (``encoded[i]`` encodes ``events[i]``)."""
        ...

    def tick(self, prompt_id: str, handle: SessionHandle) -> None: ...

    def boundary(self, prompt_id: str | None, *, next_mode: str | None = None) -> None:
        """After an attempt; ``next_mode`` is the mode of the prompt's next session
        (``None``: none follows)."""
        ...

    def take_steer(self, prompt_id: str) -> Any:
        """The steer that interrupted the session, if any (consumed once)."""
        ...

    def take_queued_steers(self, prompt_id: str, *, attempt: int | None = None) -> list[Any]:
        """The steers accepted at a boundary for the prompt's next session."""
        ...


@dataclass
class RunContext:
    """Everything the attempt loop needs (built by ``pipeline.run_context``).

    Attributes:
        sleep: injectable ``sleep(seconds)`` (tests pass a recorder).
        rand: injectable ``random()`` in ``[0, 1)`` for jitter.
        env: the environment providers and verifier commands inherit.
        skip: selected prompts a resumed run already completed.
        foreign_changes: per target repo, the paths uncommitted before the run
            (git committer; ``completion`` warns when a prompt commits one).
        foreign_snapshot: the run's opening snapshot minus adopted work: what
            the baseline verification judges against.
        adopted: per interrupted prompt, per repo, the paths its dead runner
            left uncommitted (committed with it).
        agents_dir: where this run registers its agents (``None``: it holds no
            real lock and registers none).
        pins: each target repo's branch and HEAD pinned at run start (git
            committer; ``None`` until pinned).
        position: where the attempt loop is (:class:`Position`).
        workspace_carry: the workspace snapshot derived at the last commit,
            the next session's "before" (taken once, by ``take_carry``).
        cost: reported cost so far against the cost budgets (``budget.py``).
        observer_errors: ``(callback name, exception)`` for each observer
            callback that raised, in order (the API re-raises the first).
        notifier: where run events go (``notify:``; a disabled one when none
            is configured): ``ctx.notifier.emit(kind, prompt=, reason=,
            next_step=, details=)`` returns at once and never raises for a
            notifier's fault (``prompt_runner.notify``).
        usage: the last known usage windows per provider (``usage_book.py``).
        sticky_failover: original provider -> failover targets used, for
            ``failover_sticky`` prompts (``handoff.py``).
        after_session: prompts whose record holds this run's
            ``dirty_after_session`` (``leftovers.py``), cleared as their next
            session begins.
    """

    plan: Plan
    store: RuntimeStore
    committer: Committer
    console: Console
    run_id: str
    provider_factory: Callable[[str], Provider]
    callbacks: Callbacks = field(default_factory=Callbacks)
    control: ControlHooks | None = None
    sleep: Callable[[float], None] = time.sleep
    rand: Callable[[], float] = random.random
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    providers: dict[str, Provider] = field(default_factory=dict)
    skip: set[str] = field(default_factory=set)
    foreign_changes: Mapping[str, set[str]] = field(default_factory=dict)
    foreign_snapshot: workspace.Snapshot = field(default_factory=dict)
    adopted: Mapping[str, Mapping[str, set[str]]] = field(default_factory=dict)
    agents_dir: Path | None = None
    pins: BranchPins | None = None
    position: Position = field(default_factory=Position)
    workspace_carry: workspace.Carry | None = None
    cost: CostLedger = field(default_factory=CostLedger)
    observer_errors: list[tuple[str, BaseException]] = field(default_factory=list)
    notifier: Notifier = field(default_factory=Notifier.disabled)
    usage: UsageBook = field(default_factory=UsageBook)
    sticky_failover: dict[str, int] = field(default_factory=dict)
    after_session: set[str] = field(default_factory=set)

    def provider(self, name: str) -> Provider:
        if name not in self.providers:
            self.providers[name] = self.provider_factory(name)
        return self.providers[name]

    def take_carry(self) -> workspace.Carry | None:
        """The snapshot derived at the last commit, handed out once (see ``workspace``)."""
        carry, self.workspace_carry = self.workspace_carry, None
        return carry

    def notify_record(self, name: str, prompt_id: str) -> None:
        """Call ``on_prompt_completed``/``on_prompt_failed`` with the prompt's stored
        record, read only when that callback is set or a failure is to be
        notified (the read costs a log replay)."""
        observed = getattr(self.callbacks, name, None) is not None
        told = name == "on_prompt_failed" and notifying.wants_failure(self.notifier)
        if not (observed or told):
            return
        record = self.store.load_prompt(prompt_id)
        if told:
            notifying.prompt_failed(self.notifier, prompt_id, record)
        if observed:
            self.notify(name, prompt_id, record)

    def notify(self, name: str, *args: Any) -> None:
        callback = getattr(self.callbacks, name, None)
        if callback is None:
            return
        try:
            callback(*args)
        except Exception as exc:  # an observer must never break a run; raised after it
            self.observer_errors.append((name, exc))
            import logging  # lazy: only an observer's failure is logged (~10 ms of start-up)

            logging.getLogger("prompt_runner").error(
                "observer %s raised %r; the run goes on and raises it when it ends",
                name,
                exc,
                exc_info=exc,
            )
            self.console.say(
                f"warning: observer {name} raised {exc!r}; raised again when the run ends"
            )
