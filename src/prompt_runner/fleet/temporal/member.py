"""One attempt of a member on a worker: what the ``prompt-runner.run-member`` activity does.

:func:`run_member` is plain code over two callables -- ``beat`` (the
activity's heartbeat) and ``cancelled`` -- and a :class:`Mailbox` (its
workflow's signals and query), so it runs under Temporal's activity and under
a test's environment alike. The steps:

1. *materialize*: write the member's manifest under the worker's root, its
   workspace and runtime roots there too (``WorkerLayout``), ``commits.push:
   after_prompt`` and a work branch (``prompt-runner/<fleet>/<workspace>``
   when the manifest names none);
2. *sync*: clone what is missing (``prepare``: from the remotes, the work
   branch as pushed before), fetch the state ref (:mod:`..stateref`); when
   the remote's state is not what this worker last restored or pushed, this
   worker's copy is superseded: it is discarded, cloned again and the
   remote's records of truth restored;
3. *predecessor*: a runner of this member that still holds ``run.pid`` here
   (an earlier attempt dying) is stopped and waited for, heartbeating -- no
   retry is spent on it;
4. *run*: ``run --remaining --push after_prompt`` as an attached child
   (``proc.attach``: it dies with the worker); every ``tick_s`` a heartbeat
   (the member's status row, the host), its workflow's pending steers applied
   through the local control plane (the receipts signalled back), a stop
   after the current prompt applied; after each new ``progress.log`` line
   the work branches and then the state ref are pushed;
5. *end*: a last push; the outcome (``completed``, ``failed``, ``bad_input``,
   ``infrastructure``, ``stopped``, ``cancelled``, ``superseded``) with the
   runner's exit status, the reason and the final row.

An exit 3 while another process holds the run lock goes back to step 3.
Steps 1 to 3 and the push of the work branches are in :mod:`.member_setup`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ...errors import PromptRunnerError, UserError
from ...packet.loader import load_packet
from ...proc.attached import Attached, attach
from ...state._clock import iso_now
from ...state.atomic import write_text_atomic
from ...supervise import stop_run
from ...workspace import Workspace
from ...workspace.runspec import run_command
from ...workspace.status import workspace_status
from ..stateref import StateRef, StateRefRejected
from ..status import running_row
from ..steering import steer_member
from ..supervising import live, supervised
from .member_setup import STOP_GRACE_S, Attempt, materialize, push_work, sync, wait_predecessor

TICK_S = 1.0
"""Seconds between two heartbeats (Temporal throttles what it sends on)."""


def default_identity() -> str:
    """``<pid>@<hostname>``, Temporal's own default worker identity."""
    return f"{os.getpid()}@{socket.gethostname()}"


class Mailbox(Protocol):
    """The member's workflow, as the activity talks to it."""

    def claimed(self, host: str) -> None:
        """Say this attempt runs on ``host``."""

    def view(self) -> Mapping[str, Any]:
        """``{"steers": [...], "stop": {...} | None}`` (empty when it cannot be asked)."""
        ...

    def steer_done(self, steer_id: str, receipt: Mapping[str, Any]) -> None:
        """Report how a steer was decided."""


class NoMailbox:
    """A mailbox with nothing in it (a member run outside a workflow)."""

    def claimed(self, host: str) -> None:
        return None

    def view(self) -> Mapping[str, Any]:
        return {}

    def steer_done(self, steer_id: str, receipt: Mapping[str, Any]) -> None:
        return None


