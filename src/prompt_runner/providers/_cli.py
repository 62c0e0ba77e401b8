"""The base of the CLI adapters: how a provider builds a launch and starts a session.

An adapter (one module per CLI) subclasses :class:`CliProvider`: it declares
its options and limits as class attributes (checked at plan time by
:func:`~._cli_options.check_common_options`), builds the :class:`Launch` of a
fresh or resumed session, and makes the stream parser. Starting the process,
its time bounds and how its end becomes a result are
:class:`~._session.CliSession`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._cli_options import (
    check_common_options,
    child_env,
    redact_argv,
    require_cli,
    require_program,
)
from ._session import CliSession
from ._stream import Emit, StreamParser
from .base import SessionRequest
from .events import Event, EventKind, EventSink
from .failure import FailureEnvelope

PROMPT_PLACEHOLDER = "<prompt>"


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one CLI process.

    Attributes:
        argv: program and arguments (the prompt is never a secret, but secrets
            never go here).
        stdin_text: text written to stdin (the prompt), or ``None``.
        env_extra: adapter defaults layered under the request's env.
        preflight_failure: fail without launching (e.g. ``cli_confirmation``).
        warnings: non-fatal notes emitted as ``error`` events (``fatal: false``)
            before launch (e.g. a ``cli_confirmation: warn`` mismatch).
        drop_events: event kinds the options leave out of the session's
            stream (``claude_opts.include_thinking: false`` drops ``thinking``).
    """

    argv: tuple[str, ...]
    stdin_text: str | None = None
    env_extra: Mapping[str, str] = field(default_factory=dict)
    preflight_failure: FailureEnvelope | None = None
    warnings: tuple[FailureEnvelope, ...] = ()
    drop_events: frozenset[str] = frozenset()


class CliProvider:
    """Base of the CLI adapters: subclasses build the launch and the parser.

    Class attributes:
        name: provider name.
        cli: the executable name on PATH.
        install: one command that installs the CLI.
        options: the ``<provider>_opts`` keys the adapter honours -> how (the
            flag or variable), besides :data:`~._cli_options.COMMON_OPTIONS`.
        refused: option keys it refuses at plan time -> the sentence saying
            why, besides :data:`~._cli_options.COMMON_REFUSED`.
        permission_modes: the ``permission_mode`` values it maps (``None`` = all four).
        efforts: accepted ``reasoning_effort`` values (``None`` = no such setting).
        unsupported: request fields the CLI cannot honour -> the fix to suggest.
    """

    name = ""
    cli = ""
    install = ""
    options: Mapping[str, str] = {}
    refused: Mapping[str, str] = {}
    permission_modes: tuple[str, ...] | None = None
    efforts: tuple[str, ...] | None = None
    unsupported: Mapping[str, str] = {}

    def check_available(
        self, request: SessionRequest | None = None, *, key: str | None = None
    ) -> None:
        """Raise :class:`ProviderMissingError` (exit 3) unless the CLI is there.

        Args:
            request: a session's request: the executable its launch starts is
                checked as starting it resolves it (``cli_path`` when set, a
                relative one from the packet directory; a bare name on the
                PATH of the agent's environment). ``None``: the CLI's usual
                name on the runner's PATH.
            key: how the message names the option that set ``cli_path``
                (default ``<provider>_opts.cli_path``).
        """
        if request is None:
            require_cli(self.cli, self.name, self.install)
            return
        launch = self.launch(request, None, PROMPT_PLACEHOLDER)
        given = request.provider_options.get("cli_path")
        require_program(
            launch.argv[0],
            cwd=request.cwd,
            env=child_env(request, launch.env_extra),
            provider=self.name,
            install=self.install,
            key=(key or f"{self.name}_opts.cli_path") if given else None,
            given=str(given) if given else None,
        )

    def validate_options(self, request: SessionRequest) -> None:
        """Plan-time checks from the class attributes (raises UserError); adapters
        with more to check extend this."""
        extra = {} if self.permission_modes is None else {"permission_modes": self.permission_modes}
        check_common_options(
            request,
            provider=self.name,
            known_options=self.options,
            refused=self.refused,
            efforts=self.efforts,
            unsupported=self.unsupported,
            **extra,
        )

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        raise NotImplementedError  # pragma: no cover

    def make_parser(self, emit: Emit) -> StreamParser:
        raise NotImplementedError  # pragma: no cover

    def session_parser(self, emit: Emit, env: Mapping[str, str]) -> StreamParser:
        """The parser of one session whose CLI runs with ``env`` (default:
        :meth:`make_parser`; Codex reads its ``CODEX_HOME`` and ``TZ``)."""
        return self.make_parser(emit)

    def start(self, request: SessionRequest, sink: EventSink) -> CliSession:
        """Start a fresh session with ``request.prompt_text``."""
        return self._run(request, None, request.prompt_text, sink)

    def resume(
        self, request: SessionRequest, session_id: str, message: str, sink: EventSink
    ) -> CliSession:
        """Resume exactly ``session_id`` with ``message`` (never "latest").

        Raises:
            ValueError: ``session_id`` is empty.
        """
        if not session_id:
            raise ValueError("resume needs the exact session id")
        return self._run(request, session_id, message, sink)

    def launch_argv(self, request: SessionRequest) -> tuple[str, ...]:
        """The argv a fresh session of ``request`` would start, secrets redacted,
        with :data:`PROMPT_PLACEHOLDER` where a CLI takes the prompt in argv
        (``plan --json`` and ``run --dry-run`` show it)."""
        launch = self.launch(request, None, PROMPT_PLACEHOLDER)
        return redact_argv(launch.argv, child_env(request, launch.env_extra))

    def _run(
        self, request: SessionRequest, resume_id: str | None, message: str, sink: EventSink
    ) -> CliSession:
        launch = self.launch(request, resume_id, message)
        env = child_env(request, launch.env_extra)
        dropped = launch.drop_events

        def parser_factory(emit: Emit) -> StreamParser:
            if not dropped:
                return self.session_parser(emit, env)

            def kept(kind: EventKind, data: dict[str, Any]) -> None:
                if kind not in dropped:
                    emit(kind, data)

            return self.session_parser(kept, env)

        for warning in launch.warnings:
            sink(
                Event(
                    "error",
                    {
                        "class": warning.failure_class,
                        "message": warning.message,
                        "provider_code": warning.provider_code,
                        "fatal": False,
                    },
                )
            )
        return CliSession(
            provider=self.name,
            argv=launch.argv,
            cwd=request.cwd,
            env=env,
            stdin_text=launch.stdin_text,
            parser_factory=parser_factory,
            bounds=request.bounds,
            sink=sink,
            known_session_id=resume_id,
            preflight_failure=launch.preflight_failure,
        )
