"""Typed, validated authoring models: manifest, prompt front matter, recovery,
execution and agent control (SPEC 2.2-2.9); simulate scripts are in
:mod:`~prompt_runner.packet.simulate`, the shared value types in
:mod:`~prompt_runner.packet.model_types` (both importable from here).

These pydantic models are the one place raw YAML is validated. They are frozen;
everything downstream trusts them. The ``verify:`` contract is validated by the
verifier's own parser (:func:`prompt_runner.verifier.parse_contract`), so the
clause list lives in one place; the models keep it raw.

Field names follow the reference system's packet format so its packets load
unchanged. Numbers are strict: a bool is never a number, and a string is
one only inside ``recovery``, whose ``"5"`` and ``"false"`` the reference
normalises (pydantic's lax mode there, with bools refused by ``Count``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator

from ..durations import format_duration
from ..errors import UserError
from ..option_table import (  # the words a key that is also a run option's flag takes
    CliConfirmation,
    CommitterKind,
    DiffMode,
    EventsMode,
    LogMode,
    PermissionMode,
    Thinking,
    ToolOutput,
)
from ..state.prompt_log import is_safe_name
from .model_types import (
    EAGER,
    INERT_PROMPT_KEYS,
    PROVIDER_OPTION_KEYS,
    SIMULATED_ERROR_KINDS,
    TIMEOUT_WORDS,
    Count,
    FailurePolicy,
    Fraction,
    LogMeta,
    Model,
    Phase,
    PromptId,
    Timeout,
)
from .profile_names import check_profile_name
from .simulate import MAX_SIMULATED_DELAY_MS, SimulateScript
from .validation import FixedValueError

__all__ = [  # the models, and the names they are built from (importable from here)
    "INERT_PROMPT_KEYS",
    "MAX_RETRY_DELAY_MS",
    "MAX_SIMULATED_DELAY_MS",
    "PROVIDER_OPTION_KEYS",
    "SIMULATED_ERROR_KINDS",
    "AgentControlConfig",
    "ExecutionConfig",
    "FailoverTarget",
    "HomeConfig",
    "Manifest",
    "Profile",
    "PromptFrontMatter",
    "RecoveryConfig",
    "RepairConfig",
    "RepoSpec",
    "RetryConfig",
    "SimulateScript",
    "UsageLimitConfig",
]

# --------------------------------------------------------------------------- recovery


MAX_RETRY_DELAY_MS = 7 * 24 * 3600 * 1000
"""The longest backoff a packet may ask for (a week, in ms); a longer sleep
overflows the platform's timer."""


class RetryConfig(Model):
    """``recovery.retry``: per-class retry budgets and backoff (delays in ms, each at
    most :data:`MAX_RETRY_DELAY_MS`)."""

    model_config = EAGER

    max_attempts: Count = Field(3, ge=0)
    base_delay_ms: Count = Field(1000, ge=0, le=MAX_RETRY_DELAY_MS)
    max_delay_ms: Count = Field(30000, ge=0, le=MAX_RETRY_DELAY_MS)
    jitter: bool = True
    class_attempts: dict[str, Annotated[Count, Field(ge=0)]] = Field(
        default_factory=lambda: {
            "provider_capacity": 5,
            "provider_rate_limit": 5,
            "provider_auth_claim": 3,
            "provider_config_claim": 3,
            "provider_runtime_claim": 3,
            "transport_disconnect": 4,
            "transport_timeout": 4,
            "protocol_error": 4,
            "unknown": 3,
        }
    )


