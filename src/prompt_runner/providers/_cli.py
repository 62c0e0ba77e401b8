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
value, and parsers never copy environment values into events.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import proc
from ..errors import ProviderMissingError, UserError
from .base import SessionRequest, SessionResult, TimeBounds, Usage
from .events import Event, EventKind, EventSink
from .failure import FailureEnvelope, envelope_for

PERMISSION_MODES = ("default", "auto", "bypass", "plan")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
INTERRUPT_GRACE_S = 5.0
TICK_S = 0.05
UNKNOWN_KEEP = 50

Emit = Callable[[EventKind, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a parser concluded once the CLI exited.

    Attributes:
        ok: nominal success (a terminal success record and exit 0).
        text: final assistant text.
        usage: tokens and cost of this process.
        failure: the classified failure when not ``ok``.
    """

    ok: bool
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    failure: FailureEnvelope | None = None


class StreamParser:
    """Base of the per-CLI stream parsers.

    Subclasses implement :meth:`on_event` (one decoded JSON object) and
    :meth:`outcome`. Events are emitted through ``emit(kind, data)``. Unknown
    record types are kept (bounded) in :attr:`unknown` and never raise.

    Args:
        emit: receives canonical event kinds and their data.
        provider: provider name, for events and classification.
    """

    def __init__(self, emit: Emit, provider: str) -> None:
        self.emit = emit
        self.provider = provider
        self.session_id: str | None = None
        self.terminal_seen = False
        self.unknown: deque[dict[str, Any]] = deque(maxlen=UNKNOWN_KEEP)
        self.noise: deque[str] = deque(maxlen=UNKNOWN_KEEP)
        self.lines = 0

    def feed_line(self, line: str) -> None:
        """Decode one stdout line; JSON objects go to :meth:`on_event`."""
        self.lines += 1
        stripped = line.strip()
        if not stripped:
            return
        if stripped[0] != "{":
            self.noise.append(stripped[:2000])
            return
        try:
            obj = json.loads(stripped)
        except ValueError:
            self.noise.append(stripped[:2000])
            return
        if isinstance(obj, dict):
            self.on_event(obj)
        else:
            self.noise.append(stripped[:2000])

    def on_event(self, obj: dict[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def keep_unknown(self, obj: dict[str, Any]) -> None:
        """Remember an event type this parser does not map (bounded, raw)."""
        self.unknown.append(obj)

    def start_session(self, session_id: str | None, **data: Any) -> None:
        """Record the first session id seen and emit ``session_started`` for it.

        Later records repeat the id; a different later id (sub-agents, sample
        placeholders) never replaces the id the session is resumed by.
        """
        if not session_id or self.session_id is not None:
            return
        self.session_id = session_id
        self.emit(
            "session_started",
            {"session_id": session_id, "provider": self.provider, **_drop_none(data)},
        )


ParserFactory = Callable[[Emit], StreamParser]


def _drop_none(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def as_int(value: Any) -> int:
    """``value`` as an int (0 for missing or non-numeric)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def as_str(value: Any) -> str:
    """``value`` as text: strings as-is, lists of text blocks joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
            else:
                parts.append(as_str(item))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False, default=str)


# ---------------------------------------------------------------------------- env, argv


def find_cli(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Resolve CLI ``name`` on ``env["PATH"]`` (default: the runner's PATH)."""
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    return shutil.which(name, path=path)


def require_cli(
    name: str, provider: str, install: str, env: Mapping[str, str] | None = None
) -> str:
    """Return the path of CLI ``name`` or raise :class:`ProviderMissingError` (exit 3).

    Args:
        name: the executable ("claude").
        provider: the provider name, for the message.
        install: how to install it (one command).
    """
    found = find_cli(name, env)
    if found is None:
        raise ProviderMissingError(
            f"provider {provider!r} needs the `{name}` CLI, which is not on PATH; "
            f"install it with `{install}` or put it on PATH"
        )
    return found


def child_env(request: SessionRequest, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The full environment of an agent process.

    The runner's environment, then ``extra`` (adapter defaults), then
    ``provider_options["env"]``, then ``request.env`` (highest). Secrets come in
    here (e.g. ``ANTHROPIC_API_KEY``), never through argv.
    """
    env = dict(os.environ)
    env.update(extra or {})
    opt_env = request.provider_options.get("env")
    if isinstance(opt_env, Mapping):
        env.update({str(k): str(v) for k, v in opt_env.items()})
    env.update(request.env)
    return env


def redact_argv(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """``argv`` with every secret-looking env value (name has KEY/TOKEN/...) masked."""
    secrets = [v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= 6]
    out = []
    for arg in argv:
        for secret in secrets:
            if secret in arg:
                arg = arg.replace(secret, "***")
        out.append(arg)
    return tuple(out)


def check_common_options(
    request: SessionRequest,
    *,
    provider: str,
    known_options: Iterable[str],
    permission_modes: Iterable[str] = PERMISSION_MODES,
    efforts: Iterable[str] | None = None,
    unsupported: Mapping[str, str] = {},
) -> None:
    """Plan-time checks shared by every CLI adapter.

    Args:
        request: a representative request.
        provider: provider name for messages and keys.
        known_options: the ``provider_options`` keys this adapter understands.
        permission_modes: the ``permission_mode`` values it can map.
        efforts: accepted ``reasoning_effort`` values (``None`` = not supported).
        unsupported: request fields this CLI cannot honour -> the fix to suggest,
            keyed by field name (``system_prompt``, ``max_turns``...).

    Raises:
        UserError: naming the key and the fix.
    """
    modes = tuple(permission_modes)
    if request.permission_mode not in modes:
        raise UserError(
            f"permission_mode {request.permission_mode!r} is not supported by provider {provider}",
            key="permission_mode",
            fix=f"use one of {', '.join(modes)}",
        )
    if request.reasoning_effort is not None:
        if efforts is None:
            raise UserError(
                f"provider {provider} has no reasoning effort setting",
                key="reasoning_effort",
                fix="remove reasoning_effort for this prompt or use another provider",
            )
        allowed = tuple(efforts)
        if request.reasoning_effort not in allowed:
            raise UserError(
                f"reasoning_effort {request.reasoning_effort!r} is not supported by {provider}",
                key="reasoning_effort",
                fix=f"use one of {', '.join(allowed)}",
            )
    values = {
        "system_prompt": request.system_prompt,
        "append_system_prompt": request.append_system_prompt,
        "max_turns": request.max_turns,
        "allowed_tools": request.allowed_tools or None,
        "extra_dirs": request.extra_dirs or None,
        "model": request.model,
    }
    for name, fix in unsupported.items():
        if values.get(name) is not None:
            raise UserError(f"provider {provider} cannot honour {name}", key=name, fix=fix)
    known = set(known_options) | {"env", "cli_path", "extra_args"}
    for key in request.provider_options:
        if key not in known:
            raise UserError(
                f"unknown option {key!r} for provider {provider}",
                key=f"{provider}_opts.{key}",
                fix=f"use one of {', '.join(sorted(known))}",
            )
        if SECRET_NAME.search(key) and key != "env":
            raise UserError(
                f"{key!r} looks like a secret and would end up in argv",
                key=f"{provider}_opts.{key}",
                fix="pass secrets as environment variables instead",
            )
    extra = request.provider_options.get("extra_args")
    if extra is not None and not (
        isinstance(extra, (list, tuple)) and all(isinstance(a, str) for a in extra)
    ):
        raise UserError(
            "extra_args must be a list of strings",
            key=f"{provider}_opts.extra_args",
            fix='write it as a YAML list, e.g. ["--verbose"]',
        )
    env = request.provider_options.get("env")
    if env is not None and not isinstance(env, Mapping):
        raise UserError(
            "env must be a mapping of variable names to values",
            key=f"{provider}_opts.env",
            fix="write it as a YAML mapping",
        )


def extra_args(request: SessionRequest) -> list[str]:
    """``provider_options["extra_args"]`` as a list (validated at plan time)."""
    return [str(a) for a in request.provider_options.get("extra_args") or ()]


def cli_binary(request: SessionRequest, default: str) -> str:
    """The executable to launch: ``provider_options["cli_path"]`` or ``default``."""
    return str(request.provider_options.get("cli_path") or default)


def is_root() -> bool:
    """True when the runner runs as uid 0."""
    return hasattr(os, "getuid") and os.getuid() == 0


# ---------------------------------------------------------------------------- session


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
        self._known_session_id = known_session_id
        self.parser = parser_factory(self._emit)
        self._spawned: proc.Spawned | None = None
        if preflight_failure is not None:
            self._finish_without_process(preflight_failure)
            return
        try:
            self._spawned = proc.spawn(
                self.argv, cwd=cwd, env=env, on_line=self._on_line, stdin_text=stdin_text
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
        try:
            self._sink(Event(kind, data))
        except Exception:
            # A broken sink must not stall the reader (the pipe would fill up).
            self._sink_errors += 1

    def _on_line(self, line: str) -> None:
        self._last_activity = time.monotonic()
        try:
            self.parser.feed_line(line)
        except Exception as exc:
            # Unknown shapes are kept raw; a parser bug never kills the session.
            self.parser.noise.append(f"parser error: {type(exc).__name__}: {exc}")

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
        self._publish(outcome, interrupted=interrupted)

    def _finish_without_process(self, failure: FailureEnvelope) -> None:
        self._publish(Outcome(ok=False, failure=failure), interrupted=False)

    def _publish(self, outcome: Outcome, *, interrupted: bool) -> None:
        usage = outcome.usage
        if usage != Usage():
            self._emit("usage", usage.to_dict())
        if outcome.failure is not None:
            self._emit(
                "error",
                {
                    "class": outcome.failure.failure_class,
                    "message": outcome.failure.message,
                    "provider_code": outcome.failure.provider_code,
                },
            )
        self._emit(
            "result",
            _drop_none({"ok": outcome.ok, "text": outcome.text, "session_id": self.session_id}),
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
    """

    argv: tuple[str, ...]
    stdin_text: str | None = None
    env_extra: Mapping[str, str] = field(default_factory=dict)
    preflight_failure: FailureEnvelope | None = None
    warnings: tuple[FailureEnvelope, ...] = ()


class CliProvider:
    """Base of the CLI adapters: subclasses build the launch and the parser.

    Class attributes:
        name: provider name.
        cli: the executable name on PATH.
        install: one command that installs the CLI.
    """

    name = ""
    cli = ""
    install = ""

    def check_available(self) -> None:
        """Raise :class:`ProviderMissingError` (exit 3) if the CLI is not on PATH."""
        require_cli(self.cli, self.name, self.install)

    def validate_options(self, request: SessionRequest) -> None:  # pragma: no cover
        raise NotImplementedError

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

    def _run(
        self, request: SessionRequest, resume_id: str | None, message: str, sink: EventSink
    ) -> CliSession:
        launch = self.launch(request, resume_id, message)
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
            parser_factory=self.make_parser,
            bounds=request.bounds,
            sink=sink,
            known_session_id=resume_id,
            preflight_failure=launch.preflight_failure,
        )


class UsageLedger:
    """Per-session cumulative usage, to turn running totals into per-process deltas.

    Codex ``turn.completed.usage`` and agy ``result.usage`` are totals over the
    whole (resumed) conversation. The ledger lives in the provider instance,
    so it only knows sessions started or resumed by this process.
    """

    def __init__(self) -> None:
        self._totals: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def delta(self, key: str | None, total: Usage) -> Usage:
        """Record ``total`` for ``key`` and return what was added since the last total."""
        if not key:
            return total
        with self._lock:
            before = self._totals.get(key)
            self._totals[key] = total
        if before is None or before.output_tokens > total.output_tokens:
            return total
        return Usage(
            input_tokens=max(0, total.input_tokens - before.input_tokens),
            output_tokens=total.output_tokens - before.output_tokens,
            cached_tokens=max(0, total.cached_tokens - before.cached_tokens),
        )
