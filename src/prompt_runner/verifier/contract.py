"""Loading a ``verify:`` block into a :class:`Contract`, and load-time path checks."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from prompt_runner.errors import UserError
from prompt_runner.verifier import registry
from prompt_runner.verifier.model import ClauseEntry, Contract
from prompt_runner.verifier.paths import refusal_below
from prompt_runner.verifier.schema import Where

PACKET_REPO = "packet"


def contract_keys() -> tuple[str, ...]:
    """Registered clause names in evaluation order (lint and checklist read this list)."""
    return registry.names()


def structural_clauses() -> frozenset[str]:
    """Clauses an agent-owned prompt may use (every clause but ``commands``)."""
    return registry.structural_names()


def parse_contract(raw: object, *, file: str, key: str = "verify") -> Contract:
    """Validate a ``verify:`` mapping into a :class:`Contract`.

    Args:
        raw: the YAML value (``None`` or ``{}`` = the empty contract).
        file: the file it came from (named in errors).
        key: its key path in that file.

    Raises:
        UserError: an unknown clause, a wrong type, a missing or unknown key in
            an entry, or a path that is absolute or contains ``..``; the message
            names ``file``, the full key path and the fix.
    """
    if raw is None:
        return Contract({})
    where = Where(file, key)
    known = contract_keys()
    if not isinstance(raw, dict):
        where.fail("must be a mapping of clause names", f"use clauses from: {', '.join(known)}")
    for name in raw:
        if name not in known:
            where.at(str(name)).fail(
                f"unknown verify clause {name!r}", f"use one of: {', '.join(known)}"
            )
    entries: dict[str, tuple[ClauseEntry, ...]] = {}
    for name in known:
        if name in raw:
            spec = registry.get(name)
            assert spec is not None  # every name of registry.names() is registered
            parsed = spec.parse(raw[name], where.at(name))
            if parsed:
                entries[name] = parsed
    return Contract(entries)


def check_contract_paths(
    contract: Contract,
    *,
    repos: Mapping[str, Path],
    default_repo: str | None,
    file: str,
    real_roots: dict[str, str | None] | None = None,
) -> None:
    """Load-time containment: every repo name is known, no path escapes through a symlink
    or lies in a git directory (:func:`prompt_runner.verifier.paths.refusal`).

    Args:
        contract: a parsed contract.
        repos: logical repo name -> directory (``packet`` is always accepted).
        default_repo: the prompt's first target.
        file: the prompt file (named in errors).
        real_roots: a memo shared by the calls of one packet load: repo
            directory (its text) -> its real path (``None``: not a directory), so each is
            looked up once, not once per path.

    Raises:
        UserError: an entry names an unknown repo, a path resolves outside
            its repo through an existing symlink, or it lies in a git directory.
    """
    known = sorted(set(repos) | {PACKET_REPO})
    for clause, clause_entries in contract.entries.items():
        for i, entry in enumerate(clause_entries):
            where = Where(file, f"verify.{clause}[{i}]")
            for name in entry.repo_refs():
                if name not in repos and name != PACKET_REPO:
                    where.at("repo").fail(
                        f"unknown repo {name!r}", f"use one of: {', '.join(known)}"
                    )
            entry_repo = entry.repo if entry.repo is not None else default_repo
            entry_root = repos.get(entry_repo) if entry_repo is not None else None
            if entry_root is not None:
                key = "pattern" if clause == "glob" else "path"
                for written in entry.written_paths():
                    _refuse_qualified(written, entry_repo, entry_root, known, file, where, key)
            for repo, rel in entry.path_refs():
                target_repo = repo if repo is not None else default_repo
                root = repos.get(target_repo) if target_repo is not None else None
                if root is None:
                    continue
                real_root = _real_dir(root, real_roots)
                if real_root is None:
                    continue
                why = refusal_below(real_root, root, rel)
                if why is not None:
                    raise UserError(
                        f"path {rel!r} {why.replace('the repo', f'repo {target_repo!r}', 1)}",
                        file=file,
                        key=where.key,
                        fix="point it at a real path of the repo's work tree",
                    )


def _real_dir(root: Path, memo: dict[str, str | None] | None) -> str | None:
    """The real path of ``root`` when it is a directory, else ``None`` (remembered in
    ``memo``, by the path's text)."""
    key = os.fspath(root)
    if memo is not None and key in memo:
        return memo[key]
    real = os.path.realpath(key) if os.path.isdir(key) else None
    if memo is not None:
        memo[key] = real
    return real


def _refuse_qualified(
    rel: str,
    target_repo: str | None,
    root: Path,
    known: list[str],
    file: str,
    where: Where,
    key: str = "path",
) -> None:
    """Refuse a path written ``REPO:PATH`` where ``REPO`` is a repo of the packet.

    That is how a checklist item and a verifier label show a path of another
    repo (``alpha:NOTES.md``), but a contract path is always relative to its
    entry's repo, so it would be read as a file named ``alpha:NOTES.md`` in
    ``target_repo`` -- a check that can never pass (or, in ``files_absent``,
    never fail). A file of exactly that name that exists is left alone.

    Raises:
        UserError: naming the entry, what the path would be read as, and the
            ``{KEY: ..., repo: ...}`` form to write (``key``: ``path``, or a
            glob's ``pattern``).
    """
    head, sep, tail = rel.partition(":")
    if not sep or "/" in head or head not in known or not tail:
        return
    if os.path.lexists(os.path.join(root, rel)):
        return
    raise UserError(
        f"path {rel!r} is read as a file named {rel!r} in repo {target_repo!r}, not "
        f"{tail!r} in repo {head!r} (REPO:PATH is how a checklist shows a path, not how "
        "a contract names one)",
        file=file,
        key=where.key,
        fix=f"write it as {{{key}: {_yaml_scalar(tail)}, repo: {head}}}",
    )


def _yaml_scalar(text: str) -> str:
    """``text`` as a YAML flow scalar: bare when it is a plain path (``b.txt``),
    else double-quoted (``"*.txt"``: a bare ``*`` starts a YAML alias)."""
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./-]*", text):
        return text
    return json.dumps(text, ensure_ascii=False)