class RepairConfig(Model):
    """``recovery.repair``: bounded repair sessions built from unmet verifier items."""

    model_config = EAGER

    enabled: bool = True
    max_attempts: Count = Field(2, ge=0)
    trigger_on_nominal_success_with_failed_verifier: bool = True
    trigger_on_provider_failure_with_workspace_changes: bool = True
    trigger_on_retry_exhaustion_with_workspace_changes: bool = True


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)", re.I)
_DURATION_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def _duration_ms(value: Any) -> Any:
    """A duration as ms: ``6h``, ``90m``, ``1h30m``, ``45s``, ``500ms``, or a number of ms.

    Raises:
        ValueError: a bool, or text that is not such a duration.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.isdigit():
        return int(text)
    parts = _DURATION_PART.findall(text)
    if not parts or _DURATION_PART.sub("", text).strip():
        raise ValueError(f"{value!r} is not a duration (e.g. 6h, 90m, 1h30m, 45s)")
    return int(sum(float(number) * _DURATION_MS[unit.lower()] for number, unit in parts))


Duration = Annotated[int, BeforeValidator(_duration_ms)]
"""A length of time in ms, written ``6h``, ``90m``, ``45s``, ``500ms`` or as ms."""


def _duration_up_to(most_ms: int) -> Callable[[Any], Any]:
    """:func:`_duration_ms`, at most ``most_ms``: a longer one is refused with the
    bound and the value written as durations (``must be at most 7d (got 400d)``),
    never as raw milliseconds."""

    def check(value: Any) -> Any:
        ms = _duration_ms(value)
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms > most_ms:
            most = format_duration(most_ms / 1000)
            got = value.strip() if isinstance(value, str) else ""
            if not got or got.isdigit():  # a number of ms
                got = f"{ms} ms, {format_duration(ms / 1000)}"
            raise FixedValueError(f"must be at most {most} (got {got})", fix=f"give {most} or less")
        return ms

    return check


MaxWait = Annotated[int, BeforeValidator(_duration_up_to(MAX_RETRY_DELAY_MS))]
"""``usage_limit.max_wait``: a :data:`Duration` of at most :data:`MAX_RETRY_DELAY_MS`."""

Margin = Annotated[int, BeforeValidator(_duration_up_to(3_600_000))]
"""``usage_limit.margin``: a :data:`Duration` of at most an hour."""


class UsageLimitConfig(Model):
    """``recovery.usage_limit``: what a refusal for an exhausted usage window does.

    ``wait``: wait for the window's reset when it is known and at most
    ``max_wait`` away (plus ``margin``), then go on without spending any retry,
    resume or repair budget; otherwise the prompt fails (or fails over).
    ``pace_above`` (off by default, 0..1): before a session, a window of the
    prompt's provider last known at or above that utilization, resetting within
    ``max_wait``, is waited for first. Durations in ms once validated.
    """

    model_config = EAGER

    wait: bool = True
    max_wait: MaxWait = Field(6 * 3_600_000, ge=0, le=MAX_RETRY_DELAY_MS)  # le: the schema
    margin: Margin = Field(2000, ge=0, le=3_600_000)
    pace_above: Fraction | None = Field(None, gt=0, le=1)


class RecoveryConfig(Model):
    """``recovery``: the fully resolved recovery policy of one prompt (SPEC 2.7).

    ``failover``: the providers to continue on, in order, once the prompt's own
    is exhausted (each ``{provider, model, ...options}``, checked when the plan
    is resolved); ``failover_sticky``: later prompts stay on the provider a
    failover reached instead of going back to their own.
    """

    model_config = EAGER

    resume_attempts: Count = Field(2, ge=0)
    max_steers: Count = Field(3, ge=0)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    repair: RepairConfig = Field(default_factory=RepairConfig)
    usage_limit: UsageLimitConfig = Field(default_factory=UsageLimitConfig)
    failover: list[dict[str, Any]] = Field(default_factory=list)
    failover_sticky: bool = False


# --------------------------------------------------------------------------- execution


class ExecutionConfig(Model):
    """``execution``: who owns completion (SPEC 2.8)."""

    model_config = EAGER

    completion: Literal["verifier_owned", "agent_owned"] = "verifier_owned"
    incomplete: Literal["fail", "repeat"] | None = None

    def effective_incomplete(self) -> str:
        """``fail`` for verifier-owned, ``repeat`` for agent-owned unless set."""
        if self.incomplete is not None:
            return self.incomplete
        return "fail"


class AgentControlConfig(Model):
    """``agent_control`` (SPEC 7). ``completion_verify`` stays raw (a contract).

    A present block is enabled unless it says ``enabled: false`` (as in the
    reference system); a manifest without the block has agent control off.
    """

    model_config = EAGER

    enabled: bool = True
    default_action: Literal["continue", "repeat"] = "continue"
    max_iterations: int = Field(20, ge=1, strict=True)
    completion_verify: dict[str, Any] | None = None


# --------------------------------------------------------------------------- repos


class RepoSpec(Model):
    """``repos.NAME``: a path (relative to the packet dir) and whether it is the default."""

    path: str
    default: bool = False

    @field_validator("path")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("path must not be empty")
        return value


def _repo_spec(value: Any) -> Any:
    """``repos.NAME``: a path string, or a mapping with ``path:``.

    Raises:
        ValueError: neither (so the message names both forms).
    """
    if isinstance(value, str):
        return {"path": value}
    if not isinstance(value, dict):
        shown = repr(value) if not isinstance(value, list) else "a list"
        raise ValueError(
            f"must be a path string or a mapping with `path:` (got {shown}), "
            'e.g. `app: "../app"` or `app: {path: "../app", default: true}`'
        )
    return value


# --------------------------------------------------------------------------- shared options


class _Options(Model):
    """Keys that may be set at profile, packet and prompt level."""

    provider: str | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    permission_mode: PermissionMode | None = None
    allowed_tools: list[str] | None = None
    timeout: Timeout = None
    cli_confirmation: CliConfirmation | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = Field(None, ge=1, strict=True)
    adapter_opts: dict[str, Any] | None = None
    sdk_opts: dict[str, Any] | None = None
    claude_opts: dict[str, Any] | None = None
    codex_opts: dict[str, Any] | None = None
    codex_thread_opts: dict[str, Any] | None = None
    gemini_opts: dict[str, Any] | None = None
    amp_opts: dict[str, Any] | None = None
    cursor_opts: dict[str, Any] | None = None
    antigravity_opts: dict[str, Any] | None = None
    recovery: dict[str, Any] | None = None

    @field_validator("timeout")
    @classmethod
    def _positive_timeout(cls, value: Any) -> Any:
        if isinstance(value, int) and value <= 0:
            raise ValueError(f"must be {TIMEOUT_WORDS}, greater than 0 (got {value})")
        return value


class FailoverTarget(_Options):
    """One ``recovery.failover`` entry, validated when the plan is resolved: the
    same keys and types a prompt's front matter takes (``model``, ``timeout``,
    ``codex_opts``...), with ``provider`` required. An entry's ``recovery`` is
    refused before this model is asked (a failover target has no failover of
    its own); the provider's own checks of its options follow on the target's
    resolved plan (:mod:`prompt_runner.planning.recovery`)."""

    provider: str


class _Render(Model):
    """Rendering keys valid in a profile or manifest."""

    log_mode: LogMode | None = None
    log_meta: LogMeta | None = None
    events_mode: EventsMode | None = None
    tool_output: ToolOutput | None = None
    thinking: Thinking | None = None
    diff: DiffMode | None = None


class Profile(_Options, _Render):
    """A home-scoped profile (``profiles/NAME.md`` front matter).

    ``prompt_template`` is the template ``prompt new`` uses when neither
    ``--template`` nor the manifest names one.
    """

    name: str | None = None
    description: str | None = None
    prompt_template: str | None = None
    notify: dict[str, Any] | None = None  # checked by notify.config (packet/notify_config.py)


class HomeConfig(Model):
    """``config.md`` front matter in the profile store."""

    default_profile: str | None = None


class Manifest(_Options, _Render):
    """``prompt_runner_packet.md`` front matter (SPEC 2.2)."""

    model_config = EAGER

    name: str | None = None
    profile: str | None = None
    prompt_template: str | None = None
    prompt_dir: str | None = None
    committer: CommitterKind | None = None
    failure_policy: FailurePolicy | None = None
    # A number (no bool, no string); positivity is checked with the other
    # budgets when the plan is resolved (planning/budget.py).
    max_run_cost_usd: float | None = Field(None, strict=True)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    agent_control: AgentControlConfig = Field(
        default_factory=lambda: AgentControlConfig(enabled=False)
    )
    repos: dict[str, Annotated[RepoSpec, BeforeValidator(_repo_spec)]] = Field(default_factory=dict)
    phases: dict[str, str] = Field(default_factory=dict)
    notify: dict[str, Any] | None = None  # checked by notify.config (packet/notify_config.py)

    @field_validator("prompt_dir")
    @classmethod
    def _prompt_dir_inside(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.startswith(("/", "~")) or re.search(r"(^|/)\.\.(/|$)", value):
            raise ValueError(
                f"prompt_dir {value!r} leaves the packet; use a directory inside it (e.g. prompts)"
            )
        if not value.strip():
            raise ValueError("prompt_dir must name a directory inside the packet (e.g. prompts)")
        return value

    @field_validator("profile")
    @classmethod
    def _profile_name(cls, value: str | None) -> str | None:
        # The rule `profile new` and `--profile` use (README: a profile name,
        # wherever it is given, is one word): a name no profile can have is an
        # error, not the warning of a valid name that exists nowhere here.
        if not value:
            return value
        try:
            check_profile_name(value)
        except UserError as exc:
            raise FixedValueError(
                exc.reason,
                fix=f"{exc.fix} (a name `prompt-runner profile list` shows), or drop `profile:`",
            ) from None
        return value

    @field_validator("phases", mode="before")
    @classmethod
    def _phase_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
        return value

    @field_validator("repos")
    @classmethod
    def _repo_names(cls, value: dict[str, RepoSpec]) -> dict[str, RepoSpec]:
        for name in value:
            if name == "packet":
                raise ValueError("'packet' is reserved for the packet directory; rename the repo")
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
                raise ValueError(f"repo name {name!r} may only use letters, digits, '_', '.', '-'")
        if sum(1 for spec in value.values() if spec.default) > 1:
            raise ValueError("more than one repo has default: true; keep exactly one")
        return value


class PromptFrontMatter(_Options):
    """``prompts/NN_slug.prompt.md`` front matter (SPEC 2.3)."""

    model_config = EAGER

    id: PromptId
    phase: Phase = None
    name: str | None = None
    template: str | None = None
    targets: list[str] | None = None
    commit: str | None = None
    depends_on: list[PromptId] = Field(default_factory=list)
    verify: dict[str, Any] | None = None
    simulate: SimulateScript | None = None
    references: list[Any] | None = None
    required_reading: list[Any] | None = None
    context_files: list[Any] | None = None

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        # The rule of state/prompt_log.check_name: an id names the prompt's state
        # files, so "-rf", "." and ".." must be refused here, before any run.
        value = value.strip()
        if not is_safe_name(value):
            raise ValueError(
                f"id {value!r} may only use letters, digits, '_', '.', '-', not start with "
                "'.' or '-', and be at most 128 characters (e.g. \"01\")"
            )
        return value

    @field_validator("commit")
    @classmethod
    def _commit_text(cls, value: str | None) -> str | None:
        # Blank is a mistake, not a request for the default: git would refuse
        # the message after the work (leave the key out for the default).
        if value is not None and not value.strip():
            raise ValueError(
                "is blank; write a commit message, or leave the key out for the "
                "default (prompt-runner: <id> <name>)"
            )
        if value is not None and "\0" in value:
            raise ValueError(
                "holds a NUL byte (\\0), which git refuses in a commit message; remove it"
            )
        return value

    @field_validator("name")
    @classmethod
    def _name_text(cls, value: str | None) -> str | None:
        # The default commit message is "prompt-runner: <id> <name>": the same rule.
        if value is not None and "\0" in value:
            raise ValueError(
                "holds a NUL byte (\\0), which git refuses in the default commit message "
                "(prompt-runner: <id> <name>); remove it"
            )
        return value

    @field_validator("targets", mode="before")
    @classmethod
    def _targets(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value
