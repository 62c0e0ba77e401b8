"""Agent-owned completion (SPEC 2.8): plan-time validation of the contracts.

With ``execution: {completion: agent_owned, incomplete: repeat}`` the runner
checks only structural clauses and repeats the prompt in fresh sessions until
they pass, so each prompt's contract must be structural evidence of *its*
work: ``commands`` are forbidden, and ``repos_clean`` / ``changed_paths_only``
alone (or an empty contract) are not evidence.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..packet.loader import Packet

NON_EVIDENCE_CLAUSES = frozenset({"repos_clean", "changed_paths_only"})


def agent_owned_findings(packet: Packet) -> list[dict[str, Any]]:
    """Why ``packet``'s prompts cannot be agent-owned (empty when they can).

    Each finding: ``{prompt_id, file, kind, message}`` with ``kind``
    ``verify_commands_not_allowed`` (agent-owned completion never runs
    commands) or ``prompt_specific_structural_evidence_required`` (the
    contract holds only ``repos_clean``/``changed_paths_only``, or nothing).
    """
    if packet.manifest.execution.completion != "agent_owned":
        return []
    findings: list[dict[str, Any]] = []
    for prompt in packet.prompts:
        clauses = set(prompt.contract.clauses())
        if "commands" in clauses:
            findings.append(
                {
                    "prompt_id": prompt.id,
                    "file": prompt.relfile,
                    "kind": "verify_commands_not_allowed",
                    "message": "verify.commands is not allowed in an agent-owned packet",
                }
            )
        if not clauses - NON_EVIDENCE_CLAUSES - {"commands"}:
            findings.append(
                {
                    "prompt_id": prompt.id,
                    "file": prompt.relfile,
                    "kind": "prompt_specific_structural_evidence_required",
                    "message": "an agent-owned prompt needs prompt-specific structural "
                    "evidence (not only repos_clean/changed_paths_only)",
                }
            )
    return findings


def validate_agent_owned(packet: Packet) -> None:
    """Raise the first agent-owned plan problem of ``packet`` (SPEC 2.8).

    Raises:
        UserError: a prompt's ``verify`` has ``commands``, or lacks
            prompt-specific structural evidence.
    """
    findings = agent_owned_findings(packet)
    if not findings:
        return
    first = findings[0]
    if first["kind"] == "verify_commands_not_allowed":
        raise UserError(
            f"invalid agent-owned prompt {first['prompt_id']} ({first['kind']}): "
            "agent-owned completion checks only structural clauses",
            file=first["file"],
            key="verify.commands",
            fix="replace the commands with structural evidence (files_exist, contains, "
            "doc, json, yaml, glob...), or use execution.completion: verifier_owned",
        )
    raise UserError(
        f"invalid agent-owned prompt {first['prompt_id']} ({first['kind']}): "
        "repos_clean and changed_paths_only alone do not show the prompt's work",
        file=first["file"],
        key="verify",
        fix="add a clause naming the prompt's own output (files_exist, contains, doc, "
        "json, yaml, glob...)",
    )
