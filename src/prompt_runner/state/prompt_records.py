"""The fields an attempt and a prompt save, as dataclasses (SPEC 6: ``state.json``
"prompts: status, attempts ...").

Like pip's ``models/installation_report.py``, each field says what its saved key
means. A prompt's record is kept in ``prompts/<id>.jsonl`` as operations folded
on read (:mod:`prompt_runner.state.prompt_log`) and is what ``status --json``
shows under ``prompts``.

* Writers build the frozen :class:`PromptStart`, :class:`AttemptStart` and
  :class:`AttemptEnd` and save ``to_dict()``: the same keys in the same order
  as the dict literals they replace, so the files stay byte-identical.
* Readers take :meth:`PromptRecord.from_dict` / :meth:`AttemptRecord.from_dict`
  of what they load. Reading never fails on an older or newer record: an
  absent key reads ``None``, keys this version does not know are kept in ``extra``.

Statuses are :mod:`prompt_runner.state.records`' enums (plain ``str`` as read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, Final, Literal, Self

from prompt_runner.state.records import AttemptStatus, PromptStatus

__all__ = ["ABSENT", "AttemptEnd", "AttemptRecord", "AttemptStart", "PromptRecord", "PromptStart"]


class _Absent(Enum):
    ABSENT = "absent"


ABSENT: Final = _Absent.ABSENT
"""A field value meaning "this key is not saved" (``None`` is saved as ``null``)."""

Absent = Literal[_Absent.ABSENT]


def _as_dict(record: Any) -> dict[str, Any]:
    """``record``'s fields as the saved keys, in field order (:data:`ABSENT` ones left out)."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if value is not ABSENT:
            out[f.name] = value
    return out


