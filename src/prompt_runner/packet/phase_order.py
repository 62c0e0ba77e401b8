"""Which phase comes later: the one rule lint's ``depends_on_later_phase`` and
``plan``/``run``'s phase notes use (standard library only).

Phases are labels (``phase: 2``, ``phase: setup``). When every phase of a
packet is a number they are ordered as numbers (``2`` before ``10``);
otherwise in the order the manifest's ``phases`` map lists them, then in the
order prompt files first name them. File order alone never decides it: a
prompt of phase 1 whose file sorts after a phase-2 prompt it depends on still
depends on a later phase.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .loader import Packet, Prompt

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def phase_ranks(packet: Packet) -> dict[str, float]:
    """Phase label -> its rank (a smaller rank is an earlier phase), for every
    phase the manifest's ``phases`` or a prompt names."""
    named = [p.phase for p in packet.prompts if p.phase is not None]
    order = list(dict.fromkeys([*packet.manifest.phases, *named]))
    if all(_NUMBER.fullmatch(phase) for phase in order):
        return {phase: float(phase) for phase in order}
    return {phase: float(rank) for rank, phase in enumerate(order)}


def later_phase_dependencies(packet: Packet) -> list[tuple[Prompt, Prompt]]:
    """``(prompt, dependency)`` for each ``depends_on`` naming a prompt of a later
    phase (by :func:`phase_ranks`, whatever the files' order): running the
    dependency first pulls it ahead of its phase, and ``--phase`` alone leaves the
    prompt blocked. Prompts without a phase are never in such a pair."""
    ranks = phase_ranks(packet)
    edges = []
    for prompt in packet.prompts:
        if prompt.phase is None:
            continue
        for dep_id in prompt.front.depends_on:
            dep = packet.prompt(dep_id)
            if dep.phase is not None and ranks[dep.phase] > ranks[prompt.phase]:
                edges.append((prompt, dep))
    return edges
