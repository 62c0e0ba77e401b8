"""The built-in simulated provider (SPEC 2.9): executes ``simulate:`` scripts.

Fresh sessions of a prompt (run, retry, repair, agent-control iteration, agent-owned
repeat) consume ``simulate.attempts`` in order -- session *n* runs
``attempts[n-1]``; a resume (including a steer resume) runs ``simulate.resume``
(without one, a session an interrupt cut short finishes its step, minus the delay).
A session past the end of ``attempts``, or of a prompt with no ``simulate:``
block, does nothing and succeeds, so the verifier decides.

A step runs as: ``session_started``; ``delay_ms`` of silence (interruptible);
each message as ``assistant_text``; each write (relative to the session cwd, or
to ``repo:``; ``append`` appends) as a ``file_change`` carrying the write's own
unified diff (``patch``, ``patch_source: "tool"``, ``added``, ``removed``; the
provider did the write, so before and after are exact); the step's agent-control
directive/progress through the same authenticated path a real agent uses; then
either ``error`` (an ``error`` event and a failed result whose envelope is built
from the kind plus any ``recovery`` overrides) or a successful ``result``. The
events are the canonical ones a real provider emits.

A step with a delay or an agent-control directive runs on a daemon thread (it
can be interrupted, or waits on the runner); any other -- microseconds of
writes and events -- runs to its end inside ``start``, one of the orders the
thread could run it in too, without a thread's start and hand-back (on a busy
machine a wait for a core each).
"""

from __future__ import annotations

import difflib
import itertools
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..verifier.paths import refusal
from .base import SessionRequest, SessionResult, Usage
from .events import Event, EventSink
from .failure import FailureEnvelope, envelope_for

_counter = itertools.count(1)
PATCH_MAX_BYTES = 200_000


class SimulatedSession:
    """A simulated session: on a daemon thread when its step can be interrupted
    (``delay_ms``) or talks to the runner (``agent_control``), else run to its
    end before the constructor returns."""

    def __init__(
        self,
        request: SessionRequest,
        step: Any,
        sink: EventSink,
        session_id: str,
        on_cut: Callable[[str, Any], None] | None = None,
    ) -> None:
        self._request = request
        self._step = step
        self._on_cut = on_cut
        self._sink = sink
        self._session_id = session_id
        self._stop = threading.Event()
        self._done = threading.Event()
        self._result: SessionResult | None = None
        if step is None or not (step.delay_ms or step.agent_control is not None):
            self._run()  # nothing in it waits or could be cut short
            return
        thread = threading.Thread(target=self._run, name=f"sim-{session_id}", daemon=True)
        thread.start()

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def wait(self, timeout_s: float | None = None) -> SessionResult | None:
        self._done.wait(timeout_s)
        return self._result

    def interrupt(self) -> None:
        self._stop.set()

    def terminate(self) -> None:
        self._stop.set()
        self._done.wait(5)

    # ------------------------------------------------------------------ internals

    def _emit(self, kind: Any, **data: Any) -> None:
        self._sink(Event(kind, data))

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._result = self._execute(started)
        except Exception as exc:  # a bug here must still end the session as a value
            self._result = SessionResult(
                ok=False,
                session_id=self._session_id,
                failure=envelope_for("unknown", f"simulated provider crashed: {exc!r}"),
            )
        finally:
            self._done.set()

    def _interrupted(self, started: float) -> SessionResult:
        if self._on_cut is not None and self._step is not None:
            self._on_cut(self._session_id, self._step)
        return SessionResult(
            ok=False,
            session_id=self._session_id,
            interrupted=True,
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def _refused(self, path: str, why: str, texts: list[str], started: float) -> SessionResult:
        """End the session as a sandboxed agent's refused write does: nothing is
        written, and the prompt fails honestly (``guardrail_blocked``)."""
        message = (
            f"the simulated provider refused to write {path}: it {why}; "
            "the verifier refuses the same path (fix the step's `writes:`)"
        )
        envelope = envelope_for(
            "guardrail_blocked", message, provider_code="simulated:path_refused"
        )
        return self._failed(envelope, texts, started)

    def _failed(
        self,
        envelope: FailureEnvelope,
        texts: list[str],
        started: float,
        usage: Usage | None = None,
    ) -> SessionResult:
        """Emit the ``error`` event of ``envelope`` and return the failed result
        (its ``duration_ms`` taken after the event, ``usage`` the default when ``None``)."""
        self._emit(
            "error",
            message=envelope.message,
            provider_code=envelope.provider_code,
            **{"class": envelope.failure_class},
        )
        return SessionResult(
            ok=False,
            session_id=self._session_id,
            failure=envelope,
            text="\n".join(texts),
            usage=usage if usage is not None else Usage(),
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def _execute(self, started: float) -> SessionResult:
        req = self._request
        self._emit(
            "session_started",
            session_id=self._session_id,
            provider="simulated",
            model=req.model,
            cwd=str(req.cwd),
        )
        step = self._step
        texts: list[str] = []
        if step is not None and step.delay_ms and self._stop.wait(step.delay_ms / 1000.0):
            return self._interrupted(started)
        if step is not None:
            for message in step.messages:
                if self._stop.is_set():
                    return self._interrupted(started)
                texts.append(message)
                self._emit("assistant_text", text=message)
            for write in step.writes:
                base = Path(req.repos[write.repo]) if write.repo else Path(req.cwd)
                why = refusal(base, write.path)
                if why is not None:
                    return self._refused(write.path, why, texts, started)
                target = base / write.path
                existed = target.exists()
                before = _read_for_patch(target) if existed else ""
                target.parent.mkdir(parents=True, exist_ok=True)
                if write.append:
                    with target.open("a", encoding="utf-8") as handle:
                        handle.write(write.text)
                else:
                    target.write_text(write.text, encoding="utf-8")
                self._emit(
                    "file_change",
                    path=write.path,
                    repo=write.repo,
                    change="modify" if existed else "create",
                    **_patch(write.path, existed, before, write.text, write.append),
                )
            if step.agent_control is not None:
                # lazy: only a step that plays the agent's side of the directive protocol needs it
                from ..agent.client import issue_simulated

                note = issue_simulated(step.agent_control, req.env)
                if note:
                    self._emit("assistant_text", text=note)
        cost = getattr(step, "cost_usd", None) or 0.0  # the step's reported cost, else 0
        self._emit("usage", input_tokens=0, output_tokens=0, cost_usd=cost)
        if step is not None and step.error is not None:
            envelope = envelope_for(
                step.error.kind,
                step.error.message,
                provider_code=f"simulated:{step.error.kind}",
                overrides=step.error.recovery,
            )
            return self._failed(envelope, texts, started, Usage(cost_usd=cost))
        duration = int((time.monotonic() - started) * 1000)
        text = "\n".join(texts)
        self._emit("result", ok=True, text=text, session_id=self._session_id)
        return SessionResult(
            ok=True,
            session_id=self._session_id,
            text=text,
            usage=Usage(cost_usd=cost),
            duration_ms=duration,
        )


def _read_for_patch(target: Path) -> str | None:
    """The file's text before a write, or ``None`` (too big, not UTF-8, unreadable)."""
    try:
        if target.stat().st_size > PATCH_MAX_BYTES:
            return None
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _patch(path: str, existed: bool, before: str | None, text: str, append: bool) -> dict[str, Any]:
    """``patch``/``patch_source``/``added``/``removed`` of one of our own writes.

    The provider performs the write, so before and after are known exactly and
    the diff is its own (``patch_source: "tool"``). No patch when the old file
    could not be read or either side is over :data:`PATCH_MAX_BYTES`.
    """
    if before is None or len(text) > PATCH_MAX_BYTES:
        return {}
    after = before + text if append else text
    old_name, new_name = (f"a/{path}" if existed else "/dev/null"), f"b/{path}"
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), old_name, new_name
        )
    ) or [f"--- {old_name}\n", f"+++ {new_name}\n"]  # an unchanged file: no hunks
    added = removed = 0
    for line in lines[2:]:
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return {
        "patch": "".join(_terminated(line) for line in lines).rstrip("\n"),
        "patch_source": "tool",
        "added": added,
        "removed": removed,
    }


