"""A running agent CLI session: parse its stream, map how its process ended to a failure.

A :class:`CliSession` starts the CLI through :func:`prompt_runner.proc.spawn`
with the request's :class:`~.base.TimeBounds` (the run deadline and the idle
bound, which :mod:`prompt_runner.proc` enforces on the whole process group),
feeds each stdout line to a provider-specific :class:`~._stream.StreamParser`,
and, once :mod:`prompt_runner.proc` reports the process's
:class:`~prompt_runner.proc.ProcResult`, turns it into a
:class:`~.base.SessionResult`:

* could not start -> ``launch_failed`` (a missing executable: not on PATH, or a
  ``cli_path`` that does not exist);
* a bound passed -> ``transport_timeout`` (``run_deadline`` / ``idle_timeout``),
  unless the CLI had printed its final record and only hung on the way out;
* terminated by the caller -> ``user_cancelled``;
* interrupted, and the parser saw no success -> a resumable ``user_cancelled``;
* otherwise what the parser concluded from the stream and the exit status.

Secrets travel only in the child's environment; the argv reported in the
result is redacted of any secret-looking environment value (see
:mod:`._cli_options`), and parsers never copy environment values into events.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import proc
from ._cli_options import redact_argv
from ._stream import Outcome, ParserFactory, drop_none
from .base import SessionResult, TimeBounds, Usage
from .events import Event, EventKind, EventSink
from .failure import FailureEnvelope, envelope_for

STDERR_TAIL_LINES = 40
"""Lines of a failed session's stderr its ``error`` event keeps (``log_meta: full`` shows them)."""
STDERR_LINE_CHARS = 500


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
        self._cwd = cwd
        self._done = threading.Event()
        self._result: SessionResult | None = None
        self._started = time.monotonic()
        self._sink_errors = 0
        self._batch: list[Event] | None = None  # events of the lines being parsed
        self._sink_many = getattr(sink, "many", None)
        self._known_session_id = known_session_id
        self.parser = parser_factory(self._emit)
        self._process: proc.Spawned | None = None
        if preflight_failure is not None:
            self._publish(Outcome(ok=False, failure=preflight_failure), interrupted=False)
            return
        self._process = proc.spawn(
            self.argv,
            cwd=cwd,
            env=env,
            on_batch=self._on_lines,
            stdin_text=stdin_text,
            deadline_ms=bounds.run_deadline_ms,
            idle_ms=bounds.idle_ms,
            on_exit=self._finish,
        )

    # -- SessionHandle ----------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The CLI's pid, which is also its process-group id (``None`` if it never started)."""
        return self._process.pid if self._process is not None else None

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
        """End the current turn: SIGINT to the group, TERM and KILL if it does not end."""
        if self._process is not None and not self._done.is_set():
            self._process.interrupt()

    def terminate(self) -> None:
        """End the session now (user cancel): TERM then KILL the whole group."""
        if self._process is None or self._done.is_set():
            return
        self._process.terminate()
        self._done.wait(30)

    # -- the stream -------------------------------------------------------------------

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

    # -- how it ended -----------------------------------------------------------------

    def _finish(self, ended: proc.ProcResult) -> None:
        """Map the process's end and the parser's conclusion to the session's outcome."""
        if ended.start_error is not None:
            program = self.argv[0]
            if not ended.missing:
                message = f"could not start {program}: {ended.start_error}"
            elif os.sep in program:  # a cli_path, not a name looked up on PATH
                message = f"`{program}` does not exist"
            else:
                message = f"`{program}` is not on PATH"
            failure = envelope_for(
                "launch_failed", message, provider_code="spawn", raw={"cwd": str(self._cwd)}
            )
            self._publish(Outcome(ok=False, failure=failure), interrupted=False)
            return
        timeout, exit_code = ended.timeout, ended.returncode
        if timeout is not None and self.parser.terminal_seen:
            # The CLI printed its final record, then hung on the way out: the
            # session itself ended; judge it as if it had exited cleanly.
            timeout, exit_code = None, 0
        outcome = self._parsed(exit_code, ended.stderr)
        if timeout is not None:
            outcome = replace(outcome, ok=False, failure=self._timeout(timeout, ended, exit_code))
        elif ended.terminated:
            outcome = replace(
                outcome,
                ok=False,
                failure=envelope_for("user_cancelled", "the session was terminated"),
            )
        elif ended.interrupted and not outcome.ok:
            outcome = replace(
                outcome,
                failure=envelope_for(
                    "user_cancelled",
                    "the turn was interrupted",
                    overrides={"resumable": True, "terminal": False},
                ),
            )
        self._publish(
            outcome, interrupted=ended.interrupted, stderr=ended.stderr, exit_code=exit_code
        )

    def _parsed(self, exit_code: int | None, stderr: str) -> Outcome:
        try:
            return self.parser.outcome(exit_code, stderr)
        except Exception as exc:
            return Outcome(
                ok=False,
                failure=envelope_for(
                    "protocol_error",
                    f"could not interpret the {self.provider} stream: {exc}",
                    provider_code="parser",
                ),
            )

    def _timeout(
        self, timeout: proc.Timeout, ended: proc.ProcResult, exit_code: int | None
    ) -> FailureEnvelope:
        if timeout == "deadline":
            code = "run_deadline"
            message = f"the run deadline of {self._bounds.run_deadline_ms} ms passed"
        else:
            code = "idle_timeout"
            message = f"no output for {self._bounds.idle_ms} ms (idle timeout)"
        return envelope_for(
            "transport_timeout",
            message,
            provider_code=code,
            raw={"stderr_tail": ended.stderr[-2000:], "exit_code": exit_code},
        )

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
            self._emit("error", _error_event(outcome.failure, stderr, exit_code))
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
            windows=tuple(self.parser.usage_windows.values()),
        )
        self._done.set()


def _error_event(failure: FailureEnvelope, stderr: str, exit_code: int | None) -> dict[str, Any]:
    detail = {
        "retryable": failure.retryable,
        "resumable": failure.resumable,
        "terminal": failure.terminal,
        "http_status": failure.raw.get("http_status"),
        "exit_code": exit_code,
    }
    tail = [line[:STDERR_LINE_CHARS] for line in stderr.splitlines() if line.strip()]
    return {
        "class": failure.failure_class,
        "message": failure.message,
        "provider_code": failure.provider_code,
        "detail": drop_none(detail),
        **({"stderr_tail": tail[-STDERR_TAIL_LINES:]} if tail else {}),
    }
