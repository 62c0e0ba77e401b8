"""Shared plumbing for providers that drive an agent CLI's JSON stream.

A :class:`CliSession` starts the CLI through :func:`prompt_runner.proc.spawn`
(own process group, stdout read line by line on a reader thread), feeds each
line to a provider-specific :class:`StreamParser`, and enforces the request's
:class:`~.base.TimeBounds` on a watchdog thread: no output for ``idle_ms`` or
a run longer than ``run_deadline_ms`` terminates the whole group (TERM, then
KILL) and ends the session as ``transport_timeout``. When the CLI exits, any
process it left in its group is reaped too.

Secrets travel only in the child's environment; the argv reported in
:class:`~.base.SessionResult` is redacted of any secret-looking environment
value (see :mod:`._cli_options`), and parsers never copy environment values
into events. Stream parsers are built on :mod:`._stream`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import proc
from ._cli_options import check_common_options, child_env, redact_argv, require_cli
from ._stream import Emit, Outcome, ParserFactory, StreamParser, drop_none
from .base import SessionRequest, SessionResult, TimeBounds, Usage
from .events import Event, EventKind, EventSink
from .failure import FailureEnvelope, envelope_for

INTERRUPT_GRACE_S = 5.0
STDERR_TAIL_LINES = 40
"""Lines of a failed session's stderr its ``error`` event keeps (``log_meta: full`` shows them)."""
STDERR_LINE_CHARS = 500
PROMPT_PLACEHOLDER = "<prompt>"
TICK_S = 0.05