def _terminated(line: str) -> str:
    if line.endswith("\n"):
        return line
    return line + "\n\\ No newline at end of file\n"


class SimulatedProvider:
    """The built-in provider: needs no external CLI (``cli_command`` = ``builtin``)."""

    name = "simulated"
    cli_command = "builtin"

    def __init__(self) -> None:
        self._cut: dict[str, Any] = {}  # session id -> the step an interrupt cut short

    def _remember_cut(self, session_id: str, step: Any) -> None:
        self._cut[session_id] = step

    def check_available(
        self, request: SessionRequest | None = None, *, key: str | None = None
    ) -> None:
        return None  # it starts no process

    def validate_options(self, request: SessionRequest) -> None:
        """The simulated provider ignores ``reasoning_effort``, but refuses one no
        provider accepts, as ``profile new`` does: a packet rehearsed here runs
        unchanged on a real provider. Only a run that sets an effort imports
        the adapters to know their values."""
        from .registry import refuse_unknown_effort  # lazy: registry imports this module

        refuse_unknown_effort(request.reasoning_effort)

    def start(self, request: SessionRequest, sink: EventSink) -> SimulatedSession:
        script = request.simulate
        step = None
        if script is not None and 0 < request.session_number <= len(script.attempts):
            step = script.attempts[request.session_number - 1]
        session_id = f"sim-{request.prompt_id}-{next(_counter)}-{uuid.uuid4().hex[:8]}"
        return SimulatedSession(request, step, sink, session_id, self._remember_cut)

    def resume(
        self, request: SessionRequest, session_id: str, message: str, sink: EventSink
    ) -> SimulatedSession:
        """Run ``simulate.resume``; without one, a session an interrupt (e.g. a
        steer) cut short finishes its step, without the delay, as an agent
        picks up where it was stopped. Otherwise the resume does nothing."""
        script = request.simulate
        step = script.resume if script is not None else None
        cut = self._cut.pop(session_id, None)
        if step is None and cut is not None:
            step = cut.model_copy(update={"delay_ms": 0}) if hasattr(cut, "model_copy") else cut
        return SimulatedSession(request, step, sink, session_id, self._remember_cut)


def make_provider() -> SimulatedProvider:
    """Registry entry point."""
    return SimulatedProvider()
