"""The library's light reads of a packet's runtime state: ``status`` (``watch``:
:mod:`prompt_runner.api_watch`).

What ``prompt-runner status`` prints, as a library call. This module stays on
the standard library and the light ``state`` helpers (no pydantic, no YAML
model), so the CLI's ``status`` hot path can call it (tests/test_cli_startup.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from .api_calls import StateDirScope, public
from .errors import ArgumentError
from .packet.prompt_ids_text import packet_ids
from .packet.prompt_ids_text import prompt_dir_text as prompt_dir_text  # cli/status.py's
from .paths import packet_root
from .state.layout import StateLayout

TYPE_CHECKING = False  # typing costs ~4 ms of the status and watch start-ups
if TYPE_CHECKING:
    from typing import Any


def _root(caller: str, packet: Any) -> Path:
    """The packet directory of ``packet`` (a path, or a loaded ``Packet``).

    Raises:
        ArgumentError: ``packet`` is neither.
        UserError: the path is not a packet directory (one whose manifest
            exists but is not a regular file is one: the packet does not load).
    """
    if isinstance(packet, str | os.PathLike):
        # a manifest that is not a regular file: the recorded state is shown
        # still (its state root needs no manifest), and packet_error names it
        return packet_root(os.fspath(packet), faulty_manifest=True)
    from .packet.loader import Packet  # only a caller holding a Packet gets here cheaply

    if isinstance(packet, Packet):
        return packet.root
    raise ArgumentError(
        f"must be a packet directory (a path) or a loaded Packet, not {packet!r}",
        key=f"{caller}(packet=...)",
        fix="pass e.g. 'path/to/packet'",
    )


def runner_alive(root: Path) -> bool:
    """True when ``<root>/.prompt_runner/run.pid`` names a live process with the
    recorded start time (a recycled pid never counts)."""
    pid_file = StateLayout.of_packet(root).run_pid
    if not pid_file.exists():  # no run holds the packet (the file exists only while one does)
        return False
    # lazy: the status/watch start-up path loads only what this call reads
    from .state.lock import identity_alive, read_pid_file

    ident = read_pid_file(pid_file)
    return ident is not None and identity_alive(ident)


def mark_dead_runs(state: dict[str, Any]) -> None:
    """No live runner: what the state still calls running was interrupted (kill -9).

    Shown as ``interrupted`` with ``recorded_status`` keeping what the file says;
    the next run records it for good. Changes ``state`` in place.
    """
    for record in state.get("prompts", {}).values():
        if record.get("status") in ("running", "repairing"):
            record["recorded_status"] = record["status"]
            record["status"] = "interrupted"
        for attempt in record.get("attempts", []):
            if attempt.get("status") == "running":
                attempt["recorded_status"] = "running"
                attempt["status"] = "interrupted"


def with_live_agent_progress(state: dict[str, Any]) -> dict[str, Any]:
    """Show a running controlled iteration's latest progress (authenticated, read-only).

    The runner records the agent's progress when an iteration ends; while one
    runs, its state record names the live progress file (``agent_control.live``),
    which is read here and checked against the token hash and identity.
    """
    for prompt_id, record in state.get("prompts", {}).items():
        control = record.get("agent_control") if isinstance(record, dict) else None
        if not isinstance(control, dict) or not isinstance(control.get("live"), dict):
            continue
        # lazy: the status/watch start-up path loads only what this call reads
        from .agent.client import live_progress

        progress = live_progress(control["live"], str(record.get("run_id")), prompt_id)
        if progress is not None:
            control["progress"] = progress
    return state


def packet_prompt_ids(packet: Any) -> set[str] | None:
    """The ids of the prompts the packet holds now, or ``None`` when they cannot
    be known (the packet does not load).

    Args:
        packet: a packet directory (``str`` or path) or a loaded ``Packet``.

    Read without YAML while every prompt's ``id:`` (and the manifest's
    ``prompt_dir:``) is a plain word, as ``packet new`` and ``prompt new`` write
    them; otherwise the packet is loaded (``load_packet``). Never raises for
    an invalid packet (``None``).
    """
    return packet_ids_or_error(packet)[0]


def packet_ids_or_error(packet: Any) -> tuple[set[str] | None, str | None]:
    """``(ids, None)`` as :func:`packet_prompt_ids`, or ``(None, sentence)`` when
    the packet does not load: the loader's own sentence
    (:func:`prompt_runner.packet.prompt_ids_text.packet_ids`). Never raises for
    an invalid packet."""
    if not isinstance(packet, str | os.PathLike):
        return {prompt.id for prompt in packet.prompts}, None
    return packet_ids(packet)


def split_removed(state: dict[str, Any], current: set[str] | None) -> dict[str, Any]:
    """Take the records of prompts no longer in the packet out of
    ``state["prompts"]`` (in place) and return them as ``{id: last status}``.

    ``current`` is :func:`packet_prompt_ids`; ``None`` (unknown) removes nothing.
    """
    prompts = state.get("prompts")
    if current is None or not isinstance(prompts, dict):
        return {}
    removed: dict[str, Any] = {}
    for prompt_id in sorted(set(prompts) - current):
        record = prompts.pop(prompt_id)
        removed[prompt_id] = record.get("status") if isinstance(record, dict) else None
    return removed


def pending_ids(
    current: dict[str, Any], prompts: dict[str, Any], in_packet: set[str] | None = None
) -> list[str]:
    """The prompts with no record yet: never started.

    Args:
        current: ``runs/current.json`` (``{}`` before any run).
        prompts: the records, by id.
        in_packet: the ids the packet holds now (:func:`packet_prompt_ids`), or
            ``None`` when they cannot be known.

    Returns:
        The ids the current run selected (its ``targets``) in the run's order,
        then -- ``in_packet`` known -- every other prompt of the packet, by id:
        one no run selected, or added since. A target the packet no longer
        holds is left out (it never runs); ``in_packet`` unknown, the run's
        targets alone.
    """
    targets = current.get("targets")
    selected = [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []
    pending = [t for t in selected if t not in prompts]
    if in_packet is None:
        return pending
    pending = [prompt_id for prompt_id in pending if prompt_id in in_packet]
    chosen = set(selected)
    pending += sorted(i for i in in_packet if i not in prompts and i not in chosen)
    return pending


def last_run(layout: StateLayout, current: dict[str, Any], live: bool) -> dict[str, Any] | None:
    """The current run of ``runs/current.json`` (``current``) as ``status`` shows it,
    or ``None`` when no run was ever recorded.

    Returns:
        ``{"run_id", "status", "started_at", "resumed_at", "finished_at" (ISO 8601
        UTC or ``None`` while it runs), "targets": [ids], "stop"}``. ``status`` is
        ``RunStatus``'s word; a run still recorded ``running`` (or ``repairing``)
        with no live runner is ``"unknown"`` with ``recorded_status`` keeping what
        the file says, as ``control status`` shows it. ``stop`` is the ``stop``
        order the control snapshot recorded for this run (``{"after_prompt",
        "request", "author", "requested_at"}``), or ``None``.
    """
    run_id = current.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        return None
    recorded = current.get("status")
    doc: dict[str, Any] = {
        "run_id": run_id,
        "status": recorded if isinstance(recorded, str) else None,
    }
    from .state.current_run import UNFINISHED_RUN  # loaded: status read current.json

    if not live and recorded in UNFINISHED_RUN:
        doc["status"] = "unknown"  # RunStatus.UNKNOWN (state.records: not on this path)
        doc["recorded_status"] = recorded
    for key in ("started_at", "resumed_at", "finished_at"):
        value = current.get(key)
        doc[key] = value if isinstance(value, str) else None
    targets = current.get("targets")
    doc["targets"] = [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []
    doc["stop"] = _stop_order(layout, run_id)
    return doc


def _stop_order(layout: StateLayout, run_id: str) -> dict[str, Any] | None:
    """The ``stop`` the control snapshot of run ``run_id`` recorded, if any (a
    missing or damaged snapshot: ``None`` -- it is a view, rewritten by each run)."""
    # lazy: the status start-up path loads only what this call reads
    from .errors import PromptRunnerError
    from .state.atomic import read_json_object

    try:
        snapshot = read_json_object(layout.snapshot)
    except (OSError, ValueError, PromptRunnerError):
        return None
    if not snapshot or snapshot.get("run_id") != run_id:
        return None
    stop = snapshot.get("stop")
    return stop if isinstance(stop, dict) else None


@public
def status(packet: Any, *, state_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The packet's runtime state document: what ``status --json`` prints.

    Args:
        packet: the packet directory (or its manifest file), or a loaded ``Packet``.
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` -- what ``--state-dir DIR`` says on the
            CLI and ``run(state_dir=...)`` wrote (default:
            ``$PROMPT_RUNNER_STATE_DIR``, else the packet's own); see
            :class:`prompt_runner.api_calls.StateDirScope`.

    Reads the state root (``<packet>/.prompt_runner`` by default) and never
    writes. Before any run it is ``{"schema_version": 1, "version": 1,
    "prompts": {}, "runner": {"alive": false}, "pending": [every prompt's
    id], "last_run": null}``. ``runner.alive`` says whether a
    live process holds the run; when none does, a prompt (or attempt) the
    files still call ``running`` was interrupted and is shown so, with
    ``recorded_status`` keeping what the file says. ``pending`` lists the
    prompts of the packet never started: those the current run selected (in
    its order), then the others (by id: none selected them, or they were
    added since; :func:`pending_ids`), and ``last_run`` how that run stands
    or ended (:func:`last_run`) -- what the human ``status`` counts as
    ``pending`` and says in ``Last run ended ...``.
    The document describes the packet as it is now: ``prompts`` and
    ``pending`` hold only prompts the packet still has (:func:`packet_prompt_ids`),
    and the records of prompts taken out of it since they ran are under
    ``removed_prompts`` (``{id: last status}``), a key present only when there
    is one; a packet that does not load hides nothing: then
    ``packet_error`` (present only then) is the loader's sentence saying why
    (``run`` refuses the packet with it), and every recorded prompt is shown.
    A running agent-controlled iteration shows its live progress.
    A library run with the in-memory store (the default) writes nothing
    there: pass ``runtime_store="file"`` to :func:`prompt_runner.run` to read
    its outcome here (or use the returned ``RunResult.prompts``).

    Returns:
        ``{"schema_version", "version", "run_id", "updated_at", ..., "prompts":
        {id: {"status", "attempts": [...], ...}}, "runner": {"alive": bool},
        "pending": [id, ...], "last_run": {"run_id", "status", ...} | None,
        "removed_prompts": {id: status} (only when not empty), "packet_error":
        str (only when the packet does not load)}``.

    Raises:
        ArgumentError: ``packet`` is not a path or a ``Packet``.
        UserError: not a packet directory.
        StateError: a record of truth under ``.prompt_runner`` is corrupt: a
            prompt log, ``progress.log`` or ``runs/current.json`` (the sentence
            ``run`` refuses it with).
    """
    with StateDirScope(state_dir):
        return _status(packet)