class CliSession:
    """A running agent CLI session (implements :class:`~.base.SessionHandle`).

    Args:
        provider: provider name.
        argv: the full argv (``argv[0]`` resolved on ``env["PATH"]``).
        cwd: the session working directory.
        env: the full child environment.
        stdin_text: written to the child's stdin then closed (the prompt), or
            ``None`` for /dev/null.
        parser_factory: builds the stream parser, given the emit function.
        bounds: time bounds in ms (idle and run deadline are enforced).
        sink: receives canonical events, in order, on the reader thread.
        known_session_id: the id being resumed (reported before the CLI says it).
        preflight_failure: fail at once with this envelope, launching nothing.
    """

    def __init__(
        self,
        *,
        provider: str,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        stdin_text: str | None,
        parser_factory: ParserFactory,
        bounds: TimeBounds,
        sink: EventSink,
        known_session_id: str | None = None,
        preflight_failure: FailureEnvelope | None = None,
    ) -> None:
        self.provider = provider
        self.argv = tuple(argv)
        self.redacted_argv = redact_argv(self.argv, env)
        self._sink = sink
        self._bounds = bounds
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._result: SessionResult | None = None
        self._started = time.monotonic()
        self._last_activity = self._started
        self._timeout: tuple[str, str] | None = None
        self._interrupted_at: float | None = None
        self._cancelled = False
        self._sink_errors = 0
        self._batch: list[Event] | None = None  # events of the lines being parsed
        self._sink_many = getattr(sink, "many", None)
        self._known_session_id = known_session_id
        self.parser = parser_factory(self._emit)
        self._spawned: proc.Spawned | None = None
        if preflight_failure is not None:
            self._finish_without_process(preflight_failure)
            return
        try:
            self._spawned = proc.spawn(
                self.argv, cwd=cwd, env=env, on_batch=self._on_lines, stdin_text=stdin_text
            )
        except OSError as exc:
            missing = isinstance(exc, FileNotFoundError) and Path(cwd).is_dir()
            message = (
                f"`{self.argv[0]}` is not on PATH"
                if missing
                else f"could not start {argv[0]}: {exc}"
            )
            self._finish_without_process(
                envelope_for("launch_failed", message, provider_code="spawn", raw={"cwd": str(cwd)})
            )
            return
        self._watchdog = threading.Thread(target=self._watch, daemon=True, name="cli-watchdog")
        self._watchdog.start()

    # -- SessionHandle ----------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The CLI's pid, which is also its process-group id (``None`` if it never started)."""
        return self._spawned.popen.pid if self._spawned is not None else None

    @property
    def session_id(self) -> str | None:
        """The CLI's session/thread id once it reported one (or the resumed id)."""
        return self.parser.session_id or self._known_session_id

    def wait(self, timeout_s: float | None = None) -> SessionResult | None:
        """Block up to ``timeout_s`` seconds; return the result or ``None``."""
        if not self._done.wait(timeout_s):
            return None
        return self._result

    def interrupt(self) -> None:
        """Send SIGINT to the group; escalate to terminate after a grace period."""
        spawned = self._spawned
        if spawned is None or self._done.is_set():
            return
        with self._lock:
            if self._interrupted_at is None:
                self._interrupted_at = time.monotonic()
        spawned.interrupt()

    def terminate(self) -> None:
        """End the session now (user cancel): TERM then KILL the whole group."""
        spawned = self._spawned
        if spawned is None or self._done.is_set():
            return
        with self._lock:
            self._cancelled = True
        spawned.terminate()
        self._done.wait(30)

    # -- internals --------------------------------------------------------------------

    def _emit(self, kind: EventKind, data: dict[str, Any]) -> None:
        if self._batch is not None:  # parsing a read's lines: deliver them together
            self._batch.append(Event(kind, data))
            return
        try:
            self._sink(Event(kind, data))
        except Exception:
            # A broken sink must not stall the reader (the pipe would fill up).
            self._sink_errors += 1

    def _on_lines(self, lines: list[str]) -> None:
        """Parse the lines one read of the pipe delivered; hand their events on at once.

        A sink with a ``many(events)`` method gets the list in one call (one lock
        per layer per read, not per event); others get the events one by one.
        """
        self._last_activity = time.monotonic()
        batch: list[Event] = []
        self._batch = batch
        feed = self.parser.feed_line
        try:
            for line in lines:
                try:
                    feed(line)
                except Exception as exc:
                    # Unknown shapes are kept raw; a parser bug never kills the session.
                    self.parser.noise.append(f"parser error: {type(exc).__name__}: {exc}")
        finally:
            self._batch = None
        if not batch:
            return
        try:
            if self._sink_many is not None:
                self._sink_many(batch)
            else:
                for event in batch:
                    self._sink(event)
        except Exception:
            # A broken sink must not stall the reader (the pipe would fill up).
            self._sink_errors += 1

    def _watch(self) -> None:
        spawned = self._spawned
        assert spawned is not None
        idle_s = self._bounds.idle_ms / 1000.0
        deadline_s = self._bounds.run_deadline_ms / 1000.0
        stderr_len = 0
        stderr_last: str | None = None
        while spawned.poll() is None:
            now = time.monotonic()
            tail = spawned.stderr_tail
            if tail and (len(tail) != stderr_len or tail[-1] is not stderr_last):
                stderr_len, stderr_last = len(tail), tail[-1]
                self._last_activity = now
            if now - self._started >= deadline_s:
                self._timeout = (
                    "run_deadline",
                    f"the run deadline of {self._bounds.run_deadline_ms} ms passed",
                )
            elif now - self._last_activity >= idle_s:
                self._timeout = (
                    "idle_timeout",
                    f"no output for {self._bounds.idle_ms} ms (idle timeout)",
                )
            elif (
                self._interrupted_at is not None and now - self._interrupted_at >= INTERRUPT_GRACE_S
            ):
                spawned.terminate()
                break
            if self._timeout is not None:
                spawned.terminate()
                break
            with contextlib.suppress(Exception):
                spawned.popen.wait(timeout=TICK_S)
        # Reap anything the CLI left behind in its process group first: a
        # grandchild holding the stdout pipe open would otherwise stall the reader.
        spawned.terminate(grace_s=0.5)
        self._finish(spawned.poll(), "\n".join(spawned.stderr_tail))

    def _finish(self, exit_code: int | None, stderr: str) -> None:
        if self._timeout is not None and self.parser.terminal_seen:
            # The CLI printed its final record, then hung on the way out: the
            # session itself ended; judge it as if it had exited cleanly.
            self._timeout = None
            exit_code = 0
        try:
            outcome = self.parser.outcome(exit_code, stderr)
        except Exception as exc:
            outcome = Outcome(
                ok=False,
                failure=envelope_for(
                    "protocol_error",
                    f"could not interpret the {self.provider} stream: {exc}",
                    provider_code="parser",
                ),
            )
        interrupted = self._interrupted_at is not None
        if self._timeout is not None:
            code, message = self._timeout
            outcome = replace(
                outcome,
                ok=False,
                failure=envelope_for(
                    "transport_timeout",
                    message,
                    provider_code=code,
                    raw={"stderr_tail": stderr[-2000:], "exit_code": exit_code},
                ),
            )
        elif self._cancelled:
            outcome = replace(
                outcome,
                ok=False,
                failure=envelope_for("user_cancelled", "the session was terminated"),
            )
        elif interrupted and not outcome.ok:
            outcome = replace(
                outcome,
                failure=envelope_for(
                    "user_cancelled",
                    "the turn was interrupted",
                    overrides={"resumable": True, "terminal": False},
                ),
            )
        self._publish(outcome, interrupted=interrupted, stderr=stderr, exit_code=exit_code)

    def _finish_without_process(self, failure: FailureEnvelope) -> None:
        self._publish(Outcome(ok=False, failure=failure), interrupted=False)

    def _publish(
        self,
        outcome: Outcome,
        *,
        interrupted: bool,
        stderr: str = "",
        exit_code: int | None = None,
    ) -> None:
        """Emit the closing events and set the result.

        A failure's ``error`` event also carries how it was judged
        (``detail``) and the last :data:`STDERR_TAIL_LINES` lines of stderr
        (``stderr_tail``), which ``log_meta: full`` prints.
        """
        usage = outcome.usage
        if usage != Usage():
            self._emit("usage", usage.to_dict())
        if outcome.failure is not None:
            failure = outcome.failure
            detail = {
                "retryable": failure.retryable,
                "resumable": failure.resumable,
                "terminal": failure.terminal,
                "http_status": failure.raw.get("http_status"),
                "exit_code": exit_code,
            }
            tail = [line[:STDERR_LINE_CHARS] for line in stderr.splitlines() if line.strip()]
            self._emit(
                "error",
                {
                    "class": failure.failure_class,
                    "message": failure.message,
                    "provider_code": failure.provider_code,
                    "detail": drop_none(detail),
                    **({"stderr_tail": tail[-STDERR_TAIL_LINES:]} if tail else {}),
                },
            )
        self._emit(
            "result",
            drop_none({"ok": outcome.ok, "text": outcome.text, "session_id": self.session_id}),
        )
        self._result = SessionResult(
            ok=outcome.ok,
            session_id=self.session_id,
            failure=outcome.failure,
            text=outcome.text,
            usage=usage,
            interrupted=interrupted,
            argv=self.redacted_argv,
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )
        self._done.set()


# ---------------------------------------------------------------------------- provider base


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

    def check_available(self) -> None:
        """Raise :class:`ProviderMissingError` (exit 3) if the CLI is not on PATH."""
        require_cli(self.cli, self.name, self.install)

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
        parser_factory: ParserFactory = self.make_parser
        if launch.drop_events:
            dropped = launch.drop_events

            def parser_factory(emit: Emit) -> StreamParser:
                def kept(kind: EventKind, data: dict[str, Any]) -> None:
                    if kind not in dropped:
                        emit(kind, data)

                return self.make_parser(kept)

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
        env = child_env(request, launch.env_extra)
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
