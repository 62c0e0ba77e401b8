"""The clause registry: clause name -> how to parse, check and label it.

Each module in :mod:`prompt_runner.verifier.clauses` registers its clause
names with :func:`register` when imported (pre-commit ``languages/`` style).
Evaluation order comes from each spec's ``order``.

:data:`INDEX` names each clause's module and the two flags a run asks about
before it checks anything (``structural``, ``names_outputs``), so a run imports
only the modules of the clauses its contracts use (:func:`get`, :func:`names`;
the eight modules together cost ~28 ms of start-up, ``files`` alone ~3);
:func:`specs` imports them all (lint, the JSON Schema). Adding a clause touches
its module, its test and one line of :data:`INDEX`
(``tests/verifier/test_registry.py`` fails until the index matches what the
modules register).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from prompt_runner.verifier.model import ClauseEntry, VerifierItem, VerifyContext
from prompt_runner.verifier.schema import Where

Parser = Callable[[object, Where], tuple[ClauseEntry, ...]]
Checker = Callable[[Sequence[ClauseEntry], VerifyContext], list[VerifierItem]]
Labeler = Callable[[ClauseEntry, str | None], str]
E = TypeVar("E", bound=ClauseEntry)


@dataclass(frozen=True)
class ClauseSpec:
    """One clause.

    Attributes:
        name: the key under ``verify:``.
        order: evaluation order (lower first).
        parse: validates the clause's raw value (``where`` = ``verify.<name>``)
            into entries; raises :class:`prompt_runner.errors.UserError`.
        check: evaluates all of a contract's entries of this clause, returning items.
        label: the human checklist label of one entry, given the default repo.
        structural: an agent-owned prompt may use it (everything but ``commands``).
        names_outputs: its entries' paths name the prompt's outputs, so a
            prompt's commit may include those paths when they are dirty (files
            its contract checks for, even ones an interrupted earlier attempt
            left); ``False`` for clauses whose paths are only read or scanned.
    """

    name: str
    order: int
    parse: Parser
    check: Checker
    label: Labeler
    structural: bool = True
    names_outputs: bool = False


_SPECS: dict[str, ClauseSpec] = {}
_loaded = False

INDEX: dict[str, tuple[str, bool, bool]] = {
    "files_exist": ("files", True, True),
    "files_absent": ("files", True, True),
    "contains": ("files", True, True),
    "matches": ("files", True, True),
    "doc": ("doc", True, True),
    "yaml": ("data", True, True),
    "json": ("data", True, True),
    "glob": ("glob", True, True),
    "source_absent": ("source", True, False),
    "commands": ("commands", False, False),
    "changed_paths_only": ("changed", True, True),
    "repos_clean": ("repos", True, False),
}
"""Clause name -> ``(its module under clauses/, structural, names_outputs)``, in
evaluation order: what the specs say, known without importing their modules."""


def per_entry(cls: type[E], check_one: Callable[[E, VerifyContext], VerifierItem]) -> Checker:
    """A clause's ``check`` made from the check of one of its entries (each a ``cls``):
    one item per entry, in the contract's order."""

    def check(entries: Sequence[ClauseEntry], ctx: VerifyContext) -> list[VerifierItem]:
        out: list[VerifierItem] = []
        for entry in entries:
            assert isinstance(entry, cls)
            out.append(check_one(entry, ctx))
        return out

    return check


def register(spec: ClauseSpec) -> ClauseSpec:
    """Add ``spec`` to the registry (called at import time by clause modules)."""
    if spec.name in _SPECS and _SPECS[spec.name] is not spec:
        raise ValueError(f"verifier clause {spec.name!r} registered twice")
    _SPECS[spec.name] = spec
    return spec


def _load() -> None:
    global _loaded
    if _loaded:
        return
    # lazy: the clause modules import this registry to register themselves
    from prompt_runner.verifier import clauses

    for info in pkgutil.iter_modules(clauses.__path__):
        importlib.import_module(f"{clauses.__name__}.{info.name}")
    _loaded = True


_sorted: tuple[tuple[ClauseSpec, ...], tuple[ClauseSpec, ...]] = ((), ())
"""``(the registered specs, sorted)`` as :func:`specs` last sorted them (a packet
load asks twice a prompt); sorted again whenever the registry holds others."""


def specs() -> tuple[ClauseSpec, ...]:
    """Every registered clause, in evaluation order."""
    global _sorted
    _load()
    registered = tuple(_SPECS.values())
    seen, ordered = _sorted
    if len(seen) != len(registered) or any(
        a is not b for a, b in zip(seen, registered, strict=True)
    ):
        ordered = tuple(sorted(registered, key=lambda s: s.order))
        _sorted = (registered, ordered)
    return ordered


def get(name: str) -> ClauseSpec | None:
    """The spec registered as ``name``, or ``None``; imports only ``name``'s module
    when :data:`INDEX` knows it (every module when it does not)."""
    spec = _SPECS.get(name)
    if spec is not None:
        return spec
    indexed = INDEX.get(name)
    if indexed is None:
        _load()
    else:
        # lazy: the clause modules import this registry to register themselves
        from prompt_runner.verifier import clauses

        importlib.import_module(f"{clauses.__name__}.{indexed[0]}")
    return _SPECS.get(name)


def names() -> tuple[str, ...]:
    """Every clause name, in evaluation order (from :data:`INDEX`: no module imported)."""
    return tuple(INDEX)


def structural_names() -> frozenset[str]:
    """The clauses an agent-owned prompt may use (``structural``; from :data:`INDEX`)."""
    return frozenset(name for name, (_, structural, _) in INDEX.items() if structural)


def output_clauses() -> frozenset[str]:
    """The names of the clauses whose paths name a prompt's outputs (``names_outputs``;
    from :data:`INDEX`)."""
    return frozenset(name for name, (_, _, outputs) in INDEX.items() if outputs)