class _Run:
    """The state of step 4 (see the module docstring)."""

    def __init__(
        self,
        attempt: Attempt,
        ws: Workspace,
        ref: StateRef,
        parent: str | None,
        mailbox: Mailbox,
        beat: Callable[[Any], None],
        say: Callable[[str], None],
    ) -> None:
        self.attempt = attempt
        self.ws = ws
        self.ref = ref
        self.parent = parent
        self.mailbox = mailbox
        self.beat = beat
        self.say = say
        self.ids: tuple[str, ...] | None = None
        self.handled: set[str] = set()
        self.steering: list[threading.Thread] = []
        self.stop_thread: threading.Thread | None = None
        self.progress_seen: tuple[int, int] | None = self._progress()

    def _progress(self) -> tuple[int, int] | None:
        try:
            st = self.ws.layout.state.progress_log.stat()
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def row(self) -> dict[str, Any]:
        """The member's row as ``fleet status`` shows it (light: no git, the packet read once)."""
        try:
            if self.ids is None:
                self.ids = tuple(p.id for p in load_packet(self.ws.packet_dir).prompts)
            doc = running_row(self.ws, self.ids).to_dict()
        except PromptRunnerError as exc:
            doc = {"workspace": self.ws.id, "state": "error", "reason": str(exc)}
        doc["host"] = self.attempt.identity
        return doc

    def heartbeat(self) -> None:
        self.beat({"row": self.row(), "host": self.attempt.identity, "at": iso_now()})

    def save(self) -> None:
        """Push the work branches, then the records of truth (never the state before the work).

        Raises:
            StateRefRejected: another worker has pushed this member's state since.
        """
        if not push_work(self.ws):
            self.say(f"{self.ws.id}: the work branch could not be pushed; the state waits")
            return
        commit = self.ref.push(self.parent, who=self.attempt.identity)
        if commit != self.parent:
            self.parent = commit
            marker = self.attempt.layout.synced(self.attempt.fleet, self.attempt.workspace)
            write_text_atomic(marker, commit + "\n")

    def save_on_progress(self) -> None:
        now = self._progress()
        if now != self.progress_seen:
            self.progress_seen = now
            self.save()

    def mail(self) -> None:
        """Apply what the workflow holds: new steers, a stop after the prompt."""
        view = self.mailbox.view()
        for steer in view.get("steers") or []:
            sid = str(steer.get("id"))
            if steer.get("outcome") is None and sid not in self.handled:
                self.handled.add(sid)
                thread = threading.Thread(
                    target=self._steer, args=(sid, steer), daemon=True, name=f"steer-{sid}"
                )
                thread.start()
                self.steering.append(thread)
        stop = view.get("stop")
        if stop and self.stop_thread is None:
            self.stop_thread = threading.Thread(
                target=self._stop, args=(bool(stop.get("after_prompt")),), daemon=True
            )
            self.stop_thread.start()

    def settle_steers(self) -> None:
        """The run has ended: let the steers in flight report, and refuse the ones
        that came too late (their receipt says so, instead of never coming)."""
        for thread in self.steering:
            thread.join(10.0)
        with contextlib.suppress(PromptRunnerError, OSError):
            for steer in self.mailbox.view().get("steers") or []:
                sid = str(steer.get("id"))
                if steer.get("outcome") is None and sid not in self.handled:
                    self.handled.add(sid)
                    why = "the member's run had ended when the steer came"
                    receipt = {"outcome": "rejected", "reason": why, "request": None}
                    self.mailbox.steer_done(sid, {**receipt, "host": self.attempt.identity})

    def _steer(self, sid: str, steer: Mapping[str, Any]) -> None:
        host = self.attempt.identity
        try:
            name, outcome, reason = steer_member(
                self.ws, str(steer.get("text", "")), author=steer.get("author"), wait_s=30.0
            )
            receipt = {"outcome": outcome, "reason": reason, "request": name, "host": host}
        except PromptRunnerError as exc:
            receipt = {"outcome": "rejected", "reason": str(exc), "request": None, "host": host}
        self.mailbox.steer_done(sid, receipt)

    def _stop(self, after_prompt: bool) -> None:
        with contextlib.suppress(PromptRunnerError):
            stop_run(supervised(self.ws), after_prompt=after_prompt, grace_s=STOP_GRACE_S)


