"""Linting a ``verify`` contract: clause names, entry shapes, repo names,
commands, regexes and the contract's strength as evidence of the prompt's work.

The clause list comes from the verifier's registry
(:func:`prompt_runner.verifier.contract_keys`), so lint and the verifier cannot
drift.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from ...errors import UserError
from ...verifier import STRUCTURAL_CLAUSES, Contract, parse_contract
from ...verifier.clauses.files import PatternEntry
from ...verifier.clauses.source import SourceEntry
from ...verifier.command_entry import DEFAULT_TIMEOUT_MS, CommandEntry
from ...verifier.regexes import nested_quantifier
from .context import LintFile

CONTENT_CLAUSES = frozenset({"contains", "matches", "doc", "yaml", "json"})
"""Clauses an empty file cannot satisfy (they assert content)."""

WEAK_EVIDENCE = frozenset({"changed_paths_only", "repos_clean"})
"""Structural clauses that say nothing specific about one prompt's work."""

_GNU_TIMEOUT = re.compile(
    r"^\s*(?:exec\s+)?timeout\s+(?:(?:-[ks]|--kill-after|--signal)\s+\S+\s+|-\S+\s+)*"
    r"(\d+\.?\d*|\.\d+)[smhd]?\s+\S"
)
"""A legacy command wrapped in coreutils' ``timeout``; group 1 is the duration
(``0`` sets no limit, so it bounds nothing)."""


def _gnu_timeout_bounds(shell: str) -> bool:
    """True when ``shell`` runs under a ``timeout`` with a limit (not ``timeout 0``)."""
    found = _GNU_TIMEOUT.match(shell)
    return found is not None and float(found.group(1)) > 0


def lint_contract(
    handle: LintFile,
    verify: Any,
    key: tuple[str, ...],
    *,
    prompt: bool = False,
    targets: tuple[str, ...] = (),
) -> None:
    """Clause names, entry shapes, repo names, commands and contract strength.

    Args:
        verify: the raw contract (a prompt's ``verify``, or the manifest's
            ``agent_control.completion_verify``).
        key: where it is (``("verify",)``), for key paths and lines.
        prompt: a prompt's own contract (its strength is judged too).
        targets: the prompt's resolved target repos (the repos its commit goes to).
    """
    parsed = _parse(handle, verify, key)
    if parsed is None:
        return
    contract, troubled = parsed
    _lint_verify_repos(handle, contract, key)
    _lint_commands(handle, contract, key)
    _lint_regexes(handle, contract, key)
    if prompt:
        _lint_strength(handle, contract, key, targets, troubled)


