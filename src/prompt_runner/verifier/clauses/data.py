"""The ``yaml`` and ``json`` clauses: structured data parses and has the shape.

Entry (both clauses)::

    - path: matrix.json                 # required (a bare string = parses only)
      repo: app
      root: map                         # or list (aliases: mapping/object, array/sequence)
      required_paths: [meta.owner]      # each path exists (its value may be null)
      non_empty_paths: [projects]       # each path exists and is not empty/null
      array_items_require: {projects: [project, status]}   # every item has these keys
      array_none_match: [{path: projects, field: status, equals: fail}]
      assert:                           # path assertions
        - {path: "projects[0].status", exists: true, equals: ok}
        - {path: projects, type: list, length: 2}
        - {path: "limits.cpu", type: number, min: 1, max: 8}

Paths use :mod:`prompt_runner.verifier.datapath` syntax (``a.b[0].c``).
``type`` is one of string, number, integer, boolean, null, map, list.
``length`` is the exact size of a list, map or string; ``min``/``max`` bound a
number's value, or the size of a list, map or string. ``exists: false``
asserts the path is absent. A file that does not parse is a failure, not a
fault. YAML is read with the safe loader; a repeated key does not parse.
A YAML document whose aliases (``*name``) repeat more than
:data:`MAX_ALIAS_GROWTH` values beyond those it writes (a "billion laughs"
document: a few hundred bytes that expand to billions of values), or whose
alias lies inside its own anchor (a list or map that contains itself), fails
without a shape check: see :func:`alias_growth`.
JSON is read as strict RFC 8259 JSON: a repeated key in an object, ``NaN``,
``Infinity`` or ``-Infinity``, a leading byte-order mark, or bytes that are
not UTF-8 do not parse.

``equals`` (and ``array_none_match``'s ``equals``) compare as JSON does, not as
Python does: a boolean equals only a boolean (``false`` is not ``0``, ``true``
is not ``1``), recursively inside lists and maps; numbers compare by value
(``1`` equals ``1.0``); a map's keys compare the same way; a list's order
counts. See :func:`json_equal`.
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prompt_runner import strict_yaml
from prompt_runner.strict_yaml import MAX_ALIAS_GROWTH, alias_growth
from prompt_runner.verifier import schema
from prompt_runner.verifier.clauses.files import read_text
from prompt_runner.verifier.datapath import (
    TYPE_NAMES,
    PathSyntaxError,
    Segment,
    is_type,
    lookup,
    parse_path,
    render,
    type_of,
)
from prompt_runner.verifier.model import ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import shown
from prompt_runner.verifier.registry import ClauseSpec, per_entry, register
from prompt_runner.verifier.schema import Where

_UNSET: Any = object()
_ASSERT_KEYS = {"path", "exists", "equals", "type", "length", "min", "max"}
_ROOTS = {"map": "map", "mapping": "map", "object": "map", "dict": "map"} | {
    "list": "list",
    "array": "list",
    "sequence": "list",
}


@dataclass(frozen=True)
class Assertion:
    """One path assertion; unset checks are ``None`` (``equals`` uses a sentinel)."""

    path: str
    exists: bool = True
    equals: Any = _UNSET
    type: str | None = None
    length: int | None = None
    min: float | None = None
    max: float | None = None

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"path": self.path}
        if not self.exists:
            raw["exists"] = False
        if self.equals is not _UNSET:
            raw["equals"] = self.equals
        for key in ("type", "length", "min", "max"):
            if getattr(self, key) is not None:
                raw[key] = getattr(self, key)
        return raw


@dataclass(frozen=True, kw_only=True)
class DataEntry(ClauseEntry):
    """One yaml/json document check."""

    fmt: str
    path: str
    root: str | None = None
    required_paths: tuple[str, ...] = ()
    non_empty_paths: tuple[str, ...] = ()
    array_items_require: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    array_none_match: tuple[tuple[str, str, Any], ...] = ()
    asserts: tuple[Assertion, ...] = ()

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"path": self.path}
        optional: dict[str, Any] = {
            "repo": self.repo,
            "root": self.root,
            "required_paths": list(self.required_paths) or None,
            "non_empty_paths": list(self.non_empty_paths) or None,
            "array_items_require": {k: list(v) for k, v in self.array_items_require.items()}
            or None,
            "array_none_match": [
                {"path": p, "field": f, "equals": v} for p, f, v in self.array_none_match
            ]
            or None,
            "assert": [a.to_raw() for a in self.asserts] or None,
        }
        raw.update({k: v for k, v in optional.items() if v is not None})
        return raw

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        return ((self.repo, self.path),)


def _data_path(raw: object, where: Where) -> str:
    text = schema.string(raw, where, allow_empty=True)
    try:
        parse_path(text)
    except PathSyntaxError as exc:
        where.fail(f"is not a valid data path ({exc})", 'write it like `a.b[0].c` or `a["x.y"]`')
    return text


def _number(m: Mapping[str, Any], key: str, where: Where) -> float | None:
    value = m.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        where.at(key).fail("must be a number", "write a number")
    return value


def _assertion(raw: object, where: Where) -> Assertion:
    m = schema.mapping(raw, where, allowed=_ASSERT_KEYS, required={"path"})
    type_name = schema.opt_string(m, "type", where)
    if type_name is not None and type_name not in TYPE_NAMES:
        where.at("type").fail(
            f"unknown type {type_name!r}", "use string, number, integer, boolean, null, map or list"
        )
    return Assertion(
        path=_data_path(m["path"], where.at("path")),
        exists=schema.boolean(m, "exists", where, default=True),
        equals=m.get("equals", _UNSET),
        type=TYPE_NAMES[type_name] if type_name else None,
        length=schema.integer(m, "length", where),
        min=_number(m, "min", where),
        max=_number(m, "max", where),
    )


def _parse_entry(value: object, where: Where, fmt: str) -> DataEntry:
    if isinstance(value, str):
        return DataEntry(fmt=fmt, path=schema.rel_path(value, where))
    m = schema.mapping(
        value,
        where,
        allowed={
            "path",
            "repo",
            "root",
            "required_paths",
            "non_empty_paths",
            "array_items_require",
            "array_none_match",
            "assert",
        },
        required={"path"},
        plain=schema.PATH_FORM,
    )
    root = schema.opt_string(m, "root", where)
    if root is not None and root not in _ROOTS:
        where.at("root").fail(f"unknown root {root!r}", "use `map` or `list`")
    required = schema.string_list(m.get("required_paths"), where.at("required_paths"))
    for i, p in enumerate(required):
        _data_path(p, where.at("required_paths").at(i))
    non_empty = schema.string_list(m.get("non_empty_paths"), where.at("non_empty_paths"))
    for i, p in enumerate(non_empty):
        _data_path(p, where.at("non_empty_paths").at(i))
    require_raw = m.get("array_items_require") or {}
    if not isinstance(require_raw, dict):
        where.at("array_items_require").fail(
            "must map a data path to required keys", "write `{projects: [name, status]}`"
        )
    require = {
        _data_path(k, where.at("array_items_require")): schema.string_list(
            v, where.at("array_items_require").at(str(k))
        )
        for k, v in require_raw.items()
    }
    none_match: list[tuple[str, str, Any]] = []
    for i, rule in enumerate(
        schema.entry_list(m.get("array_none_match"), where.at("array_none_match"), what="rules")
    ):
        at = where.at("array_none_match").at(i)
        r = schema.mapping(
            rule, at, allowed={"path", "field", "equals"}, required={"path", "equals"}
        )
        field_name = schema.opt_string(r, "field", at) or ""
        none_match.append((_data_path(r["path"], at.at("path")), field_name, r["equals"]))
    asserts = tuple(
        _assertion(a, where.at("assert").at(i))
        for i, a in enumerate(
            schema.entry_list(m.get("assert"), where.at("assert"), what="assertions")
        )
    )
    return DataEntry(
        fmt=fmt,
        path=schema.rel_path(m["path"], where.at("path")),
        repo=schema.repo_name(m, where),
        root=_ROOTS[root] if root else None,
        required_paths=required,
        non_empty_paths=non_empty,
        array_items_require=require,
        array_none_match=tuple(none_match),
        asserts=asserts,
    )


def _parser(fmt: str) -> Any:
    def parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
        values = schema.entry_list(raw, where, what=f"{fmt} documents")
        return tuple(_parse_entry(v, where.at(i), fmt) for i, v in enumerate(values))

    return parse


class NotStrictJson(ValueError):
    """A document ``json.loads`` would read but RFC 8259 does not allow."""


def _no_constant(name: str) -> Any:
    raise NotStrictJson(f"{name} is not a JSON value (RFC 8259 has no NaN or Infinity)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise NotStrictJson(
                f"repeated key {key!r} in one object (RFC 8259: which one counts is unpredictable)"
            )
        out[key] = value
    return out


def load_strict_json(text: str) -> Any:
    """The value of the JSON document ``text``, read as strict RFC 8259 JSON.

    Args:
        text: the document, already decoded.

    Returns:
        The parsed value (dict, list, str, int, float, bool or None).

    Raises:
        NotStrictJson: an object repeats a key, or the text holds ``NaN``,
            ``Infinity`` or ``-Infinity`` (which :func:`json.loads` accepts).
        json.JSONDecodeError: the text is not JSON at all.
    """
    return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)


def _alias_refusal(path: str, data: Any) -> str | None:
    """Why a parsed YAML document is refused before any shape check, or ``None``."""
    growth = alias_growth(data)
    if growth is None:
        return (
            f"{path} is refused: an alias (*name) inside its own anchor makes a list or map "
            "contain itself, which no check can walk to its end; write the value out instead"
        )
    if growth > MAX_ALIAS_GROWTH:
        return (
            f"{path} is refused: its aliases (*name) repeat more than {MAX_ALIAS_GROWTH:,} "
            'values beyond those it writes (nested aliases expand it like a "billion laughs" '
            "document), which no check walks; write the repeated parts out, or nest fewer aliases"
        )
    return None


def _load(fmt: str, text: str) -> Any:
    if fmt == "json":
        return load_strict_json(text)
    return strict_yaml.load(text)  # safe; a repeated key does not parse


def _key(k: Any) -> tuple[bool, Any]:
    return (isinstance(k, bool), k)


def json_equal(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are equal as JSON values (not as Python's ``==``).

    A boolean equals only the same boolean (Python has ``True == 1`` and
    ``False == 0.0``); numbers compare by value, so ``1`` equals ``1.0``; lists
    are equal item by item in order; maps have the same keys (a boolean key
    again only matching a boolean) with equal values. Anything else (strings,
    ``None``, YAML's dates) compares with ``==``.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or len(a) != len(b):
            return False
        keyed = {_key(k): v for k, v in b.items()}
        return all(_key(k) in keyed and json_equal(v, keyed[_key(k)]) for k, v in a.items())
    return bool(a == b)


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxother = 4, 200


def _text(value: Any) -> str:
    """``value`` as the file spells it: a string quoted (``'fail'``), anything
    else as JSON (``true``, ``null``, ``[1, 2]``), never Python's ``True``/``None``;
    cut at 200 characters.

    Only the first characters are made: the encoder is the pure-Python one
    (not one-shot), which hands out pieces as it goes, so a huge value costs
    what its first 200 characters cost (and a signal is handled meanwhile)."""
    if isinstance(value, str):
        shown = repr(value)
    else:
        pieces: list[str] = []
        made = 0
        try:
            encoder = json.JSONEncoder(ensure_ascii=False, default=str)
            for piece in encoder.iterencode(value, _one_shot=False):
                pieces.append(piece)
                made += len(piece)
                if made > 200:
                    break
            shown = "".join(pieces)
        except (TypeError, ValueError):  # a value JSON cannot hold (a YAML set, say)
            shown = _SHORT.repr(value)
    return shown if len(shown) <= 200 else shown[:197] + "..."


def _a(kind: str) -> str:
    """``a string``, ``an integer``: the type name with its article."""
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def _shown(value: Any, other: Any) -> str:
    """:func:`_text` of ``value``, with its type when that is what tells it from ``other``."""
    kind, other_kind = type_of(value), type_of(other)
    if kind != other_kind and {kind, other_kind} <= {"integer", "number"}:
        return _text(value)
    return f"{_text(value)} ({kind})" if kind != other_kind else _text(value)


def _size(value: Any) -> int | None:
    return len(value) if isinstance(value, list | dict | str) else None


def _assertion_problems(data: Any, a: Assertion) -> list[str]:
    segs = parse_path(a.path)
    where = render(segs)
    found, value = lookup(data, segs)
    if not a.exists:
        return [f"{where} exists but must be absent"] if found else []
    if not found:
        return [f"{where} is missing"]
    problems: list[str] = []
    if a.equals is not _UNSET and not json_equal(value, a.equals):
        problems.append(f"{where} is {_shown(value, a.equals)}, expected {_shown(a.equals, value)}")
    if a.type is not None and not is_type(value, a.type):
        problems.append(f"{where} is {_a(type_of(value))}, expected {a.type}")
    size = _size(value)
    if a.length is not None and size != a.length:
        problems.append(f"{where} has length {size}, expected {a.length}")
    measure = value if isinstance(value, int | float) and not isinstance(value, bool) else size
    if measure is None and (a.min is not None or a.max is not None):
        bound = "min" if a.min is not None else "max"
        problems.append(
            f"{where} is {'null' if value is None else f'{_a(type_of(value))} ({_text(value)})'}"
            ", which has no number or size "
            f"to compare with {bound} {a.min if a.min is not None else a.max}"
        )
        return problems
    if a.min is not None and measure is not None and measure < a.min:
        problems.append(f"{where} is {measure}, below min {a.min}")
    if a.max is not None and measure is not None and measure > a.max:
        problems.append(f"{where} is {measure}, above max {a.max}")
    return problems


def _shape_problems(data: Any, e: DataEntry) -> list[str]:
    problems: list[str] = []
    if e.root is not None and type_of(data) != e.root:
        problems.append(f"root is {_a(type_of(data))}, expected {e.root}")
    for p in e.required_paths:
        segs = parse_path(p)
        if not lookup(data, segs)[0]:
            problems.append(f"{render(segs)} is missing")
    for p in e.non_empty_paths:
        segs = parse_path(p)
        found, value = lookup(data, segs)
        if not found:
            problems.append(f"{render(segs)} is missing")
        elif value is None or value == "" or (isinstance(value, list | dict) and not value):
            problems.append(f"{render(segs)} is empty")
    for p, keys in e.array_items_require.items():
        for segs, i, entry in _items_at(data, p, problems):
            lacking = [k for k in keys if not isinstance(entry, dict) or k not in entry]
            if lacking:
                at = render((*segs, i))
                problems.append(f"missing required keys: {at} lacks {', '.join(lacking)}")
    for p, field_name, expected in e.array_none_match:
        for segs, i, entry in _items_at(data, p, problems):
            if field_name:
                if not isinstance(entry, dict) or field_name not in entry:
                    continue
                got, at = entry[field_name], render((*segs, i, field_name))
            else:
                got, at = entry, render((*segs, i))
            if json_equal(got, expected):
                problems.append(f"{at} equals {_text(expected)}, which no item may match")
    for a in e.asserts:
        problems.extend(_assertion_problems(data, a))
    return problems


def _items_at(
    data: Any, path: str, problems: list[str]
) -> Iterator[tuple[tuple[Segment, ...], int, Any]]:
    """``(segments, index, item)`` for each item of the list at ``path``; a value
    that is missing or not a list is added to ``problems`` instead."""
    segs = parse_path(path)
    found, value = lookup(data, segs)
    if not isinstance(value, list):
        problems.append(f"{render(segs)} is {'missing' if not found else 'not a list'}")
        return
    for i, entry in enumerate(value):
        yield segs, i, entry


def _check_one(e: DataEntry, ctx: VerifyContext) -> VerifierItem:
    got = read_text(e.fmt, e.repo, e.path, ctx, utf8_only=e.fmt == "json")
    if isinstance(got, VerifierItem):
        return got
    repo, text = got
    label = e.fmt.upper()
    if e.fmt == "json" and text.startswith("\ufeff"):
        return item(
            e.fmt,
            passed=False,
            repo=repo,
            path=e.path,
            details=f"{e.path} does not parse as JSON: it starts with a UTF-8 byte-order mark "
            "(RFC 8259: JSON text must not carry one); save the file without it",
        )
    try:
        data = _load(e.fmt, text)
    except Exception as exc:  # json.JSONDecodeError or yaml.YAMLError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return item(
            e.fmt,
            passed=False,
            repo=repo,
            path=e.path,
            details=f"{e.path} does not parse as {label}: {reason}",
        )
    refused = _alias_refusal(e.path, data) if e.fmt == "yaml" and "*" in text else None
    if refused is not None:
        return item(e.fmt, passed=False, repo=repo, path=e.path, details=refused)
    problems = _shape_problems(data, e)
    if problems:
        return item(
            e.fmt,
            passed=False,
            repo=repo,
            path=e.path,
            details="; ".join(problems),
            problems=problems,
        )
    checks = len(e.required_paths) + len(e.non_empty_paths)
    checks += len(e.array_items_require) + len(e.array_none_match)
    checks += len(e.asserts) + (1 if e.root else 0)
    details = f"{e.path} parses as {label}; root {type_of(data)}; {checks} shape check(s) hold"
    return item(e.fmt, passed=True, repo=repo, path=e.path, details=details)


_check = per_entry(DataEntry, _check_one)


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, DataEntry)
    return f"{entry.fmt}: {shown(entry.repo, entry.path, default_repo)}"


register(ClauseSpec("yaml", 60, _parser("yaml"), _check, _label, names_outputs=True))
register(ClauseSpec("json", 70, _parser("json"), _check, _label, names_outputs=True))