def run_member(
    attempt: Attempt,
    *,
    mailbox: Mailbox,
    beat: Callable[[Any], None],
    cancelled: Callable[[], bool],
    tick_s: float = TICK_S,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One attempt of the member (see the module docstring).

    Returns:
        ``{"state", "exit", "reason", "row", "host"}``; ``state`` is ``completed``,
        ``failed`` (exit 1), ``bad_input`` (2: also a manifest that is not a
        workspace, or one ``prepare`` refuses -- a ``ref`` its remote lacks --
        before any runner starts; ``exit`` is then ``None``), ``infrastructure``
        (3, a signal, or git), ``stopped`` (a stop asked through the workflow),
        ``cancelled`` or ``superseded`` (another worker took it over).
    """
    speak = say or (lambda _line: None)
    mailbox.claimed(attempt.identity)
    try:
        ws = materialize(attempt)
        # prepare's refusals (a ref the remote does not have, an unusable clone) are
        # the member's bad input as the manifest's are: final, not a retried failure
        ref, parent = sync(attempt, ws, speak)
    except UserError as exc:
        return _outcome("bad_input", None, str(exc), {}, attempt)
    run = _Run(attempt, ws, ref, parent, mailbox, beat, speak)
    cmd = run_command(ws, remaining=True)
    files = ws.layout.supervisor
    while True:
        wait_predecessor(ws, run.heartbeat, speak)
        child = attach(
            cmd.argv,
            cwd=cmd.cwd,
            env=cmd.full_env(os.environ),
            stdout=files.stdout,
            stderr=files.stderr,
        )
        if not isinstance(child, Attached):
            return _outcome("infrastructure", None, child.start_error or "", run.row(), attempt)
        speak(f"{ws.id}: runner pid {child.pid} on {attempt.identity}")
        try:
            code = _watch(run, child, cancelled, tick_s)
        except StateRefRejected as exc:
            _end(child)
            return _outcome("superseded", None, str(exc), run.row(), attempt)
        except BaseException:
            # Temporal raises its CancelledError into a sync activity's thread (a lost
            # attempt, a worker shutting down), wherever it is: the runner goes too,
            # and what it recorded is pushed for the worker that goes on.
            _end(child)
            with contextlib.suppress(Exception):
                run.save()
            raise
        if code == "cancelled":
            _end(child)
            with contextlib.suppress(PromptRunnerError):
                run.save()
            return _outcome("cancelled", None, "the workflow was cancelled", run.row(), attempt)
        assert isinstance(code, int)
        if code == 3 and live(supervised(ws)) is not None:
            continue  # a predecessor took the lock between the look and the start: wait again
        break
    run.settle_steers()
    try:
        run.save()
    except StateRefRejected as exc:
        return _outcome("superseded", code, str(exc), run.row(), attempt)
    except PromptRunnerError as exc:
        return _outcome(
            "infrastructure", code, f"the state could not be pushed: {exc}", run.row(), attempt
        )
    return _outcome(_state_of(code, run), code, _reason(ws, code, files.stderr), run.row(), attempt)


def _watch(run: _Run, child: Attached, cancelled: Callable[[], bool], tick_s: float) -> int | str:
    """Tick until the child ends (its status) or the activity is cancelled."""
    while True:
        code = child.wait(tick_s)
        run.heartbeat()
        run.save_on_progress()
        if code is not None:
            return code
        with contextlib.suppress(PromptRunnerError, OSError):
            run.mail()
        if cancelled():
            return "cancelled"


def _end(child: Attached) -> None:
    """SIGTERM (the runner records its prompt interrupted), then SIGKILL."""
    child.signal(signal.SIGTERM)
    if child.wait(STOP_GRACE_S) is None:
        child.signal(signal.SIGKILL)
        child.wait(5.0)


def _state_of(code: int, run: _Run) -> str:
    if code == 0:
        return "completed"
    if code == 1:
        return "failed"
    if code == 2:
        return "bad_input"
    if run.stop_thread is not None and code in (143, 130, -signal.SIGTERM, -signal.SIGINT):
        return "stopped"
    return "infrastructure"


def _reason(ws: Workspace, code: int, stderr: Path) -> str | None:
    if code == 0:
        return None
    if code == 1:
        prompts = workspace_status(ws)["prompts"]
        return (
            f"its packet failed ({prompts['completed']}/{prompts['total']} prompts completed; "
            "`prompt-runner status --workspace` on the worker says which)"
        )
    return _last_line(stderr) or f"the runner exited {code}"


def _last_line(path: Path) -> str | None:
    try:
        with open(path, "rb") as log:
            log.seek(max(0, os.path.getsize(path) - 8192))
            lines = [x.strip() for x in log.read().decode("utf-8", "replace").splitlines()]
    except OSError:
        return None
    lines = [x for x in lines if x]
    return lines[-1] if lines else None


def _outcome(
    state: str, code: int | None, reason: str | None, row: Mapping[str, Any], attempt: Attempt
) -> dict[str, Any]:
    return {
        "state": state,
        "exit": code,
        "reason": reason,
        "row": dict(row),
        "host": attempt.identity,
        "at": iso_now(),
    }
