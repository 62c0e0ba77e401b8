"""The verifier: owns completion (SPEC 2.6).

A prompt's ``verify:`` block is parsed once into a :class:`Contract`
(:func:`parse_contract`, :func:`check_contract_paths`), then checked after each
session by :func:`verify`, which returns a :class:`VerifierReport` -- values,
never exceptions, for failing work. Each clause family is one module under
``verifier/clauses/`` registered by clause name.
"""

from __future__ import annotations

from prompt_runner.verifier.checklist import checklist_items, render_checklist
from prompt_runner.verifier.contract import (
    check_contract_paths,
    contract_keys,
    parse_contract,
    structural_clauses,
)
from prompt_runner.verifier.engine import verify
from prompt_runner.verifier.model import (
    ClauseEntry,
    Contract,
    VerifierItem,
    VerifierReport,
    VerifyContext,
)

STRUCTURAL_CLAUSES: frozenset[str] = structural_clauses()
"""Clauses an agent-owned prompt may use: everything except ``commands``."""

__all__ = [
    "STRUCTURAL_CLAUSES",
    "ClauseEntry",
    "Contract",
    "VerifierItem",
    "VerifierReport",
    "VerifyContext",
    "check_contract_paths",
    "checklist_items",
    "contract_keys",
    "parse_contract",
    "render_checklist",
    "verify",
]
