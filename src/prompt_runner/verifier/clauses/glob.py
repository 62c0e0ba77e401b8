"""The ``glob`` clause: an artifact set exists, with a count in bounds.

Entry forms: ``"artifacts/*.txt"`` or ``{pattern | path, repo, min | min_matches,
max | max_matches, non_empty}``. ``min`` defaults to 1, or to 0 when only
``max: 0`` is given (``{pattern: "*.log", max: 0}``: no such file may exist);
an explicit ``min`` above ``max`` is a load error. ``non_empty: true``
requires every matched file to have a size above zero. Only files match
(directories do not); ``.git`` is never searched and directory symlinks are
not followed. Pattern syntax: :mod:`prompt_runner.verifier.globs`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prompt_runner.verifier import schema
from prompt_runner.verifier.globs import compile_glob, is_pattern, literal_prefix, walk_files
from prompt_runner.verifier.model import ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import repo_for, shown
from prompt_runner.verifier.registry import ClauseSpec, per_entry, register
from prompt_runner.verifier.schema import Where

KIND = "glob"
_SHOW = 20


@dataclass(frozen=True, kw_only=True)
class GlobEntry(ClauseEntry):
    """A glob pattern with count bounds."""

    pattern: str
    min: int = 1
    max: int | None = None
    non_empty: bool = False

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"pattern": self.pattern, "min": self.min}
        if self.repo is not None:
            raw["repo"] = self.repo
        if self.max is not None:
            raw["max"] = self.max
        if self.non_empty:
            raw["non_empty"] = True
        return raw

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        prefix = literal_prefix(self.pattern) if is_pattern(self.pattern) else self.pattern
        return ((self.repo, prefix),) if prefix else ()

    def written_paths(self) -> tuple[str, ...]:
        return (self.pattern,)


def _pick(m: dict[str, Any], keys: tuple[str, str], where: Where) -> int | None:
    if keys[0] in m and keys[1] in m:
        where.at(keys[1]).fail(f"duplicates `{keys[0]}`", f"keep only `{keys[0]}`")
    key = keys[0] if keys[0] in m else keys[1]
    return schema.integer(m, key, where, minimum=0)


def _parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
    out: list[ClauseEntry] = []
    for i, value in enumerate(schema.entry_list(raw, where, what="glob patterns")):
        at = where.at(i)
        if isinstance(value, str):
            out.append(GlobEntry(pattern=schema.rel_path(value, at)))
            continue
        m = schema.mapping(
            value,
            at,
            allowed={
                "pattern",
                "path",
                "repo",
                "min",
                "min_matches",
                "max",
                "max_matches",
                "non_empty",
            },
            plain=("a glob pattern string", "pattern"),
        )
        if ("pattern" in m) == ("path" in m):
            at.at("pattern").fail(
                "is required (exactly one of `pattern` or `path`)", "add `pattern:`"
            )
        key = "pattern" if "pattern" in m else "path"
        low = _pick(m, ("min", "min_matches"), at)
        high = _pick(m, ("max", "max_matches"), at)
        if high is not None and low is not None and high < low:
            at.at("max").fail(f"is below min ({high} < {low})", "raise max or lower min")
        out.append(
            GlobEntry(
                pattern=schema.rel_path(m[key], at.at(key)),
                repo=schema.repo_name(m, at),
                min=low if low is not None else min(1, 1 if high is None else high),
                max=high,
                non_empty=schema.boolean(m, "non_empty", at),
            )
        )
    return tuple(out)


def _listed(paths: Sequence[str]) -> str:
    more = len(paths) - _SHOW
    return ", ".join(paths[:_SHOW]) + (f" (+{more} more)" if more > 0 else "")


def _check_one(e: GlobEntry, ctx: VerifyContext) -> VerifierItem:
    found = repo_for(KIND, e.repo, ctx, path=e.pattern)
    if isinstance(found, VerifierItem):
        return found
    rx = compile_glob(e.pattern)
    start = literal_prefix(e.pattern) if is_pattern(e.pattern) else os.path.dirname(e.pattern)
    hits = sorted(p for p in walk_files(found.root, start) if rx.match(p))
    bounds = f"min {e.min}" + (f", max {e.max}" if e.max is not None else "")
    facts: dict[str, Any] = {"count": len(hits), "matches": hits[:100], "min": e.min, "max": e.max}
    problems: list[str] = []
    if len(hits) < e.min:
        problems.append(f"{len(hits)} file(s) match {e.pattern}, need at least {e.min}")
    if e.max is not None and len(hits) > e.max:
        problems.append(f"{len(hits)} files match {e.pattern}, more than max {e.max}")
    if e.non_empty:
        empty = [p for p in hits if (found.root / p).stat().st_size == 0]
        facts["empty"] = empty
        if empty:
            problems.append(f"empty files: {_listed(empty)}")
    if problems:
        return item(
            KIND,
            passed=False,
            repo=found.name,
            path=e.pattern,
            details="; ".join(problems),
            **facts,
        )
    details = f"{len(hits)} file(s) match {e.pattern} ({bounds})"
    if hits:
        details += f": {_listed(hits)}"
    return item(KIND, passed=True, repo=found.name, path=e.pattern, details=details, **facts)


_check = per_entry(GlobEntry, _check_one)


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, GlobEntry)
    bounds = ", ".join(
        ([f"at least {entry.min}"] if entry.min or entry.max is None else [])
        + ([f"at most {entry.max}"] if entry.max is not None else [])
    )
    extra = ", non-empty" if entry.non_empty else ""
    return f"glob: {shown(entry.repo, entry.pattern, default_repo)} ({bounds}{extra})"


register(ClauseSpec(KIND, 80, _parse, _check, _label, names_outputs=True))
