"""How the plane decides one request: its log entry, a refusal, an amendment (SPEC 5).

Exactly-once: each request is decided, logged (the commit point), then its
effect applied, then receipted -- so a request whose log line or receipt
cannot be written has no effect and stays pending (see ``control/store.py``).
Nothing arriving through the transport is fatal: a bad request is refused
with a reason. A decision is ``(log entry, effect or None)``; the entry's
``outcome`` is ``applied`` or ``rejected`` (with its ``reason``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..state._clock import iso_now
from .amendments import append_record, make_record, phase_of
from .applies_to import target
from .requests import validate_amendment, validate_request

if TYPE_CHECKING:
    from ..packet.loader import Packet, Prompt
    from ..state.store import RuntimeStore
    from .store import PendingRequest

Effect = Callable[[], None]
Decision = tuple[dict[str, Any], Effect | None]


def open_entry(
    name: str,
    payload: Mapping[str, Any],
    *,
    run_id: str,
    prompt_id: object,
    attempt: object,
) -> dict[str, Any]:
    """The control log entry of request file ``name`` before it is decided.

    Args:
        payload: the request as read (``{}`` when it could not be read).
        run_id: the run deciding it.
        prompt_id, attempt: where the run is (``None`` between sessions).
    """
    command = payload.get("command")
    raw_params = payload.get("params")
    author = payload.get("author")
    return {
        "schema_version": 1,
        "request": name,
        "id": payload.get("id"),
        "command": command if isinstance(command, str) else None,
        "params": raw_params if isinstance(raw_params, dict) else {},
        "author": author if isinstance(author, str) else None,
        "run_id": run_id,
        "requested_run_id": payload.get("run_id"),
        "prompt_id": prompt_id,
        "attempt": attempt,
        "requested_at": payload.get("requested_at"),
        "at": iso_now(millis=True),
    }


def refusal(
    item: PendingRequest,
    payload: Mapping[str, Any],
    *,
    run_id: str,
    known_clauses: tuple[str, ...] | None,
) -> str | None:
    """Why request ``item`` is refused before its command is looked at, or ``None``
    (it could not be read, or :func:`~.requests.validate_request` says no)."""
    if not item.ok:
        detail = f": {item.detail}" if item.detail else ""
        return f"{item.error}{detail}"
    ok, reason = validate_request(payload, current_run_id=run_id, known_clauses=known_clauses)
    return None if ok else reason


def refuse(entry: dict[str, Any], reason: str) -> dict[str, Any]:
    """``entry`` marked ``rejected`` with ``reason``."""
    entry["outcome"] = "rejected"
    entry["reason"] = reason
    return entry


class PacketPrompts:
    """A run plane's ``prompt_loader``: prompt id -> the loaded packet's ``Prompt``
    (``None``: no prompt of that id), with the packet's repos, so that an
    ``amend``/``relax`` request is held to the loader's rules
    (:func:`decide_amendment`).

    Args:
        packet: the run's loaded packet.
    """

    def __init__(self, packet: Packet) -> None:
        self.packet = packet

    def __call__(self, prompt_id: str) -> Prompt | None:
        return self.packet.prompt(prompt_id) if prompt_id in self.packet.ids() else None

    @property
    def repos(self) -> Mapping[str, Path]:
        """The packet's repos (``Packet.repos``: name -> directory, ``packet`` included)."""
        return self.packet.repos


def decide_amendment(
    entry: dict[str, Any],
    command: str,
    params: Mapping[str, Any],
    *,
    state_root: Path,
    run_id: str,
    runtime: RuntimeStore | None,
    known_clauses: tuple[str, ...] | None,
    prompt_loader: Callable[[str], Any] | None,
) -> Decision:
    """Decide an ``amend``/``relax`` request that passed validation.

    Decided on the runner's thread, so never while this run verifies: the
    amendment applies to the prompt's next verification or is deferred. A
    request cannot persist (that edits the packet: ``control amend --persist``
    does); its record says so in ``persist_refused``. When ``prompt_loader``
    is a :class:`PacketPrompts`, an amended contract the packet loader would
    refuse is refused (:func:`~.amendments.check_loads`). The effect appends
    the amendment record.
    """
    clean = validate_amendment(command, params, known_clauses=known_clauses)
    prompt_id = clean["prompt_id"]
    prompt = prompt_loader(prompt_id) if prompt_loader is not None else None
    if prompt is None:
        return refuse(entry, f"unknown prompt {prompt_id}"), None
    record_doc = runtime.load_prompt(prompt_id) if runtime is not None else {}
    applies_to, phase = target(
        state_root, prompt_id, run_id=run_id, record=record_doc, persist=False
    )
    try:
        record = make_record(
            prompt,
            command,
            clean,
            state_root=state_root,
            author=entry["author"],
            phase=phase or phase_of(record_doc),
            run_id=run_id,
            applies_to=applies_to,
            repos=prompt_loader.repos if isinstance(prompt_loader, PacketPrompts) else None,
        )
    except UserError as exc:
        return refuse(entry, str(exc)), None
    if record.get("persist"):
        record["persist"] = False
        record["persist_refused"] = "persist edits the packet: use `control amend --persist`"
    entry.update(
        {
            "outcome": "applied",
            "reason": None,
            "phase": record["phase"],
            "applies_to": applies_to,
        }
    )
    return entry, lambda: _ignore(append_record(state_root, record))


def _ignore(_: object) -> None:
    return None
