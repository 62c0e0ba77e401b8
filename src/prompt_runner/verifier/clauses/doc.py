"""The ``doc`` clause: a written document is real, not a stub.

Entry forms: ``"docs/report.md"`` or ``{path, repo, min_lines, requires_sections,
forbids_markers}``.

* The document must exist and have at least one non-blank line.
* ``min_lines`` (default 1) is **advisory**: fewer non-blank lines still pass,
  with ``below_recommendation`` set and said in ``details``.
* ``requires_sections``: each string must appear verbatim as a whole line
  (surrounding whitespace ignored), e.g. ``"## Verdict"``.
* ``forbids_markers`` (default :data:`DEFAULT_MARKERS`; ``[]`` disables; a list
  replaces the defaults): a marker counts only at the start of a line,
  optionally after indentation, a list bullet (``-``, ``*``, ``+``, ``1.``), a
  quote ``>`` or heading ``#``\\ s, and must not run into a following letter or
  digit (``TODO:`` and ``TODO write`` count, ``TODOS`` does not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_runner.verifier import schema
from prompt_runner.verifier.clauses.files import read_text
from prompt_runner.verifier.model import ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import shown
from prompt_runner.verifier.registry import ClauseSpec, per_entry, register
from prompt_runner.verifier.schema import Where

KIND = "doc"
DEFAULT_MARKERS = (
    "TODO",
    "TBD",
    "FIXME",
    "XXX",
    "PLACEHOLDER",
    "<fill in>",
    "LOREM",
    "Lorem ipsum",
)
_LEAD = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+|>\s*|#+\s*)?")


@dataclass(frozen=True, kw_only=True)
class DocEntry(ClauseEntry):
    """One document check (see the module notes)."""

    path: str
    min_lines: int = 1
    requires_sections: tuple[str, ...] = ()
    forbids_markers: tuple[str, ...] | None = None

    @property
    def markers(self) -> tuple[str, ...]:
        """The effective marker list."""
        return DEFAULT_MARKERS if self.forbids_markers is None else self.forbids_markers

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"path": self.path, "min_lines": self.min_lines}
        if self.repo is not None:
            raw["repo"] = self.repo
        if self.requires_sections:
            raw["requires_sections"] = list(self.requires_sections)
        if self.forbids_markers is not None:
            raw["forbids_markers"] = list(self.forbids_markers)
        return raw

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        return ((self.repo, self.path),)


def _parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
    out: list[ClauseEntry] = []
    for i, value in enumerate(schema.entry_list(raw, where, what="documents")):
        at = where.at(i)
        if isinstance(value, str):
            out.append(DocEntry(path=schema.rel_path(value, at)))
            continue
        m = schema.mapping(
            value,
            at,
            allowed={"path", "repo", "min_lines", "requires_sections", "forbids_markers"},
            required={"path"},
            plain=schema.PATH_FORM,
        )
        markers = m.get("forbids_markers")
        out.append(
            DocEntry(
                path=schema.rel_path(m["path"], at.at("path")),
                repo=schema.repo_name(m, at),
                min_lines=schema.integer(m, "min_lines", at, minimum=1) or 1,
                requires_sections=_one_line(
                    schema.string_list(m.get("requires_sections"), at.at("requires_sections")),
                    at.at("requires_sections"),
                    strip=True,
                ),
                forbids_markers=None
                if markers is None
                else _one_line(
                    schema.string_list(markers, at.at("forbids_markers")),
                    at.at("forbids_markers"),
                ),
            )
        )
    return tuple(out)


def _one_line(values: tuple[str, ...], where: Where, *, strip: bool = False) -> tuple[str, ...]:
    """``values``, refusing one with a line break (``\\n`` or ``\\r``; with ``strip``,
    past its surrounding whitespace): a document is matched line by line, with
    universal newlines, so such a section is never found and such a marker never
    seen (a ``forbids_markers`` that always passes)."""
    for i, value in enumerate(values):
        if any(c in (value.strip() if strip else value) for c in "\r\n"):
            where.at(i).fail(
                "holds a line break (\\n or \\r), but a document is matched one line at a time",
                "write one line per entry (split it into several entries)",
            )
    return values


def find_markers(lines: Sequence[str], markers: Sequence[str]) -> list[dict[str, Any]]:
    """``[{"marker", "line"}]`` for each line starting with a marker (1-based lines)."""
    hits: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        lead = _LEAD.match(line)
        rest = line[lead.end() :] if lead else line
        for marker in markers:
            if not rest.startswith(marker):
                continue
            after = rest[len(marker) : len(marker) + 1]
            if marker[-1:].isalnum() and after.isalnum():
                continue
            hits.append({"marker": marker, "line": number})
            break
    return hits


def _check_one(e: DocEntry, ctx: VerifyContext) -> VerifierItem:
    facts: dict[str, Any] = {"lines": 0, "min_lines": e.min_lines}
    got = read_text(KIND, e.repo, e.path, ctx)
    if isinstance(got, VerifierItem):
        return item(
            KIND,
            passed=False,
            repo=got.repo,
            path=e.path,
            details=f"{got.details} (lines=0)",
            **{**got.extra, **facts},
        )
    repo, text = got
    root = Path(ctx.repos[repo])
    lines = text.splitlines()
    count = sum(1 for ln in lines if ln.strip())
    stripped = {ln.strip() for ln in lines}
    missing = [s for s in e.requires_sections if s.strip() not in stripped]
    markers = find_markers(lines, e.markers)
    facts = {
        "lines": count,
        "min_lines": e.min_lines,
        "below_recommendation": count < e.min_lines,
        "missing_sections": missing,
        "markers": markers,
        "resolved_path": str(root / e.path),
    }
    problems: list[str] = []
    if count == 0:
        problems.append(f"document is blank: {e.path} has no non-blank lines; write it")
    if missing:
        problems.append("missing sections: " + ", ".join(missing))
    if markers:
        found = ", ".join(f"{m['marker']} (line {m['line']})" for m in markers)
        problems.append(f"forbidden markers: {found}; finish those parts")
    if problems:
        return item(
            KIND, passed=False, repo=repo, path=e.path, details="; ".join(problems), **facts
        )
    details = f"ok: {count} non-blank lines"
    if count < e.min_lines:
        details += f" (below the advisory min_lines {e.min_lines})"
    return item(KIND, passed=True, repo=repo, path=e.path, details=details, **facts)


_check = per_entry(DocEntry, _check_one)


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, DocEntry)
    where = shown(entry.repo, entry.path, default_repo)
    return f"doc: {where} (non-blank; {entry.min_lines} lines advisory)"


register(ClauseSpec(KIND, 50, _parse, _check, _label, names_outputs=True))
