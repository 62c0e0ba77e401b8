"""A run's identity: its generation id and the fingerprint of the packet it runs.

``runs/current.json`` records both (see :mod:`prompt_runner.state.current_run`):
a later run resumes an unfinished generation only while the packet's
fingerprint is the same (:func:`prompt_runner.runner.opening.choose_run_id`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import UTC, datetime

from ..packet.loader import Packet
from ..planning import Plan


def fingerprint(plan: Plan) -> str:
    """sha256 of the packet content a run depends on (see :func:`packet_fingerprint`)."""
    return packet_fingerprint(plan.packet)


def packet_fingerprint(packet: Packet) -> str:
    """sha256 (hex) of the packet content a run depends on: each prompt's id,
    body, targets, ``depends_on`` and contract, the agent control and the
    execution settings."""
    doc = {
        "prompts": [
            {
                "id": p.id,
                "body": p.body,
                "targets": list(p.targets),
                "depends_on": list(p.front.depends_on),
                "verify": p.contract.to_raw(),
            }
            for p in packet.prompts
        ],
        "agent_control": packet.manifest.agent_control.model_dump(),
        "execution": packet.manifest.execution.model_dump(),
    }
    raw = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def new_run_id() -> str:
    """A new generation id: the UTC start second and 6 random hex digits
    (``20260101T120000Z-1a2b3c``)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"
