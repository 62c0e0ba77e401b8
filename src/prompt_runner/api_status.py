"""The library's light reads of a packet's runtime state: ``status`` (``watch``:
:mod:`prompt_runner.api_watch`).

What ``prompt-runner status`` prints, as a library call. This module stays on
the standard library and the light ``state`` helpers (no pydantic, no YAML
model), so the CLI's ``status`` hot path can call it (tests/test_cli_startup.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from .api_calls import public
from .errors import ArgumentError
from .paths import packet_root
from .state.layout import StateLayout

TYPE_CHECKING = False  # typing costs ~4 ms of the status and watch start-ups
if TYPE_CHECKING:
    from typing import Any


def _root(caller: str, packet: Any) -> Path:
    """The packet directory of ``packet`` (a path, or a loaded ``Packet``).

    Raises:
        ArgumentError: ``packet`` is neither.
        UserError: the path is not a packet directory.
    """
    if isinstance(packet, str | os.PathLike):
        return packet_root(os.fspath(packet))
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


@public
def status(packet: Any) -> dict[str, Any]:
    """The packet's runtime state document: what ``status --json`` prints.

    Args:
        packet: the packet directory (or its manifest file), or a loaded ``Packet``.

    Reads ``<packet>/.prompt_runner`` and never writes. Before any run it is
    ``{"schema_version": 1, "version": 1, "prompts": {}, "runner": {"alive":
    false}}``. ``runner.alive`` says whether a live process holds the run;
    when none does, a prompt (or attempt) the files still call ``running``
    was interrupted and is shown so, with ``recorded_status`` keeping what the
    file says. A running agent-controlled iteration shows its live progress.
    A library run with the in-memory store (the default) writes nothing
    there: pass ``runtime_store="file"`` to :func:`prompt_runner.run` to read
    its outcome here (or use the returned ``RunResult.prompts``).

    Returns:
        ``{"schema_version", "version", "run_id", "updated_at", ..., "prompts":
        {id: {"status", "attempts": [...], ...}}, "runner": {"alive": bool}}``.

    Raises:
        ArgumentError: ``packet`` is not a path or a ``Packet``.
        UserError: not a packet directory.
        StateError: a record of truth under ``.prompt_runner`` is corrupt.
    """
    # lazy: the status/watch start-up path loads only what this call reads
    from .state.store import read_state

    root = _root("status", packet)
    state = with_live_agent_progress(read_state(StateLayout.of_packet(root).root))
    live = runner_alive(root)
    state["runner"] = {"alive": live}
    if not live:
        mark_dead_runs(state)
    return state
