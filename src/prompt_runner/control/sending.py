"""Sending to a run: requests written for the runner, refusals logged (SPEC 5).

Sending (:func:`set_view`, :func:`steer`, :func:`submit`) writes one request
file and returns its name -- the runner decides it at its next event boundary
and records the outcome in the control log (:func:`outcome` reads the
receipt). A request for a run that was going when it was built, and that has
ended by the time the file landed, is decided by the sender before it returns
(refused: ``control/leftovers.py``), so its receipt is already there. A
command refused before any request is written is logged here
(:func:`refusals_logged`), so the control log keeps every command.

Standard library and the light ``control``/``state`` helpers only: these back
``control view|steer`` on the CLI's hot path.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import StorageError, UserError
from ..paths import packet_root
from ..state._clock import iso_now
from ..state.layout import StateLayout
from ..state.records import RunStatus
from .audit import append_record_line
from .leftovers import going, settle_if_ended
from .marker import JUDGING, locked_marker
from .requests import build_request, validate_steer, validate_view
from .runs import (
    await_recorded,
    checked,
    control_store,
    current_run,
    current_run_id,
    live_runner,
    run_is_live,
    starting_error,
    unfinished_run_id,
)
from .store import ControlStore

StateDir = str | os.PathLike[str] | None
"""A state root given by the caller (``None``: ``$PROMPT_RUNNER_STATE_DIR``, else the
packet's ``.prompt_runner``; see :meth:`StateLayout.of_packet`)."""


def _store(packet: str | Path, state_dir: StateDir) -> ControlStore:
    """The transport of ``packet``'s state root, ``state_dir`` when given (nothing is created).

    Raises:
        UserError: ``packet`` is not a packet directory.
    """
    return ControlStore(checked(StateLayout.of_packet(packet_root(packet), state_dir).root))


@contextlib.contextmanager
def refusals_logged(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any] | None = None,
    *,
    author: str | None = None,
    state_dir: StateDir = None,
) -> Iterator[None]:
    """Log a control command the block refuses with a :class:`UserError`, then re-raise it.

    The control log keeps every command, refusals too (SPEC 5): a command
    refused before any request was written (a bad ``set_view``, a blank steer,
    an amendment without ``--reason``...) is appended as ``{"command",
    "outcome": "rejected", "reason", "via": "cli", "author", "params",
    "run_id", "at"}``. Nothing else is written (no request, no receipt). A
    packet path that is no packet has no log; a log that cannot be written
    is skipped (the refusal itself still reaches the caller). ``state_dir``:
    the state root to log in (default: the packet's, see :meth:`StateLayout.of_packet`).
    """
    try:
        yield
    except UserError as exc:
        log_refusal(packet, command, params, str(exc), author=author, state_dir=state_dir)
        raise


def log_refusal(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any] | None,
    reason: str,
    *,
    author: str | None = None,
    state_dir: StateDir = None,
) -> None:
    """Append a refused command to the packet's control log (see :func:`refusals_logged`);
    never raises."""
    try:
        root = _store(packet, state_dir).state_root
    except UserError:
        return
    try:
        shown = json.loads(json.dumps(dict(params or {}), default=str))
    except (TypeError, ValueError):
        shown = {}
    _log_rejected(root, command, shown, reason, author=author)


def _log_rejected(
    root: Path, command: str, shown: dict[str, Any], reason: str, *, author: str | None
) -> None:
    """Append the refused ``command`` to ``root``'s control log; never raises."""
    now = iso_now(millis=True)
    entry = {
        "command": command,
        "outcome": "rejected",
        "reason": reason,
        "via": "cli",
        "author": author,
        "params": shown,
        "run_id": current_run_id(root),
        "requested_at": now,
        "at": now,
    }
    with contextlib.suppress(OSError, ValueError):
        append_log_line(root, entry)


