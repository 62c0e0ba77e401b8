"""What the plane writes: the run snapshot and the lines of ``events.jsonl`` (SPEC 5).

The snapshot (``control/snapshot.json``, replaced as a whole)::

    {"run_id", "packet",
     "status": "running"|"completed"|"failed"|"interrupted"|"unknown",
     "prompt_id", "prompt_name", "attempt", "mode", "provider", "model",
     "started_at", "updated_at", "elapsed_ms", "tool_count",
     "tokens": {"input", "output", "cached"}, "cost_usd", "event_count",
     "steer_count", "view": {log_mode, tool_output, thinking, diff}}

Every line of ``events.jsonl`` is a canonical event with ``prompt_id`` and
``run_id`` added; an invocation's stream ends with its ``run_finished``
record (:func:`run_finished_line`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..render.sinks import encode_body
from ..state._clock import iso_now
from ..state.jsonl import dumps_lenient
from ..state.records import RunStatus
from .requests import VIEW_SETTINGS

if TYPE_CHECKING:
    from ..providers.events import Event


@dataclass(frozen=True)
class PromptInfo:
    """What the snapshot shows about a prompt before its session says more."""

    name: str
    provider: str
    model: str | None
    max_steers: int
    file: Path | None = None


FOLDED = frozenset({"tool_use", "usage", "session_started"})
"""Event kinds that change the snapshot (:func:`fold`)."""


def new_snapshot(run_id: str, packet: str, view: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot of run ``run_id`` as it starts (nothing seen yet; ``view``: the
    console's, of which the :data:`~.requests.VIEW_SETTINGS` are shown)."""
    return {
        "run_id": run_id,
        "packet": packet,
        "status": RunStatus.RUNNING,
        "prompt_id": None,
        "prompt_name": None,
        "attempt": None,
        "mode": None,
        "provider": None,
        "model": None,
        "started_at": iso_now(millis=True),
        "updated_at": None,
        "elapsed_ms": 0,
        "tool_count": 0,
        "tokens": {"input": 0, "output": 0, "cached": 0},
        "cost_usd": 0.0,
        "event_count": 0,
        "steer_count": 0,
        "view": {k: view[k] for k in VIEW_SETTINGS if k in view},
        "stage": None,  # what the runner does outside a session (ControlPlane.enter_stage)
    }


def enter_prompt(snap: dict[str, Any], prompt_id: str, info: PromptInfo | None) -> None:
    """Make ``prompt_id`` the snapshot's prompt (a no-op when it already is)."""
    if snap["prompt_id"] != prompt_id:
        snap["prompt_id"] = prompt_id
        snap["prompt_name"] = info.name if info else None
        snap["provider"] = info.provider if info else None
        snap["model"] = info.model if info else None


def fold(snap: dict[str, Any], kind: str, data: Mapping[str, Any]) -> None:
    """Count an event of one of the :data:`FOLDED` kinds into ``snap``."""
    if kind == "tool_use":
        snap["tool_count"] += 1
    elif kind == "usage":
        tokens = snap["tokens"]
        # as_int written out for the common case (an int, or the key absent)
        n = data.get("input_tokens")
        if n is not None:
            tokens["input"] += n if type(n) is int else as_int(n)
        n = data.get("output_tokens")
        if n is not None:
            tokens["output"] += n if type(n) is int else as_int(n)
        n = data.get("cached_tokens")
        if n is not None:
            tokens["cached"] += n if type(n) is int else as_int(n)
        cost = data.get("cost_usd")
        if isinstance(cost, (int, float)):  # a tuple: no int | float union built per call
            snap["cost_usd"] = round(snap["cost_usd"] + cost, 6)
    elif kind == "session_started":
        if data.get("provider"):
            snap["provider"] = data["provider"]
        if data.get("model"):
            snap["model"] = data["model"]


SHOWN_AT_FINISH: dict[str, RunStatus] = {
    RunStatus.COMPLETED: RunStatus.COMPLETED,
    RunStatus.NOTHING: RunStatus.COMPLETED,
    RunStatus.INTERRUPTED: RunStatus.INTERRUPTED,
    RunStatus.DRY_RUN: RunStatus.UNKNOWN,
}
"""The snapshot's status for how the run ended; any other end (``failed``,
``halted``) is shown ``failed``. A run a stop, Ctrl-C or SIGTERM ended is
``interrupted``, as ``runs/current.json`` records it (it was ``unknown``, which
``control status`` and the dashboard showed for a run stopped on request);
``unknown`` is left for a runner that died and a dry run."""


def run_finished_line(run_id: str, status: str) -> str:
    """The ``run_finished`` line that ends an invocation's stream (``status``: the run
    result's)."""
    return dumps_lenient(
        {
            "kind": "run_finished",
            "run_id": run_id,
            "status": status,
            "at_ms": int(time.time() * 1000),
            "prompt_id": None,
        }
    )


_PROMPT_ID_ENCODER = json.JSONEncoder(ensure_ascii=False)


def with_ids(encoded: str | None, event: Event, prompt_id: str, run_id: str) -> str:
    """The event's JSON object line with ``prompt_id`` and ``run_id`` added, reusing ``encoded``.

    ``encoded`` is the runner's one encoding of ``event.to_dict()`` (a JSON
    object); without it the event is encoded here.
    """
    if encoded is None:
        line = event_line(event, ids_suffix(prompt_id, run_id))
        if line is not None:
            return line
        encoded = encode_body(event)  # the runner's one encoder (orjson)
        if not encoded.isascii():  # O(1); else no surrogate can be in it
            try:
                encoded.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates (odd file names): escape them
                encoded = None
    if encoded is None or not encoded.endswith("}") or encoded == "{}":
        record = event.to_dict()
        record["prompt_id"] = prompt_id
        record["run_id"] = run_id
        return dumps_lenient(record)
    return encoded[:-1] + ids_suffix(prompt_id, run_id)


_IDS_SUFFIX: dict[tuple[str, str], str] = {}
"""Per (prompt id, run id), the encoded ``,"prompt_id":...,"run_id":...}`` tail."""


def ids_suffix(prompt_id: str, run_id: str) -> str:
    """The tail ``,"prompt_id":...,"run_id":...}`` that :func:`with_ids` ends a line with."""
    key = (prompt_id, run_id)
    suffix = _IDS_SUFFIX.get(key)
    if suffix is None:
        suffix = _IDS_SUFFIX[key] = (
            f',"prompt_id":{_PROMPT_ID_ENCODER.encode(prompt_id)}'
            f',"run_id":{_PROMPT_ID_ENCODER.encode(run_id)}}}'
        )
    return suffix


_BODY_OPTS = orjson.OPT_NON_STR_KEYS  # render.sinks.encode_body's options
_dumps = orjson.dumps
_REFUSED = (TypeError, orjson.JSONEncodeError)


def event_line(event: Event, suffix: str) -> str | None:
    """:func:`with_ids` of ``encode_body(event)``, byte for byte, in one step, given
    the prompt's :func:`ids_suffix` (one event at a time: the simulated provider,
    the API callbacks); ``None`` where ``encode_body`` would not take its orjson path."""
    data = event.data
    if type(data) is not dict or "kind" in data or "at_ms" in data:
        return None
    try:
        body = _dumps(data, default=str, option=_BODY_OPTS)
    except _REFUSED:
        return None
    if body == b"{}":
        return f'{{"kind":"{event.kind}","at_ms":{event.at_ms}{suffix}'
    return f'{{"kind":"{event.kind}","at_ms":{event.at_ms},{body[1:-1].decode()}{suffix}'


def as_int(value: object) -> int:
    """``value`` when it is an int (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
