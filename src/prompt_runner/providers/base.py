"""The Provider protocol every agent adapter implements (SPEC 4).

A provider turns a :class:`SessionRequest` into a running session whose
structured output is streamed as canonical :class:`~.events.Event` values to
an :data:`~.events.EventSink`. Sessions are driven through a
:class:`SessionHandle`: wait for the result, interrupt the current turn (the
session can then be resumed by its exact id, e.g. to deliver a steer), or
terminate the whole process group. Results and failures are values: a
provider never raises for a failed session, it returns a
:class:`SessionResult` carrying a :class:`~.failure.FailureEnvelope`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .events import EventSink
from .failure import FailureEnvelope
from .usage import UsageWindow

SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class TimeBounds:
    """Session time bounds derived from the single ``timeout`` key (SPEC 4), in ms.

    stream = transport = run deadline = ``timeout``; idle = max(120 s, timeout + 30 s);
    an unset or unbounded timeout is 7 days on all of them.
    """

    stream_ms: int = SEVEN_DAYS_MS
    transport_ms: int = SEVEN_DAYS_MS
    run_deadline_ms: int = SEVEN_DAYS_MS
    idle_ms: int = SEVEN_DAYS_MS

    @classmethod
    def from_timeout(cls, timeout_ms: int | None) -> TimeBounds:
        """Derive every bound from ``timeout_ms`` (``None`` = unbounded = 7 days)."""
        if timeout_ms is None:
            return cls()
        return cls(
            stream_ms=timeout_ms,
            transport_ms=timeout_ms,
            run_deadline_ms=timeout_ms,
            idle_ms=max(120_000, timeout_ms + 30_000),
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "stream_ms": self.stream_ms,
            "transport_ms": self.transport_ms,
            "run_deadline_ms": self.run_deadline_ms,
            "idle_ms": self.idle_ms,
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage and cost of one session, as the provider reported it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """Everything a provider needs to start (or resume) one session.

    Attributes:
        prompt_id: the packet prompt id ("01").
        prompt_text: the full text sent as the user message (body + any
            repair / agent-control blocks).
        cwd: the session working directory (the first target repo).
        provider: provider name ("claude", "simulated", ...).
        model, reasoning_effort, permission_mode: resolved plan values.
        allowed_tools, system_prompt, append_system_prompt, max_turns: plan values.
        extra_dirs: other target repos the agent may touch.
        repos: every packet repo by logical name (absolute paths; ``packet`` included).
        env: extra environment variables for the agent process (e.g. agent
            control variables); secrets are passed here, never in argv.
        provider_options: merged provider option map (adapter_opts, sdk_opts,
            ``<provider>_opts``...).
        bounds: time bounds in ms.
        session_number: 1-based count of fresh sessions of this prompt (run=1,
            each retry / repair / iteration adds 1); the simulated provider
            uses it to pick ``simulate.attempts[session_number-1]``.
        simulate: the prompt's ``simulate:`` script (a
            :class:`prompt_runner.packet.models.SimulateScript`) or ``None``.
        cli_confirmation: ``off|warn|require``.
    """

    prompt_id: str
    prompt_text: str
    cwd: Path
    provider: str
    model: str | None = None
    reasoning_effort: str | None = None
    permission_mode: str = "default"
    allowed_tools: tuple[str, ...] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    extra_dirs: tuple[Path, ...] = ()
    repos: Mapping[str, Path] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    provider_options: Mapping[str, Any] = field(default_factory=dict)
    bounds: TimeBounds = field(default_factory=TimeBounds)
    session_number: int = 1
    simulate: Any = None
    cli_confirmation: str = "off"


@dataclass(frozen=True, slots=True)
class SessionResult:
    """How a session ended.

    Attributes:
        ok: the provider reported a nominal success.
        session_id: the provider's session/thread id (for resume), if known.
        failure: the classified failure when ``ok`` is false.
        text: the final assistant text, if any.
        usage: tokens and cost.
        interrupted: the turn was interrupted by :meth:`SessionHandle.interrupt`.
        argv: the launched argv with secrets redacted (``None`` for built-ins).
        duration_ms: wall time of the session in ms.
        windows: the usage windows the session's stream reported, the latest
            per kind (a quota refusal's own window is ``failure.usage_window``).
    """

    ok: bool
    session_id: str | None = None
    failure: FailureEnvelope | None = None
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    interrupted: bool = False
    argv: tuple[str, ...] | None = None
    duration_ms: int = 0
    windows: tuple[UsageWindow, ...] = ()


@runtime_checkable
class SessionHandle(Protocol):
    """A running session."""

    @property
    def session_id(self) -> str | None:
        """The provider's session id once known, else ``None``."""
        ...

    def wait(self, timeout_s: float | None = None) -> SessionResult | None:
        """Block up to ``timeout_s`` seconds (``None`` = until done).

        Returns the result, or ``None`` if the session is still running.
        """
        ...

    def interrupt(self) -> None:
        """End the current turn; the session stays resumable by its id."""
        ...

    def terminate(self) -> None:
        """End the session and reap its whole process group (TERM, then KILL)."""
        ...


@runtime_checkable
class Provider(Protocol):
    """A coding agent adapter. One module per provider under ``providers/``."""

    name: str

    def check_available(
        self, request: SessionRequest | None = None, *, key: str | None = None
    ) -> None:
        """Raise :class:`prompt_runner.errors.ProviderMissingError` if unusable.

        With ``request``, check what that request's session would start (a CLI
        adapter: its ``cli_path``, named as ``key`` in the message); without,
        the provider's usual requirements.
        """
        ...

    def validate_options(self, request: SessionRequest) -> None:
        """Raise :class:`prompt_runner.errors.UserError` for unsupported options.

        Called at plan time with a representative request, before any session.
        """
        ...

    def start(self, request: SessionRequest, sink: EventSink) -> SessionHandle:
        """Start a fresh session for ``request``; events go to ``sink``."""
        ...

    def resume(
        self, request: SessionRequest, session_id: str, message: str, sink: EventSink
    ) -> SessionHandle:
        """Resume exactly ``session_id`` (never "latest") with ``message``."""
        ...