def submit(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any],
    *,
    author: str | None = None,
    run_id: str | None = None,
    state_dir: StateDir = None,
) -> str:
    """Validate and write one request for the packet's current run; return its file name.

    Args:
        run_id: the run to target; default: the current run of ``runs/current.json``
            (``None`` when no run was recorded: the next run takes it).
        state_dir: the state root to write in; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's ``.prompt_runner`` (the same for every sender below).

    Raises:
        UserError: the command or params are invalid, or the request is over
            1 MiB; nothing is written.
        InfrastructureError: the request cannot be written.
    """
    with refusals_logged(packet, command, params, author=author, state_dir=state_dir):
        store = _store(packet, state_dir)
        doc = current_run(store.state_root)
        target = run_id
        if target is None and doc is not None and isinstance(doc.get("run_id"), str):
            target = doc["run_id"]
        request = build_request(command, params, run_id=target, author=author)
    return _sent(store, _write_request(store, request), _seen(doc, target))


def _seen(doc: Mapping[str, Any] | None, target: str | None) -> str | None:
    """``target`` when ``runs/current.json`` (``doc``, read as the request was
    built) says that run is going, else ``None`` (see :func:`_sent`)."""
    return target if target is not None and going(doc) == target else None


def _sent(store: ControlStore, name: str, seen: str | None) -> str:
    """``name``, once the request is decided when the run ``seen`` going as it
    was built has ended since (``control/leftovers.py``); its receipt then says how."""
    settle_if_ended(store, name, seen)
    return name


def _write(
    store: ControlStore,
    command: str,
    params: Mapping[str, Any],
    *,
    author: str | None,
    run_id: str | None,
    seen: str | None,
) -> str:
    """Build and write one request for ``run_id`` (``None``: whichever run consumes it);
    ``seen``: the run going as it was built (see :func:`_sent`)."""
    request = build_request(command, params, run_id=run_id, author=author)
    return _sent(store, _write_request(store, request), seen)


def _write_request(store: ControlStore, request: Mapping[str, Any]) -> str:
    """Write a built request.

    Raises:
        StorageError: the file system refused it (read-only, full, a file
            where a directory should be): the sentence every state write says.
        UserError: the request encodes to more than ``MAX_REQUEST_BYTES`` (1 MiB,
            what the runner reads): bad input, logged as rejected like any
            refusal (its params left out of the log); nothing is written.
    """
    try:
        return store.write_request(request)
    except OSError as exc:
        where = Path(exc.filename) if exc.filename else store.requests_dir
        if where.suffix == ".tmp":  # the temp file it was writing: name its directory
            where = where.parent
        raise StorageError(where, exc) from exc
    except ValueError as exc:  # over MAX_REQUEST_BYTES (ControlStore.write_request)
        error = UserError(
            f"this {request.get('command')} request is too large to send ({exc})",
            file=store.requests_dir,
            fix="send less text: JSON writes a control character as 6 bytes, "
            "a non-ASCII one as 2 to 4",
        )
        author = request.get("author")
        _log_rejected(
            store.state_root,
            str(request.get("command")),
            {},
            error.reason,
            author=author[:200] if isinstance(author, str) else None,
        )
        raise error from exc


def set_view(
    packet: str | Path,
    settings: Mapping[str, Any],
    *,
    author: str | None = None,
    state_dir: StateDir = None,
) -> str:
    """Queue a view change (``log_mode``, ``tool_output``, ``thinking``, ``diff``).

    See :func:`queue_view`; returns the request's file name.

    Raises:
        UserError: no setting, an unknown setting or an invalid value (nothing written).
    """
    return queue_view(packet, settings, author=author, state_dir=state_dir)[0]


def queue_view(
    packet: str | Path,
    settings: Mapping[str, Any],
    *,
    author: str | None = None,
    state_dir: StateDir = None,
) -> tuple[str, str | None]:
    """Queue a view change; return ``(request name, run id it targets)``.

    With a live run (a process holds ``run.pid``) the request targets that
    run, which applies it at its next event boundary. With none, it targets
    no run (``None``): it waits in ``control/requests/`` and the next run of
    the packet -- a resume or a new one -- applies it as its first prompt
    starts. (Targeting an ended run would only get it refused by the next.)

    Raises:
        UserError: no setting, an unknown setting or an invalid value (nothing written).
    """
    with refusals_logged(packet, "set_view", settings, author=author, state_dir=state_dir):
        params = validate_view(settings)
        store = _store(packet, state_dir)
    root = store.state_root
    await_recorded(root)  # a starting run: the one it targets (past the bound: the next run)
    doc = current_run(root)
    target = _unfinished(doc) if run_is_live(root) else None
    seen = _seen(doc, target)
    return _write(store, "set_view", params, author=author, run_id=target, seen=seen), target


