"""The notification document: one JSON object per event, the same for every target.

Schema ``prompt_runner.notification/v1``::

    {"schema": "prompt_runner.notification/v1",
     "id": "6f1c...",              one per event (the same across targets and retries)
     "kind": "blocked",            one of EVENT_KINDS
     "at": "2026-11-29T16:57:03.120Z",   when the event happened (UTC)
     "summary": "demo: prompt 02 blocked",  one line, the title of a chat message
     "packet": "demo", "packet_root": "/abs/demo",
     "run_id": "20261129T165703Z-ab12", "prompt": "02",   (null for run-level events)
     "reason": "what happened, one sentence",
     "next_step": "what the reader should do next, one sentence",
     "details": {...}}             kind-specific JSON values (status, exit_code, ...)

Plain webhooks (``json://``) get this document as the message text; other
Apprise services get :func:`readable` (the summary, reason and next step).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from ..state._clock import iso_now

SCHEMA = "prompt_runner.notification/v1"

_SUMMARIES = {
    "run_completed": "run completed",
    "run_failed": "run failed",
    "prompt_failed": "prompt {prompt} failed",
    "blocked": "prompt {prompt} blocked",
    "usage_wait_started": "waiting for a usage window",
    "usage_wait_ended": "usage wait over",
    "budget_spent": "cost budget spent",
    "watch_unhealthy": "run unhealthy",
}


def build(
    kind: str,
    *,
    packet: str | None,
    packet_root: str | None,
    run_id: str | None,
    prompt: str | None,
    reason: str,
    next_step: str,
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The document of one event (see the module doc); ``details`` is copied
    through JSON, so a value JSON cannot hold is written as its ``str``."""
    summary = _SUMMARIES[kind].format(prompt=prompt or "?")
    if kind in ("usage_wait_started", "usage_wait_ended", "budget_spent") and prompt:
        summary += f" (prompt {prompt})"
    return {
        "schema": SCHEMA,
        "id": uuid.uuid4().hex,
        "kind": kind,
        "at": iso_now(millis=True),
        "summary": f"{packet or 'prompt-runner'}: {summary}",
        "packet": packet,
        "packet_root": packet_root,
        "run_id": run_id,
        "prompt": prompt,
        "reason": reason,
        "next_step": next_step,
        "details": json.loads(json.dumps(dict(details or {}), default=str)),
    }


def encoded(document: Mapping[str, Any]) -> str:
    """The document as one line of JSON (what a command's stdin and a webhook get)."""
    return json.dumps(document, ensure_ascii=False, sort_keys=False)


def readable(document: Mapping[str, Any]) -> str:
    """The document as text for people (chat, e-mail): reason, next step, ids."""
    lines = [str(document["reason"])]
    if document.get("next_step"):
        lines.append(f"Next: {document['next_step']}")
    ids = [f"packet {document.get('packet')}", f"run {document.get('run_id')}"]
    if document.get("prompt"):
        ids.append(f"prompt {document['prompt']}")
    lines.append(" · ".join(ids))
    return "\n".join(lines)
