"""The values one prompt's attempt loop passes between its steps.

* :class:`LoopState` -- what carries from one attempt to the next (mode, the
  next prompt text, the provider session, budgets spent, paths touched);
* :class:`Attempt` -- one begun attempt (its record key, files, "before"
  snapshot, request and event sink);
* :class:`Verdict` -- the judged workspace after its session;
* :class:`Decided` -- the recovery decision and the attempt's status;
* :class:`PromptOutcome` -- how the loop ended, for the completion step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..planning.prompt_plan import PromptPlan
from ..providers.base import Provider, SessionRequest
from ..providers.failure import FailureEnvelope
from ..render.sinks import SessionFiles
from ..state.records import AttemptStatus
from ..verifier import VerifierReport, VerifyContext
from . import workspace
from .attempt_sink import AttemptSink
from .recovery import Budgets, Decision

ENDS = frozenset({"complete", "fail", "halt"})
"""Decisions that end the loop."""
CONTINUING = frozenset({"retry", "resume", "repair", "repeat", "wait", "failover"})
"""Decisions that start another session."""
NEXT_MODES = {
    "retry": "retry",
    "resume": "resume",
    "repair": "repair",
    "repeat": "agent_owned_repeat",
    "wait": "resume",  # after the wait: ``retry`` instead when the session has no id
    "failover": "failover",
}
"""Decision -> the mode of the session it starts."""


@dataclass
class LoopState:
    """What one prompt's attempt loop carries from attempt to attempt.

    Attributes:
        pp: the resolved prompt.
        provider: its provider.
        vctx: where its contract is checked (the baseline is the prompt's own
            once its first session starts).
        repos: its target repos, name -> directory.
        agent_owned: the packet's completion is ``agent_owned``.
        controlled: an agent-controlled iteration: a failed provider turn is
            never completed by a passing contract.
        base: the text retries and repairs build on.
        text: the next session's prompt text.
        mode: the next session's mode (``run``, ``retry``, ``resume``,
            ``repair``, ``agent_owned_repeat``, ``failover``).
        env: extra provider environment.
        session_offset: fresh sessions this prompt used before this loop.
        session_number: fresh sessions so far, ``session_offset`` included.
        session_id: the provider session to resume.
        last_failure_message: the last provider failure's message.
        budgets: recovery budgets spent.
        touched: per target repo, the paths the sessions changed (an
            interrupted earlier run's adopted work included).
        prompt_started: the first session's snapshot was taken.
        before_session: called with the mode before every session.
        origin: the prompt's own plan (``pp`` is a failover target's after a
            failover; its targets are ``origin.failover``).
        failovers: failover targets used so far (the next is
            ``origin.failover[failovers]``).
        resume_text: the next resume's message when it is not a transport
            failure's (after a usage wait), else ``None``.
    """

    pp: PromptPlan
    provider: Provider
    vctx: VerifyContext
    repos: dict[str, Path]
    agent_owned: bool
    controlled: bool
    base: str
    text: str
    mode: str
    env: dict[str, str]
    session_offset: int = 0
    session_number: int = 0
    session_id: str | None = None
    last_failure_message: str | None = None
    budgets: Budgets = field(default_factory=Budgets)
    touched: dict[str, set[str]] = field(default_factory=dict)
    prompt_started: bool = False
    before_session: Callable[[str], None] | None = None
    origin: PromptPlan | None = None
    failovers: int = 0
    resume_text: str | None = None

    @property
    def next_failover(self) -> PromptPlan | None:
        """The failover target a ``failover`` would continue on, or ``None``."""
        targets = (self.origin or self.pp).failover
        return targets[self.failovers] if self.failovers < len(targets) else None

    @property
    def prompt_id(self) -> str:
        return self.pp.id


@dataclass
class Attempt:
    """One begun attempt.

    Attributes:
        number: 1-based within this loop.
        mode: its session's mode.
        key: its store key (``store.start_attempt``).
        before: the workspace snapshot before its session.
        steers: steers accepted for its session (``control.plane.Steer``).
        request: the provider request.
        sink: where its events go.
        files: its transcript and event files (``None`` without a state dir).
        message: what its session is sent first: the request's prompt text, or
            for a ``resume`` the resume message (with the queued steers).
    """

    number: int
    mode: str
    key: int
    before: workspace.Snapshot
    steers: list[Any]
    request: SessionRequest
    sink: AttemptSink
    files: SessionFiles | None
    message: str = ""

    @property
    def resuming(self) -> bool:
        return self.mode == "resume"


@dataclass(frozen=True)
class Verdict:
    """The judged workspace after a session.

    Attributes:
        report: the verifier report (branch and submodule items included).
        failure: the session's failure envelope, ``None`` for nominal success.
        after: the post-session snapshot (for a contract that runs
            commands, the one taken after verifying: what its commands wrote
            included); ``None`` when the session is committed whole (a clean
            session on a clean tree, a contract without commands).
        changed: the session changed a target repo; ``None`` when not looked
            at (committed whole: the commit says).
    """

    report: VerifierReport
    failure: FailureEnvelope | None
    after: workspace.Snapshot | None
    changed: bool | None


@dataclass(frozen=True)
class Decided:
    """What follows an attempt.

    Attributes:
        decision: the recovery decision (a cost budget's refusal turns a
            continuing one into ``fail``).
        status: the attempt's status to record.
        refusal: the cost budget that refused the next session, if any.
    """

    decision: Decision
    status: AttemptStatus
    refusal: FailureEnvelope | None = None


@dataclass
class PromptOutcome:
    """How a prompt's attempt loop ended.

    Attributes:
        action: ``complete``, ``fail`` or ``halt``.
        status: the prompt status to record (``completed`` for complete).
        reason: one human line.
        source: ``verifier`` / ``verifier_override`` for completions.
        report: the last verifier report.
        last_error: the last provider failure message.
        attempts: attempts recorded in this invocation.
        sessions: fresh sessions (not resumes) this invocation started.
        touched: per target repo, the paths the sessions changed (relative to
            the work-tree root) -- what the committer may commit.
        workspace_after: the last post-session workspace snapshot (taken
            after verifying, see ``Verdict.after``); ``None`` when the last
            session was committed whole (a clean session on a clean tree: every
            change in the target repos is its work).
        workspace_before: the last session's pre-session snapshot.
        attempt_key: the store key of the last attempt.
        extra: more fields for the prompt's record (a cost budget's failure).
    """

    action: str
    status: str
    reason: str
    source: str | None = None
    report: VerifierReport | None = None
    last_error: str | None = None
    attempts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    sessions: int = 0
    touched: dict[str, set[str]] = field(default_factory=dict)
    workspace_after: workspace.Snapshot | None = None
    workspace_before: workspace.Snapshot | None = None
    attempt_key: int | None = None
