"""Validation helpers shared by the clause parsers.

Every helper takes a :class:`Where` (file + key path) so an error names the
file, the exact key path (``verify.commands[0].timeout_ms``) and the fix, in
one sentence (:class:`prompt_runner.errors.UserError`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from prompt_runner.errors import UserError
from prompt_runner.verifier.regexes import matches_any_text, syntax_error

PATH_FIX = "use a path relative to the repo, without `..`; set `repo:` to point at another repo"
PATH_FORM = ("a path string", "path")
"""The ``plain`` form of an entry that is a bare path or ``{path: ...}`` (:func:`mapping`)."""


@dataclass(frozen=True)
class Where:
    """A position in a file: ``file`` and a dotted ``key`` path."""

    file: str
    key: str

    def at(self, sub: str | int) -> Where:
        """The child position ``key.sub`` or ``key[sub]``."""
        return Where(
            self.file, f"{self.key}[{sub}]" if isinstance(sub, int) else f"{self.key}.{sub}"
        )

    def fail(self, message: str, fix: str) -> NoReturn:
        """Raise the :class:`UserError` for this position."""
        raise UserError(message, file=self.file, key=self.key, fix=fix)


def entry_list(raw: object, where: Where, *, what: str) -> list[object]:
    """The entries of a clause: a list, or a single string/mapping taken as one entry."""
    if raw is None:
        return []
    if isinstance(raw, list):
        return raw
    if isinstance(raw, str | dict):
        return [raw]
    where.fail(f"must be a list of {what}", f"write it as a YAML list of {what}")


def mapping(
    raw: object,
    where: Where,
    *,
    allowed: Collection[str],
    required: Collection[str] = (),
    what: str = "mapping",
    plain: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Check that ``raw`` is a mapping with string keys, only ``allowed`` ones, all ``required``.

    ``plain``: the entry's string form and the key it stands for (``("a path
    string", "path")``), for an entry that may also be a bare string: an error
    then names both forms.
    """
    if not isinstance(raw, dict):
        if plain is not None:
            form, key = plain
            shown = "a list" if isinstance(raw, list) else repr(raw)
            where.fail(
                f"must be {form} or a mapping with `{key}:` (got {shown})",
                f"quote it as a string, or write a mapping with keys {_keys(allowed)}",
            )
        where.fail(f"must be a {what}", f"write a mapping with keys {_keys(allowed)}")
    for key in raw:
        if not isinstance(key, str):
            where.fail(f"key {key!r} is not a string", "quote the key")
        if key not in allowed:
            where.at(key).fail("unknown key", f"use one of {_keys(allowed)}")
    for key in required:
        if key not in raw:
            where.at(key).fail("is required", f"add `{key}:` to the entry")
    return raw


def _keys(keys: Collection[str]) -> str:
    return ", ".join(sorted(keys))


def string(raw: object, where: Where, *, allow_empty: bool = False) -> str:
    """A string (non-empty unless ``allow_empty``)."""
    if not isinstance(raw, str):
        where.fail("must be a string", "quote the value")
    if not allow_empty and not raw.strip():
        where.fail("must not be empty" if not raw else "must not be blank", "give a value")
    return raw


def opt_string(m: Mapping[str, Any], key: str, where: Where) -> str | None:
    """``m[key]`` as a string, or ``None`` when absent."""
    return None if m.get(key) is None else string(m[key], where.at(key))


def boolean(m: Mapping[str, Any], key: str, where: Where, default: bool = False) -> bool:
    """``m[key]`` as a boolean (``default`` when absent)."""
    value = m.get(key, default)
    if not isinstance(value, bool):
        where.at(key).fail("must be true or false", "write `true` or `false`")
    return value


MAX_MS = 7 * 24 * 3600 * 1000
"""The largest duration in ms a contract may ask for (7 days, the emergency bound)."""


def integer(
    m: Mapping[str, Any],
    key: str,
    where: Where,
    *,
    minimum: int = 0,
    unit: str = "",
    maximum: int | None = None,
) -> int | None:
    """``m[key]`` as an integer in ``[minimum, maximum]``, or ``None`` when absent.

    Keys ending in ``_ms`` are bounded by :data:`MAX_MS` unless ``maximum`` is given.
    """
    value = m.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        bound = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        where.at(key).fail(f"must be {bound}", f"set it to {bound}{unit}")
    if maximum is None and key.endswith("_ms"):
        maximum = MAX_MS
    if maximum is not None and value > maximum:
        where.at(key).fail(f"must be at most {maximum} (got {value})", f"use {maximum} or less")
    return value


def string_list(raw: object, where: Where, *, allow_empty_items: bool = False) -> tuple[str, ...]:
    """A string or a list of strings, as a tuple."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        where.fail("must be a string or a list of strings", "write a YAML list of strings")
    return tuple(string(v, where.at(i), allow_empty=allow_empty_items) for i, v in enumerate(raw))


def repo_name(m: Mapping[str, Any], where: Where) -> str | None:
    """The entry's ``repo:`` (a non-empty string) or ``None``."""
    return opt_string(m, "repo", where)


def rel_path(raw: object, where: Where, *, allow_dot: bool = False) -> str:
    """A normalised repo-relative path (or glob pattern).

    Rejects absolute paths, ``~`` paths and any ``..`` component (escape).
    ``./a//b/`` becomes ``a/b``; ``.`` is only accepted with ``allow_dot``.
    """
    text = string(raw, where)
    if "\0" in text:
        where.fail("contains a NUL byte", PATH_FIX)
    if text.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", text):
        where.fail(f"absolute path {text!r} escapes the repo", PATH_FIX)
    parts = text.replace("\\", "/").split("/")
    if ".." in parts:
        where.fail(f"path {text!r} escapes the repo through `..`", PATH_FIX)
    norm = posixpath.normpath(text)
    if norm == "." and not allow_dot:
        where.fail("must name a path inside the repo, not the repo itself", PATH_FIX)
    return norm


def regex(raw: object, where: Where, *, as_bytes: bool = False) -> str:
    """A string that compiles as a regular expression of the engine the
    verifier runs (:mod:`prompt_runner.verifier.regexes`; as UTF-8 bytes with
    ``as_bytes``)."""
    text = string(raw, where)
    problem = syntax_error(text)
    if problem is not None:
        where.fail(f"is not a valid regular expression ({problem})", "fix the pattern")
    if as_bytes and (problem := syntax_error(text, as_bytes=True)) is not None:
        where.fail(f"cannot be searched as bytes ({problem})", "use plain ASCII escapes")
    if matches_any_text(text):
        where.fail(
            f"/{text}/ matches any text, even an empty one (it can match the empty string: "
            "an empty alternative such as `foo|`, or every part optional), so its check "
            "cannot tell anything",
            "make part of the pattern required (drop the empty alternative)",
        )
    return text