def _status(packet: Any) -> dict[str, Any]:
    # lazy: the status/watch start-up path loads only what this call reads
    from .state.current_run import read_current_run
    from .state.progress import read_progress
    from .state.store import read_state

    root = _root("status", packet)
    layout = StateLayout.of_packet(root)
    state = with_live_agent_progress(read_state(layout.root))
    # the resume source: a bad line of it is refused here as `run` refuses it (a
    # torn last line, a live runner's append in flight, is not read)
    read_progress(layout.progress_log)
    live = runner_alive(root)
    state["runner"] = {"alive": live}
    if not live:
        mark_dead_runs(state)
    in_packet, packet_error = packet_ids_or_error(
        root if isinstance(packet, str | os.PathLike) else packet
    )
    removed = split_removed(state, in_packet)
    if removed:  # only then: the document of a packet that lost no prompt is as it was
        state["removed_prompts"] = removed
    if packet_error is not None:  # its ids unknown: every record shown, none removed
        state["packet_error"] = packet_error
    # read after the liveness check: a run ending between the two reads as
    # running once more, never as gone (watch/health.run_facts reads so too)
    current = read_current_run(layout.current_run) or {}
    state["pending"] = pending_ids(current, state.get("prompts", {}), in_packet)
    state["last_run"] = last_run(layout, current, live)
    return state
