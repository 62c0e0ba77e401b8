"""Basic file clauses: ``files_exist``, ``files_absent``, ``contains``, ``matches``.

Entry forms::

    files_exist:  ["a.txt", {path: b.txt, repo: docs}]
    files_absent: ["old.txt"]
    contains:     [{path: a.txt, text: "literal"}]
    matches:      [{path: a.txt, pattern: "^regex$"}]   # MULTILINE, under a deadline

``files_exist`` accepts a file or a directory; a path written with a trailing
slash (``build/``) names a directory, as it does to the operating system: a
regular file ``build`` does not meet ``files_exist: [build/]`` and does not
break ``files_absent: [build/]``. A symbolic link whose target is missing meets
neither: ``files_exist`` finds nothing there, ``files_absent`` finds the link
(each says so). Content is read as UTF-8 with
replacement characters for bad bytes and universal newlines: ``\\r\\n`` and a
lone ``\\r`` read as ``\\n``, so ``$`` matches at the end of a CRLF line and a
pattern or text cannot see a ``\\r`` line ending (``source_absent`` reads lines
the same way); a byte-order mark that starts the file is not part of its text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prompt_runner.verifier import regexes, schema
from prompt_runner.verifier.model import TIMEOUT, ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import locate, shown
from prompt_runner.verifier.registry import ClauseSpec, Parser, per_entry, register
from prompt_runner.verifier.schema import Where


@dataclass(frozen=True, kw_only=True)
class PathEntry(ClauseEntry):
    """A repo-relative ``path``."""

    path: str
    directory: bool = False
    """The path was written with a trailing slash: only a directory is it."""

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"path": f"{self.path}/" if self.directory else self.path}
        if self.repo is not None:
            raw["repo"] = self.repo
        return raw

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        return ((self.repo, self.path),)


@dataclass(frozen=True, kw_only=True)
class TextEntry(PathEntry):
    """``path`` must contain the literal ``text``."""

    text: str

    def to_raw(self) -> dict[str, Any]:
        return {**super().to_raw(), "text": self.text}


@dataclass(frozen=True, kw_only=True)
class PatternEntry(PathEntry):
    """``path`` must match the regex ``pattern``."""

    pattern: str

    def to_raw(self) -> dict[str, Any]:
        return {**super().to_raw(), "pattern": self.pattern}


def parse_path_entries(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
    """Entries that are a bare path or ``{path, repo}``."""
    out: list[ClauseEntry] = []
    for i, value in enumerate(schema.entry_list(raw, where, what="paths")):
        at = where.at(i)
        if isinstance(value, str):
            out.append(PathEntry(path=schema.rel_path(value, at), directory=_dir_form(value)))
            continue
        m = schema.mapping(
            value, at, allowed={"path", "repo"}, required={"path"}, plain=schema.PATH_FORM
        )
        out.append(
            PathEntry(
                path=schema.rel_path(m["path"], at.at("path")),
                repo=schema.repo_name(m, at),
                directory=_dir_form(m["path"]),
            )
        )
    return tuple(out)


def _dir_form(raw: object) -> bool:
    """True when the path as written ends with a slash (``build/``, ``build/.``)."""
    return isinstance(raw, str) and raw.replace("\\", "/").endswith(("/", "/."))


def _path_and(key: str, value_of: Callable[[object, Where], str], entry: type[PathEntry]) -> Parser:
    """The parser of ``[{path, <key>, repo?}]`` entries: ``value_of`` checks the ``key``."""

    def parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
        out: list[ClauseEntry] = []
        for i, value in enumerate(schema.entry_list(raw, where, what=f"{{path, {key}}} mappings")):
            at = where.at(i)
            m = schema.mapping(value, at, allowed={"path", key, "repo"}, required={"path", key})
            path = schema.rel_path(m["path"], at.at("path"))
            checked = value_of(m[key], at.at(key))
            fields: dict[str, Any] = {key: checked}  # the entry type's one own field
            out.append(entry(path=path, repo=schema.repo_name(m, at), **fields))
        return tuple(out)

    return parse


def needs_cr(pattern: str) -> bool:
    """True when every match of ``pattern`` must hold a carriage return (``\\r``).

    Contract text is read with universal newlines (no ``\\r`` is left), so
    such a pattern can never match: a ``matches`` that never passes, or a
    ``source_absent`` that always passes (``\\r$`` meant to forbid CRLF files).
    Read from the pattern's structure as the standard ``re`` parser sees it:
    a ``\\r`` (or ``[\\r]``) the pattern must match (not inside an optional
    part, a wider class or an alternation one branch of which has none).
    ``False`` for anything that parser cannot read.
    """
    if "\r" not in pattern and "\\" not in pattern:
        return False
    try:
        from re import _constants as c  # type: ignore[attr-defined]  # lazy: private, inside the try
        from re import _parser  # type: ignore[attr-defined]  # lazy: private, inside the try

        def required(items: Any) -> bool:
            for op, av in items:
                if (op is c.LITERAL and av == 13) or (op is c.IN and av == [(c.LITERAL, 13)]):
                    return True
                if op is c.SUBPATTERN and required(av[3]):
                    return True
                if op is c.BRANCH and all(required(b) for b in av[1]):
                    return True
                if op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1 and required(av[2]):
                    return True
                if op is getattr(c, "POSSESSIVE_REPEAT", None) and av[0] >= 1 and required(av[2]):
                    return True
                if op is getattr(c, "ATOMIC_GROUP", None) and required(av):
                    return True
            return False

        return required(_parser.parse(pattern, 0))
    except Exception:  # a private parser: any surprise just skips the check
        return False


def no_cr_regex(raw: object, where: Where, *, as_bytes: bool = False) -> str:
    """:func:`schema.regex`, refusing a pattern that :func:`needs_cr` (it cannot match)."""
    text = schema.regex(raw, where, as_bytes=as_bytes)
    if needs_cr(text):
        where.fail(
            "needs a carriage return (\\r), which no checked file holds: files are read with "
            "universal newlines (\\r\\n and \\r read as \\n)",
            "drop the \\r (`$` matches at the end of a CRLF line); to forbid CRLF line ends, "
            "use a `commands:` check such as `git ls-files --eol`",
        )
    return text


def no_cr_text(raw: object, where: Where) -> str:
    """:func:`schema.string`, refusing a literal holding a carriage return (``\\r``).

    Checked files are read with universal newlines (no ``\\r`` is left), so
    such a ``contains`` text could never be found.

    Raises:
        UserError: not a non-empty string, or it holds a ``\\r``.
    """
    text = schema.string(raw, where)
    if "\r" in text:
        where.fail(
            "holds a carriage return (\\r), which no checked file holds: files are read with "
            "universal newlines (\\r\\n and \\r read as \\n)",
            "write the text with \\n line breaks (it then matches a CRLF file too)",
        )
    return text


_parse_text = _path_and("text", no_cr_text, TextEntry)
_parse_pattern = _path_and("pattern", no_cr_regex, PatternEntry)


def _exists(e: PathEntry, ctx: VerifyContext) -> VerifierItem:
    found = locate("files_exist", e.repo, e.path, ctx)
    if isinstance(found, VerifierItem):
        return found
    repo, target = found
    is_dir = target.is_dir()
    ok = is_dir if e.directory else target.exists()
    what = "directory" if is_dir else "file"
    if ok:
        details = f"exists ({what}): {e.path}"
    elif e.directory and target.exists():
        details = (
            f"not a directory: {e.path}/ is a file in repo {repo.name!r} ({repo.root}); "
            "the trailing slash asks for a directory -- create the directory, or drop the slash"
        )
    elif target.is_symlink():
        details = (
            f"missing: {e.path} in repo {repo.name!r} ({repo.root}) is a symbolic link whose "
            "target does not exist; create what it points at, or replace the link"
        )
    else:
        shown_path = f"{e.path}/" if e.directory else e.path
        details = (
            f"missing: {shown_path} does not exist in repo {repo.name!r} ({repo.root}); create it"
        )
    return item("files_exist", passed=ok, repo=repo.name, path=e.path, details=details)


def _absent(e: PathEntry, ctx: VerifyContext) -> VerifierItem:
    found = locate("files_absent", e.repo, e.path, ctx)
    if isinstance(found, VerifierItem):
        return found
    repo, target = found
    present = target.is_dir() if e.directory else target.exists() or target.is_symlink()
    if present and not target.exists():  # the link is there, what it points at is not
        details = (
            f"present but must be absent: {e.path} in repo {repo.name!r} is a symbolic link "
            "(to a missing target); delete the link"
        )
    elif present:
        details = f"present but must be absent: {e.path} in repo {repo.name!r}; delete it"
    else:
        details = f"absent: {e.path}"
    return item("files_absent", passed=not present, repo=repo.name, path=e.path, details=details)


def read_text(
    kind: str, repo: str | None, rel: str, ctx: VerifyContext, *, utf8_only: bool = False
) -> tuple[str, str] | VerifierItem:
    """``(repo name, text)`` of a contained regular file, or the failure item.

    The text is decoded as UTF-8 with universal newlines (``\\r\\n`` and a lone
    ``\\r`` read as ``\\n``, as :func:`open` in text mode). A bad byte reads as
    U+FFFD, or with ``utf8_only`` makes the failure item (``{rel} is not UTF-8
    ...``: a format that must be UTF-8, like JSON). A UTF-8 byte-order mark
    that starts the file is not part of the text (a Windows editor's
    ``\\ufeff`` would hide a first line from ``^``, a section or a marker),
    except with ``utf8_only``: the format judges it (JSON refuses it).
    """
    found = locate(kind, repo, rel, ctx)
    if isinstance(found, VerifierItem):
        return found
    repo_dir, target = found
    if not target.exists():
        return item(
            kind,
            passed=False,
            repo=repo_dir.name,
            path=rel,
            details=f"missing: {rel} does not exist in repo {repo_dir.name!r}; create it",
        )
    if not target.is_file():
        return item(
            kind, passed=False, repo=repo_dir.name, path=rel, details=f"{rel} is not a regular file"
        )
    try:
        if not utf8_only:
            return repo_dir.name, target.read_text(encoding="utf-8-sig", errors="replace")
        text = target.read_bytes().decode("utf-8")
        return repo_dir.name, text.replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start]
        details = f"{rel} is not UTF-8: byte 0x{bad:02x} at offset {exc.start} ({exc.reason})"
        return item(kind, passed=False, repo=repo_dir.name, path=rel, details=details)
    except OSError as exc:
        return item(
            kind, passed=False, repo=repo_dir.name, path=rel, details=f"cannot read {rel}: {exc}"
        )


def _contains(e: TextEntry, ctx: VerifyContext) -> VerifierItem:
    got = read_text("contains", e.repo, e.path, ctx)
    if isinstance(got, VerifierItem):
        return got
    repo, text = got
    ok = e.text in text
    details = (
        f"{e.path} contains {e.text!r}"
        if ok
        else f"text not found: {e.path} does not contain {e.text!r}; add it verbatim"
    )
    return item("contains", passed=ok, repo=repo, path=e.path, details=details)


def _matches(e: PatternEntry, ctx: VerifyContext) -> VerifierItem:
    got = read_text("matches", e.repo, e.path, ctx)
    if isinstance(got, VerifierItem):
        return got
    repo, text = got
    try:
        hit = regexes.search(e.pattern, text)
    except regexes.RegexTimeout as exc:
        details = exc.details(f"{e.path} in repo {repo!r}")
        return item(
            "matches", passed=False, verdict=TIMEOUT, repo=repo, path=e.path, details=details
        )
    if hit:
        line = text.count("\n", 0, hit.start()) + 1
        details = f"{e.path} matches /{e.pattern}/ at line {line}"
    else:
        details = f"pattern not found: {e.path} has no match for /{e.pattern}/"
    return item("matches", passed=hit is not None, repo=repo, path=e.path, details=details)


_check_exist = per_entry(PathEntry, _exists)
_check_absent = per_entry(PathEntry, _absent)
_check_contains = per_entry(TextEntry, _contains)
_check_matches = per_entry(PatternEntry, _matches)


def _label(prefix: str) -> Any:
    def label(entry: ClauseEntry, default_repo: str | None) -> str:
        assert isinstance(entry, PathEntry)
        path = f"{entry.path}/" if entry.directory else entry.path
        return f"{prefix}: {shown(entry.repo, path, default_repo)}"

    return label


register(
    ClauseSpec(
        "files_exist",
        10,
        parse_path_entries,
        _check_exist,
        _label("file exists"),
        names_outputs=True,
    )
)
register(
    ClauseSpec(
        "files_absent",
        20,
        parse_path_entries,
        _check_absent,
        _label("file absent"),
        names_outputs=True,
    )
)
register(
    ClauseSpec("contains", 30, _parse_text, _check_contains, _label("contains"), names_outputs=True)
)
register(
    ClauseSpec("matches", 40, _parse_pattern, _check_matches, _label("matches"), names_outputs=True)
)
