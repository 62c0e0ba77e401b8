"""Evaluate a contract: every clause in evaluation order, results as values."""

from __future__ import annotations

from prompt_runner.verifier import regenerates, registry
from prompt_runner.verifier.model import (
    FAULT,
    Contract,
    VerifierItem,
    VerifierReport,
    VerifyContext,
    item,
)


def verify(contract: Contract, ctx: VerifyContext) -> VerifierReport:
    """Check ``contract`` and report every item.

    Clauses run in :func:`~prompt_runner.verifier.contract_keys` order. With
    ``ctx.structural_only`` the ``commands`` clause is skipped entirely (never
    executed). Never raises for a failing check: an unexpected error inside a
    clause becomes a ``verifier_fault`` item naming the clause, because the
    verifier could not judge the work. Before any clause, a ``regenerates``
    output a killed verification left at its backup is put back
    (:func:`~prompt_runner.verifier.regenerates.recover`).
    """
    items: list[VerifierItem] = []
    if contract.has("commands"):
        regenerates.recover(contract, ctx)  # first: what a killed verification left moved aside
    for name in registry.names():
        entries = contract.entries.get(name)
        if not entries:
            continue
        spec = registry.get(name)
        assert spec is not None  # every name of registry.names() is registered
        if ctx.structural_only and not spec.structural:
            continue
        try:
            items.extend(spec.check(entries, ctx))
        except Exception as exc:  # a verifier bug must halt the run, not pass or fail the work
            items.append(
                item(
                    spec.name,
                    passed=False,
                    verdict=FAULT,
                    details=(
                        f"verifier error while checking {spec.name}: {type(exc).__name__}: {exc}"
                    ),
                )
            )
    return VerifierReport.of(tuple(items))