def _from_dict(cls: type[Any], doc: Mapping[str, Any], **converted: Any) -> Any:
    names = {f.name for f in fields(cls)} - {"extra"}
    known = {k: doc.get(k) for k in names}
    known.update(converted)
    return cls(**known, extra={k: v for k, v in doc.items() if k not in names})


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptStart:
    """The keys saved as an attempt starts (the ``attempt_start`` operation)."""

    attempt: int
    """1-based number of the attempt in this execution of the prompt."""
    mode: str
    """How its session starts: ``run``, ``retry``, ``resume``, ``repair`` or
    ``agent_owned_repeat``."""
    status: AttemptStatus = AttemptStatus.RUNNING
    """Always ``running`` here; the end (or a later run) records how it ended."""
    started_at: str
    """When it started: ISO 8601 UTC with milliseconds."""
    provider: str
    """The provider that runs its session."""
    model: str | None
    """The model asked for (``None``: the provider's default)."""
    run_id: str | None
    """The run generation it belongs to."""

    def to_dict(self) -> dict[str, Any]:
        """The saved keys, in the order they are written."""
        return _as_dict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptEnd:
    """The keys saved as an attempt's session has been judged (``attempt_finish``)."""

    status: AttemptStatus
    """How the attempt ended."""
    completed_at: str
    """When it was judged: ISO 8601 UTC with milliseconds."""
    duration_ms: int
    """How long its session (and any steers) ran, in milliseconds."""
    session_id: str | None
    """The provider's session id (what a resume continues), if it reported one."""
    provider_outcome: str
    """``success``, or ``failure`` when the provider failed (see ``failure``)."""
    failure_class: str | None
    """The provider failure's class (``rate_limited``, ``auth``, ...), else ``None``."""
    failure: Mapping[str, Any] | None
    """The provider failure's envelope (``FailureEnvelope.to_dict()``), else ``None``."""
    verifier: Mapping[str, Any]
    """The verifier's report on the workspace (``VerifierReport.to_dict()``)."""
    workspace_changed: bool | None
    """Whether the session changed a target repo (``None``: it could not be told)."""
    decision: str
    """What the attempt loop did next: ``complete``, ``retry``, ``resume``,
    ``repair``, ``repeat``, ``fail`` or ``halt``."""
    reason: str
    """One line saying why (also printed)."""
    delay_ms: int
    """The wait before the next session (retries only), in milliseconds."""
    usage: Mapping[str, Any]
    """Tokens and cost the provider reported (``Usage.to_dict()``)."""
    cost_usd: float | None
    """The session's reported cost in USD (``None``: not reported)."""
    tool_count: int
    """Tool calls the session made."""
    budget_failure: Mapping[str, Any] | Absent = ABSENT
    """Saved only when a cost budget refused the next session: its envelope."""

    def to_dict(self) -> dict[str, Any]:
        """The saved keys, in the order they are written."""
        return _as_dict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptRecord:
    """One attempt as saved and folded: :class:`AttemptStart`'s keys, then
    :class:`AttemptEnd`'s once it was judged (each documented there). An attempt
    cut short has only ``status: interrupted`` and a ``reason`` (the runner died)
    or ``completed_at`` (Ctrl-C / SIGTERM) after its start. Absent keys read ``None``."""

    attempt: int | None = None
    mode: str | None = None
    status: str | None = None
    """An :class:`AttemptStatus` word (a plain ``str`` as read)."""
    started_at: str | None = None
    provider: str | None = None
    model: str | None = None
    run_id: str | None = None
    completed_at: str | None = None
    duration_ms: int | None = None
    session_id: str | None = None
    provider_outcome: str | None = None
    failure_class: str | None = None
    failure: Mapping[str, Any] | None = None
    verifier: Mapping[str, Any] | None = None
    workspace_changed: bool | None = None
    decision: str | None = None
    reason: str | None = None
    delay_ms: int | None = None
    usage: Mapping[str, Any] | None = None
    cost_usd: float | None = None
    tool_count: int | None = None
    budget_failure: Mapping[str, Any] | None = None
    recorded_status: str | None = None
    """Shown by ``status`` only (never saved): the saved ``running`` of an attempt
    whose runner is gone (``status`` then reads ``interrupted``)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Keys this version does not know, as read."""

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Self:
        """Read one attempt of a loaded prompt record (never raises on its keys)."""
        record: Self = _from_dict(cls, doc)
        return record


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptStart:
    """The keys saved as a prompt starts (an ``update`` operation)."""

    status: PromptStatus = PromptStatus.RUNNING
    """Always ``running`` here."""
    name: str
    """The prompt's name (front matter ``name``, or derived from its file name)."""
    run_id: str | None
    """The run generation executing it."""
    started_at: str
    """When it started: ISO 8601 UTC, whole seconds."""
    dirty_at_start: Mapping[str, list[str]] | Absent | None = ABSENT
    """Git committer only (else not saved): per target repo, the paths already
    dirty as it started (sorted), so a resumed run tells the prompt's leftovers
    from the user's; ``None`` when there were too many to record."""
    head_at_start: Mapping[str, str] | Absent = ABSENT
    """Git committer only (else not saved): per target repo, the sha of its HEAD
    commit as it started (``"(initial)"`` for a repo with no commit yet; one
    git could not read is left out), so a resumed run finds the commit a runner killed right after
    committing made (``runner/preverify.link_found_commits``)."""

    def to_dict(self) -> dict[str, Any]:
        """The saved keys, in the order they are written."""
        return _as_dict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptRecord:
    """A prompt's record as saved and folded (``status --json``'s ``prompts``).

    Absent keys read ``None``; keys this version does not know are in ``extra``.
    """

    status: str | None = None
    """A :class:`PromptStatus` word (``None``: never started, shown ``pending``)."""
    name: str | None = None
    """The prompt's name."""
    run_id: str | None = None
    """The run generation that last executed (or repaired) it."""
    started_at: str | None = None
    """When its last execution started (ISO 8601 UTC)."""
    dirty_at_start: Mapping[str, list[str]] | None = None
    """See :class:`PromptStart`."""
    head_at_start: Mapping[str, str] | None = None
    """See :class:`PromptStart`."""
    dirty_after_session: Mapping[str, list[str]] | None = None
    """Git committer only: per target repo, the paths dirty as its last session
    ended, before its contract's commands ran (runner/leftovers.py); ``None``
    while a session may be writing, or when there were too many."""
    attempts: tuple[AttemptRecord, ...] = ()
    """Every attempt across its executions, oldest first."""
    last_verifier: Mapping[str, Any] | None = None
    """The verifier's last report (``VerifierReport.to_dict()``)."""
    last_error: str | None = None
    """The last provider failure's message, if any."""
    session_ran: bool | None = None
    """False when it completed without a session (pre-flight verification, or a
    cost budget refused its first session)."""
    completed_at: str | None = None
    """When its last execution ended (ISO 8601 UTC), whatever the outcome."""
    cost_usd: float | None = None
    """The cost its sessions reported in the last execution, in USD."""
    budget_failure: Mapping[str, Any] | None = None
    """The cost budget's failure envelope when a budget ended it, else ``None``."""
    source: str | None = None
    """What decided completion: ``verifier``, ``verifier_override``,
    ``preflight_verify`` or ``commit_found`` (a resumed run found the commit its
    killed runner made and verified the contract again; agent control: its own
    source)."""
    reason: str | None = None
    """Why it did not complete (one line), or why it was interrupted."""
    commit_info: Mapping[str, Any] | None = None
    """``{"commits": {repo: sha}, "skipped": bool}`` of its commit."""
    commit_error: str | None = None
    """Why its commit failed (``commit_failed``; a hook's own output included)."""
    contract_fingerprint: str | None = None
    """sha256 of the contract it passed under (``--remaining`` revisits it when
    the contract changed since: ``contract_changed``)."""
    blocked_by: list[str] | None = None
    """``blocked_by_dependency``: the ``depends_on`` prompts that were not completed."""
    hook_rewrites: Mapping[str, list[str]] | None = None
    """Per repo, the paths a commit hook changed in its commit."""
    hook_mismatch: Mapping[str, list[str]] | None = None
    """Per repo, the prompt's paths whose committed content differs from the work
    tree its contract was verified on (a hook rewrote or unstaged them): the
    prompt is then ``commit_failed`` (runner/completion.py)."""
    swept_user_changes: Mapping[str, list[str]] | None = None
    """Per repo, the user's own pre-run changes a commit hook staged into the
    prompt's commit: the prompt is then ``commit_failed``."""
    unverified_commits: Mapping[str, str] | None = None
    """Repo name -> sha of a commit refused for one of the two reasons above; a
    resumed run never links it as the prompt's (runner/preverify.py)."""
    hook_verifier: Mapping[str, Any] | None = None
    """The verifier's report on the commit a hook changed."""
    steered: bool | None = None
    """Whether an operator steered a session of it (``control steer``)."""
    steer_count: int | None = None
    """How many steers it received."""
    interventions_file: str | None = None
    """The ``interventions/<prompt>.jsonl`` file recording those steers."""
    amended: bool | None = None
    """True when contract amendments were in force for it."""
    amendments: list[Mapping[str, Any]] | None = None
    """Those amendments (direction, operation, reason, author, at, persist, ...)."""
    amendments_file: str | None = None
    """The file recording them."""
    agent_control: Mapping[str, Any] | None = None
    """Agent control's record of its iterations (action, history, rejections, ...)."""
    completion_verify: Mapping[str, Any] | None = None
    """Agent control: the packet completion contract's report on a refused ``finish``."""
    recorded_status: str | None = None
    """Shown by ``status`` only (never saved): the saved ``running``/``repairing``
    of a prompt whose runner is gone (``status`` then reads ``interrupted``)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Keys this version does not know, as read."""

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Self:
        """Read a loaded prompt record (never raises on its keys)."""
        attempts = tuple(
            AttemptRecord.from_dict(a) for a in doc.get("attempts") or () if isinstance(a, Mapping)
        )
        record: Self = _from_dict(cls, doc, attempts=attempts)
        return record

    @property
    def shown_status(self) -> str:
        """The status as ``status`` and ``list`` show it (``pending`` before any run)."""
        return self.status or PromptStatus.PENDING