def _unfinished(doc: Mapping[str, Any] | None) -> str | None:
    """:func:`~.runs.unfinished_run_id` of a read ``runs/current.json`` document."""
    if doc is None or doc.get("status") == RunStatus.COMPLETED:
        return None
    run_id = doc.get("run_id")
    return run_id if isinstance(run_id, str) else None


def steer(
    packet: str | Path, text: str, *, author: str | None = None, state_dir: StateDir = None
) -> str:
    """Queue a steer for the running prompt of the current run.

    A steer targets a run that is live, or unfinished (failed or interrupted:
    the resume delivers it); a packet that never ran or whose last run
    completed has no session a steer could reach. A run that holds the
    packet's ``run.pid`` and has not recorded itself yet is waited for
    (:func:`~.runs.await_recorded`, at most ``STARTING_WAIT_S``).

    Raises:
        UserError: the text is blank (``a steer needs something to say``), there
            is no live or unfinished run, or a run is still starting once the
            wait's bound passed (``a run (pid N) is starting ...``).
    """
    with refusals_logged(packet, "steer", {"text": text}, author=author, state_dir=state_dir):
        params = validate_steer({"text": text})
        store = _store(packet, state_dir)
        doc = current_run(store.state_root)
        target = _unfinished(doc)
        if target is None:
            starting = await_recorded(store.state_root)
            if starting is not None:
                raise starting_error(store.state_root, starting, "control steer")
            doc = current_run(store.state_root)
            target = _unfinished(doc)
        if target is None:
            raise UserError(
                "there is no live or unfinished run to steer",
                file=store.state_root,
                fix=_elsewhere(packet, state_dir, "steer")
                or "start the run first (`prompt-runner run`), then steer it while it works "
                "(a run started a moment ago is seen once it takes the packet's run.pid, "
                "just before it says `Starting run ...`)",
            )
    return _write(store, "steer", params, author=author, run_id=target, seen=_seen(doc, target))


def _elsewhere(packet: str | Path, state_dir: StateDir, command: str) -> str | None:
    """The fix naming a live run of ``packet`` whose state is elsewhere (it holds
    a repo of the packet: ``watch/elsewhere.py``), when no state directory was
    given; else ``None``."""
    if state_dir is not None and os.fspath(state_dir) != "":
        return None
    root = StateLayout.of_packet(packet_root(packet)).root
    if live_runner(root) is not None:  # the packet's own runner holds it (its repos too)
        return None
    # lazy: only a refusal reads the manifest's repos and their locks
    from ..watch.elsewhere import elsewhere_fix

    return elsewhere_fix(os.fspath(packet_root(packet)), command)


def _live_run(
    packet: str | Path,
    command: str,
    params: Mapping[str, Any],
    *,
    author: str | None,
    state_dir: StateDir,
    fix: str,
) -> tuple[ControlStore, dict[str, Any] | None, str | None]:
    """The control store of the live run a ``command`` request is for, the run's
    ``current.json`` document, and the id of its unfinished run.

    Raises:
        UserError: a damaged ``current.json``, or no live run (``there is no
            live run to COMMAND``, with ``fix``); either is logged as a
            rejected ``command`` with ``params`` and nothing is written.
    """
    with refusals_logged(packet, command, params, author=author, state_dir=state_dir):
        store = _store(packet, state_dir)
        root = store.state_root
        await_recorded(root)  # a starting run: its id (past the bound: the run that takes it)
        doc = current_run(root)  # damaged: its error, whether a run is live or not
        if not run_is_live(root):
            raise UserError(f"there is no live run to {command}", file=root, fix=fix)
        return store, doc, _unfinished(doc)


