"""The library's control calls: what ``prompt-runner control ...`` does, as typed results.

Watch and steer a run from any process (SPEC 5). Reading (:func:`control_status`,
:func:`control_events`, :func:`control_log`, :func:`~.api_contract.control_contract`) never
writes; :func:`control_view` and :func:`control_steer` write one request that
the runner decides at its next event boundary (the outcome lands in the
control log); :func:`~.api_contract.control_amend` and
:func:`~.api_contract.control_relax` (in :mod:`prompt_runner.api_contract`, with
``control contract``) record an amendment at once (between runs too). A command
refused for bad input is in the control log with its reason, and raised.

This module is on the CLI's ``control`` hot path: it imports the standard
library and :mod:`prompt_runner.control.runs` only; the rest of
:mod:`prompt_runner.control.client` loads when a call other than
:func:`control_status` is made (``contract``, ``amend`` and ``relax`` load the
packet when called). Results are ``NamedTuple``\\ s (typed and immutable; a
dataclass would cost the hot path its import; the class is
:class:`prompt_runner.api_calls.NamedTuple` at run time, which spares
``typing``'s import).
"""

from __future__ import annotations

import os
import time

from .api_calls import StateDirScope, in_state_dir, public
from .control import runs
from .errors import ArgumentError

NO_RUN = runs.NO_RUN
"""The reason of the error ``control_status`` raises when no run is recorded."""

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control status`)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, NamedTuple
else:
    from .api_calls import NamedTuple

PacketPath = str | os.PathLike[str]


def _path(packet: PacketPath) -> str:
    """``packet`` as the client takes it (a loaded ``Packet`` gives its root).

    Raises:
        ArgumentError: neither a path nor a ``Packet``.
    """
    if isinstance(packet, str | os.PathLike):
        return os.fspath(packet)
    root = getattr(packet, "root", None)  # a Packet, without importing the loader
    if isinstance(root, os.PathLike) and hasattr(packet, "manifest"):
        return os.fspath(root)

    raise ArgumentError(
        f"must be a packet directory (a path) or a loaded Packet, not {packet!r}",
        key="control(packet=...)",
        fix="pass e.g. 'path/to/packet'",
    )


class ControlSnapshot(NamedTuple):
    """The live snapshot of the packet's current run (``control status``).

    Attributes:
        run_id, packet, status: which run and how it stands (``running``,
            ``completed``, ``failed``...; ``unknown`` when it says running but
            no runner lives, with ``recorded_status`` then ``running``).
        prompt_id, prompt_name, attempt, mode, provider, model: what it works on.
        elapsed_ms, tool_count, tokens (``{input, output, cached}``),
            cost_usd, event_count, steer_count: its counters.
        view: the rendering settings in force (``log_mode``, ``tool_output``...).
        pending_requests: request files not yet decided.
        started_at, updated_at: ISO 8601 times.
        document: the snapshot as written (every key, as ``control status
            --json`` prints it).
    """

    run_id: str | None
    packet: str | None
    status: str | None
    recorded_status: str | None
    prompt_id: str | None
    prompt_name: str | None
    attempt: int | None
    mode: str | None
    provider: str | None
    model: str | None
    elapsed_ms: int
    tool_count: int
    tokens: dict[str, int]
    cost_usd: float
    event_count: int
    steer_count: int
    view: dict[str, str]
    pending_requests: int
    started_at: str | None
    updated_at: str | None
    document: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The snapshot document (``control status --json``)."""
        return dict(self.document)


@public
def control_status(
    packet: PacketPath, *, state_dir: str | os.PathLike[str] | None = None
) -> ControlSnapshot:
    """The current run's snapshot (read only; it never touches the session).

    Args:
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: not a packet, or no run was ever recorded for it.
        StateError: ``snapshot.json`` is corrupt.
    """
    with StateDirScope(state_dir):
        doc = runs.snapshot(_path(packet))
    return ControlSnapshot(
        run_id=doc.get("run_id"),
        packet=doc.get("packet"),
        status=doc.get("status"),
        recorded_status=doc.get("recorded_status"),
        prompt_id=doc.get("prompt_id"),
        prompt_name=doc.get("prompt_name"),
        attempt=doc.get("attempt"),
        mode=doc.get("mode"),
        provider=doc.get("provider"),
        model=doc.get("model"),
        elapsed_ms=int(doc.get("elapsed_ms") or 0),
        tool_count=int(doc.get("tool_count") or 0),
        tokens=dict(doc.get("tokens") or {}),
        cost_usd=float(doc.get("cost_usd") or 0.0),
        event_count=int(doc.get("event_count") or 0),
        steer_count=int(doc.get("steer_count") or 0),
        view=dict(doc.get("view") or {}),
        pending_requests=int(doc.get("pending_requests") or 0),
        started_at=doc.get("started_at"),
        updated_at=doc.get("updated_at"),
        document=doc,
    )


RUN_FINISHED = "run_finished"  # control.streams.RUN_FINISHED, whose import control status spares
"""The ``kind`` of the record that ends a run's part of a stream."""


@public
def control_events(
    packet: PacketPath,
    *,
    from_current: bool = False,
    follow: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """The current run's canonical events (``control events``), exactly as written.

    Each event is ``{"kind", "at_ms", "prompt_id", "run_id", ...}``; each runner
    invocation ends its part with ``{"kind": "run_finished", "run_id", "status"}``.

    Args:
        from_current: only what arrives from now on.
        follow: keep yielding until the run ends; the last record then names
            the run and how it ended (``status: "unknown"`` with a ``reason``
            when the runner died without saying).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: not a packet (at the first ``next()``).
    """
    from .control import client  # lazy: control status loads only control.runs

    events = client.iter_events(_path(packet), from_current=from_current, follow=follow)
    return in_state_dir(state_dir, events) if state_dir is not None else events


@public
def control_log(
    packet: PacketPath, *, follow: bool = False, state_dir: str | os.PathLike[str] | None = None
) -> Iterator[dict[str, Any]]:
    """The control log (``control log``): every command, who sent it, its outcome
    (``applied``, ``rejected`` with a ``reason``...), refusals included.

    Args:
        follow: keep yielding until the run ends, then a last ``run_finished``
            record naming the run (it has no ``command``).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: not a packet (at the first ``next()``).
    """
    from .control import client  # lazy: control status loads only control.runs

    records = client.iter_log(_path(packet), follow=follow)
    return in_state_dir(state_dir, records) if state_dir is not None else records


class ViewReceipt(NamedTuple):
    """A queued view change: its ``request`` file, the ``params`` it sets, the
    ``run_id`` it targets (``None``: the next run) and ``applies_to``
    (``live_run`` -- at the live run's next event boundary -- or ``next_run``);
    ``outcome`` is ``queued``, or ``rejected`` with its ``reason`` when the run it
    was sent to ended as it landed (:data:`RUN_ENDED`; the log has it too)."""

    request: str
    params: dict[str, str]
    run_id: str | None
    applies_to: str
    outcome: str = "queued"
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"request", "command": "set_view", "params", "run_id", "applies_to",
        "outcome", "reason"}``."""
        return {
            "request": self.request,
            "command": "set_view",
            "params": dict(self.params),
            "run_id": self.run_id,
            "applies_to": self.applies_to,
            "outcome": self.outcome,
            "reason": self.reason,
        }


RUN_ENDED = "the run ended before a session could take it"
"""The ``reason`` of a request refused because its run ended before taking it
(``control.leftovers.RUN_ENDED``, whose import ``control status`` spares)."""


def _ended(root: str, name: str) -> tuple[str, str | None]:
    """``("rejected", RUN_ENDED)`` when request ``name`` was refused as its run
    ended (the sender decides it then, before its call returns), else
    ``("queued", None)``."""
    from .control import client  # lazy: control status loads only control.runs

    try:
        receipt = client.outcome(root, name)
    except Exception:  # an unreadable receipt: the log tells
        receipt = None
    if receipt is not None and receipt.get("reason") == RUN_ENDED:
        return "rejected", RUN_ENDED
    return "queued", None


@public
def control_view(
    packet: PacketPath,
    *,
    log_mode: str | None = None,
    tool_output: str | None = None,
    thinking: str | None = None,
    diff: str | None = None,
    author: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
) -> ViewReceipt:
    """Change how the run renders, at its next event boundary (``control view``).

    Args:
        log_mode: ``compact|verbose|studio``; tool_output:
            ``none|summary|preview|full``; thinking: ``show|hide``; diff:
            ``none|stat|full``. Those left ``None`` are unchanged.
        author: who asks (recorded in the log).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: no setting, or a value the setting does not take (logged
            as rejected; nothing is queued).
        InfrastructureError: the request cannot be written.
    """
    settings = {
        key: value
        for key, value in (
            ("log_mode", log_mode),
            ("tool_output", tool_output),
            ("thinking", thinking),
            ("diff", diff),
        )
        if value is not None
    }
    from .control import client  # lazy: control status loads only control.runs

    with StateDirScope(state_dir):
        name, run_id = client.queue_view(_path(packet), settings, author=author)
        outcome, reason = _ended(_path(packet), name)
    applies = "live_run" if run_id is not None else "next_run"
    return ViewReceipt(name, settings, run_id, applies, outcome, reason)


class SteerReceipt(NamedTuple):
    """A queued steer: its ``request`` file, and where it lands as seen when it
    was sent -- ``live`` (a runner holds the run), ``stage`` (``running``: the
    running prompt gets it at the next event boundary; ``verifying``: that
    prompt's next session gets it, or it is refused when none follows;
    ``committing``: that prompt's work is being committed, and the steer is
    refused as the commit ends unless another session of it follows; ``None``:
    no live run, the resume delivers it), ``prompt_id``, ``attempt``;
    ``outcome`` is ``queued``, or ``rejected`` with its ``reason`` when the run
    ended as the steer landed (:data:`RUN_ENDED`; the log has it too)."""

    request: str
    live: bool
    stage: str | None
    prompt_id: str | None
    attempt: int | None
    outcome: str = "queued"
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"request", "command": "steer", "live", "prompt_id", "attempt", "stage",
        "outcome", "reason"}``."""
        return {
            "request": self.request,
            "command": "steer",
            "live": self.live,
            "prompt_id": self.prompt_id,
            "attempt": self.attempt,
            "stage": self.stage,
            "outcome": self.outcome,
            "reason": self.reason,
        }


@public
def control_steer(
    packet: PacketPath,
    text: str,
    *,
    author: str | None = None,
    state_dir: str | os.PathLike[str] | None = None,
) -> SteerReceipt:
    """Interrupt the running prompt's turn and resume its session with ``text``
    (``control steer``). It never changes the contract and is never evidence.

    Args:
        author: who asks (recorded in the log).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: blank text, or no live or unfinished run to steer (logged
            as rejected; nothing is queued).
        InfrastructureError: the request cannot be written.
    """
    from .control import client  # lazy: control status loads only control.runs

    with StateDirScope(state_dir):
        # steer first: it waits for a run that holds the packet and has not
        # recorded itself yet, so the stage read next is that run's
        name = client.steer(_path(packet), text, author=author)
        where = client.steer_stage(_path(packet))
        outcome, reason = _ended(_path(packet), name)
    return SteerReceipt(
        name, where["live"], where["stage"], where["prompt_id"], where["attempt"], outcome, reason
    )


class WakeReceipt(NamedTuple):
    """A wake request and how the runner decided it (``control wake``).

    Attributes:
        request: the request file's name.
        waiting_until: the end of the wait the snapshot showed when it was
            sent (ISO 8601 UTC), ``None`` when the run showed none.
        outcome: ``applied`` (the wait ended), ``rejected`` (see ``reason``:
            the run was not waiting) or ``pending`` (not decided within the
            call's ``wait_s``; ``control log`` will say).
        reason: why it was rejected, else ``None``.
    """

    request: str
    waiting_until: str | None
    outcome: str
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """``{"request", "command": "wake", "waiting_until", "outcome", "reason"}``."""
        return {"command": "wake", **self._asdict()}


@public
def control_wake(
    packet: PacketPath,
    *,
    author: str | None = None,
    wait_s: float = 3.0,
    state_dir: str | os.PathLike[str] | None = None,
) -> WakeReceipt:
    """End the live run's usage-limit wait now (``control wake``): its prompt's next
    session starts at once. Logged in the control log like every command.

    Args:
        author: who asks (recorded in the log).
        wait_s: how long to wait, in seconds, for the runner's decision (it looks
            about every 0.2 s while it waits); ``0`` returns at once (``pending``).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: no live run (logged as rejected; nothing is queued).
        InfrastructureError: the request cannot be written.
    """
    from .control import client  # lazy: control status loads only control.runs

    root = _path(packet)
    with StateDirScope(state_dir):
        name, wait = client.wake(root, author=author)
    until = wait.get("waiting_until") if wait else None
    deadline = time.monotonic() + max(0.0, float(wait_s))
    while True:
        with StateDirScope(state_dir):
            decided = client.outcome(root, name)
        if decided is not None:
            outcome = str(decided.get("outcome") or "applied")
            return WakeReceipt(name, until, outcome, decided.get("reason"))
        if time.monotonic() >= deadline:
            return WakeReceipt(name, until, "pending", None)
        time.sleep(0.05)