def _parse(handle: LintFile, verify: Any, key: tuple[str, ...]) -> tuple[Contract, bool] | None:
    """The clauses that parse, and whether any did not (``None``: not a mapping)."""
    dotted = ".".join(key)
    known = handle.lint.clauses
    if verify is not None and not isinstance(verify, dict):
        fix = f"write a mapping of clauses from: {', '.join(known)}"
        handle.add("invalid_contract", *key, error=f"{handle.path}: {dotted}: {fix}.")
        return None
    troubled = False
    entries: dict[str, Any] = {}
    for name, value in (verify or {}).items():
        if name not in known:
            troubled = True
            close = difflib.get_close_matches(str(name), known, n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            handle.add(
                "unknown_verify_clause",
                *key,
                str(name),
                key=f"{dotted}.{name}",
                hint=hint,
                known=", ".join(known),
            )
            continue
        try:
            entries.update(parse_contract({name: value}, file=handle.path, key=dotted).entries)
        except UserError as exc:
            troubled = True
            handle.add("invalid_contract", *key, str(name), error=str(exc))
    return Contract(entries), troubled


def _lint_verify_repos(handle: LintFile, contract: Contract, key: tuple[str, ...]) -> None:
    """``unknown_verify_repo`` for an entry naming a repo the manifest lacks."""
    if handle.lint.repos is None:
        return
    dotted = ".".join(key)
    repos = sorted({*handle.lint.repos, "packet"})
    for clause, clause_entries in contract.entries.items():
        for index, entry in enumerate(clause_entries):
            for repo in entry.repo_refs():
                if repo not in repos:
                    handle.add(
                        "unknown_verify_repo",
                        *key,
                        clause,
                        index,
                        key=f"{dotted}.{clause}[{index}]",
                        repo=repo,
                        clause=clause,
                        known=", ".join(repos),
                    )


def _lint_strength(
    handle: LintFile,
    contract: Contract,
    key: tuple[str, ...],
    targets: tuple[str, ...],
    troubled: bool,
) -> None:
    """A prompt's contract as evidence: none, weak, vacuous, or one that cannot pass."""
    present = set(contract.clauses())
    if not present and not troubled:
        handle.add("prompt_without_verify", *key)
    uncommitted = _repos_clean_before_commit(handle, contract, targets)
    # One warning per weak contract: when changed_paths_only or a repos_clean
    # that cannot pass is present, its own, more specific warning is the one
    # reported, so the reference packets lint with exactly that warning (issue 7).
    if (
        present
        and "commands" not in present
        and not present & CONTENT_CLAUSES
        and "changed_paths_only" not in present
        and uncommitted is None
    ):
        handle.add("contract_without_commands", *key, clauses=", ".join(sorted(present)))
    if "changed_paths_only" in present:
        handle.add("changed_paths_only_vacuous", *key, "changed_paths_only")
    if uncommitted is not None:
        index, names = uncommitted
        repos_text = ", ".join(f"`{name}`" for name in names)
        handle.add("repos_clean_before_commit", *key, "repos_clean", index, repos=repos_text)
    if handle.lint.agent_owned:
        if "commands" in present:
            handle.add("agent_owned_verify_commands", *key, "commands")
        if not (present & STRUCTURAL_CLAUSES) - WEAK_EVIDENCE:
            handle.add("agent_owned_structural_evidence_required", *key)


def _repos_clean_before_commit(
    handle: LintFile, contract: Contract, targets: tuple[str, ...]
) -> tuple[int, list[str]] | None:
    """``repos_clean`` entries on repos the runner's git committer commits to.

    The git committer commits the prompt's target repos only after its
    contract passed, so ``repos_clean`` on one of them sees this prompt's own
    uncommitted work. A repo that shares a target's work tree counts too.

    Returns:
        ``(index of the first such entry, repo names)``, or ``None`` when the
        manifest sets ``committer: noop`` or no entry names a target.
    """
    lint = handle.lint
    if not lint.git_committer or not targets:
        return None
    paths = lint.repo_paths
    committed = {paths[t] for t in targets if t in paths}
    first: int | None = None
    names: list[str] = []
    for index, entry in enumerate(contract.entries.get("repos_clean", ())):
        repo = entry.repo if entry.repo is not None else targets[0]
        if repo in targets or (repo in paths and paths[repo] in committed):
            first = index if first is None else first
            if repo not in names:
                names.append(repo)
    return (first, names) if first is not None else None


def _lint_regexes(handle: LintFile, contract: Contract, key: tuple[str, ...]) -> None:
    """``regex_nested_quantifier`` for each regex of ``matches``, ``stdout_matches``
    and ``source_absent`` shaped like ``(a+)+`` (verifier/regexes.py)."""
    dotted = ".".join(key)
    for clause, entries in contract.entries.items():
        for index, entry in enumerate(entries):
            found: list[tuple[str, str]] = []  # (key suffix, pattern)
            if isinstance(entry, PatternEntry):
                found.append(("pattern", entry.pattern))
            elif isinstance(entry, CommandEntry):
                found += [(f"stdout_matches[{i}]", p) for i, p in enumerate(entry.stdout_matches)]
            elif isinstance(entry, SourceEntry):
                found += [(f"patterns[{i}]", p) for i, p in enumerate(entry.patterns)]
            for suffix, pattern in found:
                if nested_quantifier(pattern):
                    handle.add(
                        "regex_nested_quantifier",
                        *key,
                        clause,
                        index,
                        key=f"{dotted}.{clause}[{index}].{suffix}",
                        pattern=pattern,
                    )


def _lint_commands(handle: LintFile, contract: Contract, key: tuple[str, ...]) -> None:
    for index, entry in enumerate(contract.entries.get("commands", ())):
        if not isinstance(entry, CommandEntry):
            continue
        at: tuple[str | int, ...] = (*key, "commands", index)
        label = f"{'.'.join(key)}.commands[{index}]"
        if entry.legacy:
            handle.add("legacy_shell_command", *at, key=label, command=entry.display())
        wrapped = entry.legacy and _gnu_timeout_bounds(entry.shell or "")
        if entry.timeout_ms is None and not wrapped:
            handle.add(
                "verify_command_without_timeout",
                *at,
                key=label,
                command=entry.display(),
                default=DEFAULT_TIMEOUT_MS,
            )