def wake(
    packet: str | Path, *, author: str | None = None, state_dir: StateDir = None
) -> tuple[str, dict[str, Any] | None]:
    """Queue a ``wake`` for the live run: it ends a usage-limit wait at once.

    Returns:
        ``(request name, the wait the snapshot showed when it was sent or None)``;
        the runner applies the request while it waits and refuses it otherwise.

    Raises:
        UserError: no live run (logged as rejected; nothing is written).
    """
    store, doc, target = _live_run(
        packet,
        "wake",
        {},
        author=author,
        state_dir=state_dir,
        fix="a wake ends the wait of a running `prompt-runner run`; "
        "`run --remaining` resumes a stopped one",
    )
    try:
        snap = store.read_snapshot() or {}
    except Exception:  # an unreadable snapshot only loses the receipt's detail
        snap = {}
    wait = snap.get("wait") if isinstance(snap.get("wait"), dict) else None
    return _write(store, "wake", {}, author=author, run_id=target, seen=_seen(doc, target)), wait


def stop_request(
    packet: str | Path,
    *,
    after_prompt: bool = False,
    author: str | None = None,
    state_dir: StateDir = None,
) -> str:
    """Queue a ``stop`` for the live run (the dashboard's stop buttons; ``prompt-runner
    stop`` also ends the run's processes): at its next event boundary, or -- with
    ``after_prompt`` -- once its current prompt has ended. Returns the request name.

    Raises:
        UserError: no live run (logged as rejected; nothing is written): a stop
            queued for no run would wait, pending and unanswered, until the
            next run refused it as stale.
    """
    params = {"after_prompt": after_prompt}
    store, doc, target = _live_run(
        packet,
        "stop",
        params,
        author=author,
        state_dir=state_dir,
        fix="a stop ends a running `prompt-runner run`; `prompt-runner status` "
        "says how the last run ended",
    )
    return _write(store, "stop", params, author=author, run_id=target, seen=_seen(doc, target))


def steer_stage(packet: str | Path) -> dict[str, Any]:
    """Where a steer sent now would land (read only; for the sender's message).

    Returns:
        ``{"live", "prompt_id", "attempt", "stage"}``: ``stage`` is
        ``verifying`` when the live run is judging a prompt's last session (a
        steer then goes to that prompt's next session, or is refused when none
        follows), ``committing`` when the snapshot shows the prompt's work being
        committed (its session has ended: the steer is refused as the commit
        ends unless another session of it follows), ``running`` when the live
        run shows a prompt, else ``None``.
    """
    root = control_store(packet).state_root
    live = run_is_live(root)
    doc: dict[str, Any] = {"live": live, "prompt_id": None, "attempt": None, "stage": None}
    if not live:
        return doc
    marker = locked_marker(root)
    if (
        marker is not None
        and marker.get("stage") in JUDGING
        and marker.get("run_id") == unfinished_run_id(root)
    ):
        doc.update(prompt_id=marker.get("prompt"), attempt=marker.get("attempt"))
        doc["stage"] = "verifying"
        return doc
    try:
        snap = control_store(packet).read_snapshot() or {}
    except Exception:
        snap = {}
    if snap.get("status") != RunStatus.RUNNING or not snap.get("prompt_id"):
        return doc
    doc.update(prompt_id=snap["prompt_id"], attempt=snap.get("attempt"), stage="running")
    stage = snap.get("stage")
    if isinstance(stage, dict) and stage.get("name") == "committing" and stage.get("prompt_id"):
        doc.update(prompt_id=stage["prompt_id"], stage="committing")
    return doc


def outcome(packet: str | Path, name: str) -> dict[str, Any] | None:
    """The outcome receipt of request ``name`` once the runner decided it, else ``None``."""
    return control_store(packet).read_outcome(name)


def append_log_line(root: Path, entry: Mapping[str, Any]) -> None:
    """Append one entry to ``<root>/control/log.jsonl`` from outside the runner.

    The runner owns the log's torn-tail repair; another process only appends
    (one ``O_APPEND`` write, after a newline when the last line lacks one, then
    fsync), so it never cuts a line the runner is writing.

    Raises:
        OSError: the line cannot be written.
    """
    append_record_line(ControlStore(root).log_path, {"schema_version": 1, **entry})
