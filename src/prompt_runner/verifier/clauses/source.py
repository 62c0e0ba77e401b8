"""The ``source_absent`` clause: forbidden patterns are gone from the source.

Entry: ``{pattern | patterns, path | paths, extensions, prune, repo}``.

* ``pattern(s)``: regular expressions (Python syntax, run by
  :mod:`prompt_runner.verifier.regexes` under a deadline per file: expiry is
  ``verifier_timeout``), searched per file with ``MULTILINE`` (``^``/``$``
  match at line boundaries); a file is searched as bytes (UTF-8 patterns), so
  ``\\w`` and friends are ASCII-only. Lines are read with universal newlines,
  as ``matches`` and ``contains`` read them: ``\\r\\n`` and a lone ``\\r`` are
  searched as ``\\n``, so ``$`` matches at the end of a CRLF line (and no
  pattern sees a ``\\r`` line ending).
* ``path(s)``: files, directories (searched recursively) or globs; default the
  repo root. A named file or directory that does not exist is a failure (the
  check would be vacuous), and so is a path that leaves no file to search (a
  glob matching nothing, an empty directory, no file with one of the
  ``extensions``): a check that reads nothing cannot show a pattern absent.
* ``extensions``: only files ending with one of these (``[".ex", ".exs"]``),
  compared case-sensitively.
* ``prune``: more entry names (directories or files) skipped wherever they
  occur below a searched directory, on top of :data:`DEFAULT_PRUNE`, the
  reference system's own list (``.git _build deps node_modules .elixir_ls
  cover``). A path named in ``path(s)`` is searched even when its name is
  pruned.

Directory symlinks are not followed. A UTF-8 byte-order mark that starts a
file is not searched (``^`` matches at the start of the text after it). Every
hit is reported as ``path:line: text``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_runner.verifier import regexes, schema
from prompt_runner.verifier.clauses.files import no_cr_regex
from prompt_runner.verifier.globs import compile_glob, is_pattern, literal_prefix, walk_files
from prompt_runner.verifier.model import TIMEOUT, ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import RepoDir, inside, repo_for, shown
from prompt_runner.verifier.registry import ClauseSpec, per_entry, register
from prompt_runner.verifier.schema import Where

KIND = "source_absent"
MAX_HITS = 50
DEFAULT_PRUNE = frozenset({".git", "_build", "deps", "node_modules", ".elixir_ls", "cover"})
"""Entries ``source_absent`` never searches below a directory (as the reference system)."""


@dataclass(frozen=True, kw_only=True)
class SourceEntry(ClauseEntry):
    """Patterns that must not occur under paths."""

    patterns: tuple[str, ...]
    paths: tuple[str, ...] = (".",)
    extensions: tuple[str, ...] = ()
    prune: tuple[str, ...] = ()

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"patterns": list(self.patterns), "paths": list(self.paths)}
        if self.repo is not None:
            raw["repo"] = self.repo
        if self.extensions:
            raw["extensions"] = list(self.extensions)
        if self.prune:
            raw["prune"] = list(self.prune)
        return raw

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        refs = [literal_prefix(p) if is_pattern(p) else p for p in self.paths]
        return tuple((self.repo, r) for r in refs if r and r != ".")

    def written_paths(self) -> tuple[str, ...]:
        return self.paths


def _one_of(
    m: dict[str, Any], keys: tuple[str, str], where: Where, *, required: bool
) -> tuple[str, ...]:
    if keys[0] in m and keys[1] in m:
        where.at(keys[1]).fail(f"duplicates `{keys[0]}`", f"merge them into `{keys[1]}`")
    key = keys[0] if keys[0] in m else keys[1]
    values = schema.string_list(m.get(key), where.at(key))
    if required and not values:
        where.at(keys[1]).fail("is required", f"add `{keys[1]}:` with at least one regex")
    return values


def _parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
    out: list[ClauseEntry] = []
    for i, value in enumerate(schema.entry_list(raw, where, what="{patterns, paths} mappings")):
        at = where.at(i)
        m = schema.mapping(
            value,
            at,
            allowed={"pattern", "patterns", "path", "paths", "extensions", "prune", "repo"},
        )
        patterns = _one_of(m, ("pattern", "patterns"), at, required=True)
        key = "patterns" if "patterns" in m else "pattern"
        for j, p in enumerate(patterns):
            pat_at = at.at(key).at(j) if key == "patterns" else at.at(key)
            no_cr_regex(p, pat_at, as_bytes=True)
        pkey = "paths" if "paths" in m else "path"
        paths = tuple(
            schema.rel_path(p, at.at(pkey), allow_dot=True)
            for p in _one_of(m, ("path", "paths"), at, required=False)
        )
        prune = schema.string_list(m.get("prune"), at.at("prune"))
        for j, name in enumerate(prune):
            if not name.strip() or "/" in name or name in (".", ".."):
                at.at("prune").at(j).fail(
                    f"{name!r} is not an entry name", "write directory or file names, e.g. vendor"
                )
        out.append(
            SourceEntry(
                patterns=patterns,
                paths=paths or (".",),
                extensions=schema.string_list(m.get("extensions"), at.at("extensions")),
                prune=prune,
                repo=schema.repo_name(m, at),
            )
        )
    return tuple(out)


Prefilter = tuple[tuple[bytes, bool], ...]
"""Literals, one of which every match holds: ``(literal, folded)``; a folded one is
lower case and is looked for in the lower-cased text (ASCII, as bytes patterns fold)."""

_QUANTIFIER = re.compile(rb"\{[0-9]*(,[0-9]*)?\}")


def prefilter_literals(pattern: str) -> Prefilter | None:
    """Literals of which every match of ``pattern`` must contain one, or ``None``.

    The fast ``bytes in`` prefilter of :func:`scan`: a file holding none of
    them cannot match, so it never reaches the regex engine. Found in the
    pattern's structure as the standard ``re`` parser reads it (as UTF-8
    bytes, the way the clause compiles it): the longest literal run of a
    sequence, or of a group or a repeat it must match at least once, or one
    literal per alternative of an alternation (``a|b``); under ``(?i)`` the
    literals are lower-cased (bytes patterns fold ASCII only, like
    ``bytes.lower``). ``None`` (no prefilter, the same result, only slower)
    whenever a literal of two bytes cannot be had for every alternative, and
    for syntax the two engines may read differently: verbose and locale
    patterns, POSIX classes (``[[:alpha:]]``), braces other than a plain
    ``{m,n}`` repeat (``regex``'s fuzzy ``{e<=1}``), and anything ``re``
    cannot parse.
    """
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser  # type: ignore[attr-defined]

        raw = pattern.encode()
        if b"[:" in raw or b"[=" in raw or b"[." in raw:
            return None
        if raw.count(b"{") != len(_QUANTIFIER.findall(raw)):
            return None
        parsed = _parser.parse(raw, re.MULTILINE)
        flags = parsed.state.flags
        if flags & (re.VERBOSE | re.LOCALE):
            return None
        repeats = (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT))

        def required(items: Any, fold: bool) -> Prefilter | None:
            found: list[Prefilter] = []
            run: list[int] = []

            def close_run() -> None:
                if len(run) >= 2:
                    lit = bytes(run)
                    found.append(((lit.lower(), True) if fold else (lit, False),))
                run.clear()

            for op, av in items:
                if op is c.LITERAL:
                    run.append(av)
                    continue
                close_run()
                sub: Prefilter | None = None
                if op is c.SUBPATTERN:
                    _group, add, remove, body = av
                    inner = (fold or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
                    sub = required(body, inner)
                elif op is c.BRANCH:
                    alternatives = [required(b, fold) for b in av[1]]
                    if all(alternatives):
                        sub = tuple(x for a in alternatives if a for x in a)
                elif op in repeats and av[0] >= 1:
                    sub = required(av[2], fold)
                elif op is getattr(c, "ATOMIC_GROUP", None):
                    sub = required(av, fold)
                if sub:
                    found.append(sub)
            close_run()
            if not found:
                return None
            return max(found, key=lambda f: (-len(f), min(len(lit) for lit, _ in f)))

        return required(parsed, bool(flags & re.IGNORECASE))
    except Exception:  # a private parser: any surprise just disables the prefilter
        return None


_BOM = b"\xef\xbb\xbf"
# O_NONBLOCK: a FIFO named as a path reads as empty instead of waiting for a
# writer; it changes nothing for a regular file.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _universal_newlines(data: bytes) -> bytes:
    """``data`` with ``\\r\\n`` and then a lone ``\\r`` as ``\\n`` (text mode's reading)."""
    data = data.replace(b"\r\n", b"\n")
    return data.replace(b"\r", b"\n") if b"\r" in data else data


class _Reader:
    """Whole-file reads of paths relative to one root, in as few system calls as can be.

    A context manager giving ``read(rel) -> bytes | None`` (``None`` for a file
    that cannot be opened or read, which the scan skips as before). Files are
    opened relative to a descriptor of the root where the platform allows it
    (``dir_fd``), so the kernel walks only the relative part of each path, and
    read with :func:`os.read` straight into a ``bytes`` object: no buffered
    file object per file. A read that returns data is followed by another
    until one returns nothing, so a short read never truncates a file.
    """

    CHUNK = 65536
    """Bytes asked for by each :func:`os.read`."""

    def __init__(self, root: Path) -> None:
        self._base = str(root)
        self._dir_fd: int | None = None

    def __enter__(self) -> Callable[[str], bytes | None]:
        if os.open in os.supports_dir_fd:
            try:
                self._dir_fd = os.open(self._base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            except OSError:
                self._dir_fd = None
        return self.__call__

    def __exit__(self, *exc: object) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None

    def __call__(self, rel: str) -> bytes | None:
        try:
            if self._dir_fd is not None:
                fd = os.open(rel, _READ_FLAGS, dir_fd=self._dir_fd)
            else:
                fd = os.open(os.path.join(self._base, rel), _READ_FLAGS)
        except OSError:
            return None
        try:
            first = os.read(fd, self.CHUNK)
            if not first:
                return first
            more = os.read(fd, self.CHUNK)
            if not more:  # the common case: the file in one read, then its end
                return first
            parts = [first, more]
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)
        return b"".join(parts)


def scan(root: Path, files: Sequence[str], patterns: Sequence[str]) -> list[tuple[str, int, str]]:
    """``(path, line, text)`` of up to :data:`MAX_HITS` matches of ``patterns`` in ``files``.

    Each file's search runs under :func:`prompt_runner.verifier.regexes.timeout_s`,
    on its bytes with universal newlines (``\\r\\n`` and a lone ``\\r`` as
    ``\\n``); a hit's line number counts those line breaks.

    Raises:
        RegexTimeout: a pattern ran past its deadline on a file (its path is
            in the exception's ``path`` attribute).
    """
    in_text = {p for p in patterns if folds_beyond_ascii(p)}
    # a folded literal is looked for with ASCII folding: none for a pattern searched as text
    each = [None if p in in_text else prefilter_literals(p) for p in patterns]
    prefilter = [x for f in each if f for x in f] if all(each) else []
    plain = [lit for lit, folded in prefilter if not folded]
    folded = [lit for lit, was_folded in prefilter if was_folded]
    # A literal without CR or LF is in a file's raw bytes exactly when it is in
    # their universal-newline form, so only a file that passes the prefilter
    # (or any file, for a literal holding a line break) pays for the rewrite.
    early = any(b"\r" in lit or b"\n" in lit for lit, _ in prefilter)
    # A folded literal is looked for by the regex engine's case-insensitive
    # literal search (ASCII folding for bytes, as ``bytes.lower``), which
    # costs about what a plain ``in`` does, where lower-casing every file
    # first would cost twice that.
    folded_search = [regexes.compiled_literal(lit).search for lit in folded]
    hits: list[tuple[str, int, str]] = []
    with _Reader(root) as read:
        for rel in files:
            data = read(rel)
            if data is None:
                continue
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
            if early and b"\r" in data:
                data = _universal_newlines(data)
            if prefilter:  # loops, not any() over generators: this runs once a file
                for lit in plain:
                    if lit in data:
                        break
                else:
                    for search in folded_search:
                        if search(data):
                            break
                    else:
                        continue
            if not early and b"\r" in data:
                data = _universal_newlines(data)
            try:
                found = sorted(_match_offsets(patterns, in_text, data))
            except regexes.RegexTimeout as exc:
                exc.path = rel
                raise
            last_line = -1
            for offset in found:
                start = data.rfind(b"\n", 0, offset) + 1
                if start == last_line:
                    continue  # one hit a line, however many matches it holds
                last_line = start
                end = data.find(b"\n", offset)
                line = data[start : end if end != -1 else len(data)].decode("utf-8", "replace")
                hits.append((rel, data.count(b"\n", 0, offset) + 1, line.strip()[:200]))
                if len(hits) >= MAX_HITS:
                    return hits
    return hits


_INLINE_IGNORECASE = re.compile(r"\(\?[a-zA-Z]*i")


def folds_beyond_ascii(pattern: str) -> bool:
    """Whether ``pattern`` is case-insensitive (an inline ``(?i`` flag, global or
    scoped) and holds a non-ASCII character, as ``(?i)café`` does.

    Searched as UTF-8 bytes, a pattern folds ASCII letters only, so ``(?i)café``
    would miss ``CAFÉ``; :func:`scan` searches such a pattern in the file's
    text instead (decoded as UTF-8), with Unicode case folding, as ``matches``
    does. The test is on the pattern's text, so an escaped ``\\(?i`` counts
    too: that only means a text search, with the same verdict.
    """
    return not pattern.isascii() and _INLINE_IGNORECASE.search(pattern) is not None


def _match_offsets(patterns: Sequence[str], in_text: set[str], data: bytes) -> Iterator[int]:
    """The byte offsets in ``data`` where the matches of ``patterns`` start, up
    to :data:`MAX_HITS` a pattern; those in ``in_text`` are searched in the
    UTF-8 text of ``data`` (bytes that are not UTF-8 kept as surrogates, so
    every offset maps back exactly)."""
    text: str | None = None
    for p in patterns:
        if p not in in_text:
            yield from (m.start() for m in regexes.find_all(p, data, MAX_HITS))
            continue
        if text is None:
            text = data.decode("utf-8", "surrogateescape")
        for m in regexes.find_all(p, text, MAX_HITS):
            yield len(text[: m.start()].encode("utf-8", "surrogateescape"))


def _files(repo: RepoDir, spec: str, missing: list[str], prune: frozenset[str]) -> Iterator[str]:
    def kept(walked: Iterator[str]) -> Iterator[str]:
        return (p for p in walked if p.rsplit("/", 1)[-1] not in prune)

    if is_pattern(spec):
        rx = compile_glob(spec)
        walked = walk_files(repo.root, literal_prefix(spec), skip=prune)
        yield from (p for p in kept(walked) if rx.match(p))
        return
    target = inside(repo.root, spec) if spec != "." else repo.root
    if target is None or not target.exists():
        missing.append(spec if target is not None else f"{spec} (escapes the repo)")
    elif target.is_dir():
        yield from kept(walk_files(repo.root, "" if spec == "." else spec, skip=prune))
    else:
        yield spec


def _nothing_in(repo: RepoDir, spec: str, listed: list[str], extensions: Sequence[str]) -> str:
    """Why the path ``spec`` gave no file to search (``listed``: its files before the
    ``extensions`` filter), or ``""`` when it does not exist (``missing`` says so)."""
    if listed:
        wanted = " or ".join(extensions)
        near = [r for r in listed if r.lower().endswith(tuple(x.lower() for x in extensions))]
        case = (
            f" ({near[0]} differs only in case: extensions match case-sensitively)" if near else ""
        )
        if len(listed) == 1 and listed[0] == spec:
            return f"{spec} does not end with {wanted}{case}"
        return f"{spec} holds {len(listed)} file(s), none ending with {wanted}{case}"
    if is_pattern(spec):
        return f"{spec} matches no file"
    target = inside(repo.root, spec) if spec != "." else repo.root
    if target is None or not target.exists():
        return ""
    return f"{spec} holds no file to search (pruned names and directory symlinks are skipped)"


def _check_one(e: SourceEntry, ctx: VerifyContext) -> VerifierItem:
    found = repo_for(KIND, e.repo, ctx, path=", ".join(e.paths))
    if isinstance(found, VerifierItem):
        return found
    missing: list[str] = []
    seen: dict[str, None] = {}
    prune = DEFAULT_PRUNE | set(e.prune)
    empty: list[tuple[str, str]] = []  # (path, why it gave no file to search)
    for spec in e.paths:
        candidates: list[str] = []
        kept = 0
        for rel in _files(found, spec, missing, prune):
            candidates.append(rel)
            if not e.extensions or rel.endswith(e.extensions):
                seen.setdefault(rel)
                kept += 1
        if not kept and (why := _nothing_in(found, spec, candidates, e.extensions)):
            empty.append((spec, why))
    shown_paths = ", ".join(e.paths)
    if missing:
        return item(
            KIND,
            passed=False,
            repo=found.name,
            path=shown_paths,
            details=f"missing: {', '.join(missing)} does not exist in repo {found.name!r}; "
            "the check would be vacuous -- fix `path:` or create it",
            missing_paths=missing,
        )
    if empty:
        return item(
            KIND,
            passed=False,
            repo=found.name,
            path=shown_paths,
            details=f"nothing scanned: {'; '.join(why for _, why in empty)} in repo "
            f"{found.name!r} -- a check that reads no file cannot show the pattern absent; "
            "fix `paths:` or `extensions:` to name the files to search",
            files_scanned=len(seen),
            unscanned_paths=[spec for spec, _ in empty],
        )
    try:
        hits = scan(found.root, list(seen), e.patterns)
    except regexes.RegexTimeout as exc:
        return item(
            KIND,
            passed=False,
            verdict=TIMEOUT,
            repo=found.name,
            path=shown_paths,
            details=exc.details(f"{exc.path} in repo {found.name!r}"),
            regex_timeout_s=exc.seconds,
        )
    pats = ", ".join(f"/{p}/" for p in e.patterns)
    facts: dict[str, Any] = {
        "files_scanned": len(seen),
        "hits": [{"path": p, "line": n, "text": t} for p, n, t in hits],
    }
    if hits:
        listed = "; ".join(f"{p}:{n}: {t}" for p, n, t in hits[:10])
        more = f" (+{len(hits) - 10} more)" if len(hits) > 10 else ""
        return item(
            KIND,
            passed=False,
            repo=found.name,
            path=shown_paths,
            details=f"forbidden pattern {pats} found: {listed}{more}; remove these occurrences",
            **facts,
        )
    details = f"no match for {pats} in {len(seen)} file(s) under {shown_paths}"
    return item(KIND, passed=True, repo=found.name, path=shown_paths, details=details, **facts)


_check = per_entry(SourceEntry, _check_one)


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, SourceEntry)
    where = ", ".join(shown(entry.repo, p, default_repo) for p in entry.paths)
    return f"source absent: {', '.join(entry.patterns)} in {where}"


register(ClauseSpec(KIND, 90, _parse, _check, _label))
