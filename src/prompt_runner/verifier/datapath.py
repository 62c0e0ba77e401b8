"""Paths into parsed YAML/JSON data, for the ``yaml`` and ``json`` clauses.

Syntax: dot-separated keys with ``[N]`` list indices, e.g. ``a.b[0].c``;
``[-1]`` is the last item; a key containing dots, brackets or spaces is
written quoted in brackets: ``servers["web.1"].port`` or ``['a b']``. The empty
path ``""`` (or ``$``) is the document root.
"""

from __future__ import annotations

import re
from typing import Any

Segment = str | int

_TOKEN = re.compile(
    r"""\[\s*(?P<index>-?\d+)\s*\]
      | \[\s*"(?P<dq>(?:[^"\\]|\\.)*)"\s*\]
      | \[\s*'(?P<sq>(?:[^'\\]|\\.)*)'\s*\]
      | (?P<key>[^.\[\]]+)
      | (?P<dot>\.)""",
    re.VERBOSE,
)

_MISSING = object()


class PathSyntaxError(ValueError):
    """A data path that does not follow the documented syntax."""


def parse_path(text: str) -> tuple[Segment, ...]:
    """``"a.b[0]"`` -> ``("a", "b", 0)``.

    Raises:
        PathSyntaxError: unbalanced brackets, empty keys, stray characters.
    """
    text = text.strip()
    if text in ("", "$"):
        return ()
    if text.startswith("$."):
        text = text[2:]
    segments: list[Segment] = []
    pos = 0
    expect_key = True
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise PathSyntaxError(f"unexpected {text[pos]!r} at position {pos} in {text!r}")
        pos = m.end()
        if m.group("dot") is not None:
            if expect_key:
                raise PathSyntaxError(f"empty key in {text!r}")
            expect_key = True
            continue
        if m.group("index") is not None:
            segments.append(int(m.group("index")))
        elif m.group("key") is not None:
            if not expect_key:
                raise PathSyntaxError(f"missing '.' before {m.group('key')!r} in {text!r}")
            segments.append(m.group("key").strip())
        else:
            quoted = m.group("dq") if m.group("dq") is not None else m.group("sq")
            segments.append(re.sub(r"\\(.)", r"\1", quoted))
        expect_key = False
    if expect_key:
        raise PathSyntaxError(f"path {text!r} ends with '.'")
    return tuple(segments)


def lookup(data: Any, path: tuple[Segment, ...]) -> tuple[bool, Any]:
    """``(found, value)`` of ``path`` in ``data``."""
    current = data
    for seg in path:
        if isinstance(seg, int):
            if not isinstance(current, list) or not -len(current) <= seg < len(current):
                return False, None
            current = current[seg]
        else:
            if not isinstance(current, dict) or seg not in current:
                return False, None
            current = current[seg]
    return True, current


def render(path: tuple[Segment, ...]) -> str:
    """The canonical text of ``path`` (``$`` for the root)."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif re.fullmatch(r"[^.\[\]\s\"']+", seg):
            out += f".{seg}" if out else seg
        else:
            out += '["' + seg.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out or "$"


TYPE_NAMES = {
    "string": "string",
    "str": "string",
    "number": "number",
    "integer": "integer",
    "int": "integer",
    "float": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "null": "null",
    "map": "map",
    "mapping": "map",
    "object": "map",
    "dict": "map",
    "list": "list",
    "array": "list",
    "sequence": "list",
}


_CANONICAL: tuple[tuple[type, str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),  # before int: a bool is an int to isinstance
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (dict, "map"),
    (list, "list"),
)


def type_of(value: Any) -> str:
    """The canonical type name of a parsed value (``integer`` for ints, ``number`` for floats)."""
    for kind, name in _CANONICAL:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def is_type(value: Any, name: str) -> bool:
    """True when ``value`` has canonical type ``name`` (an integer is also a ``number``)."""
    actual = type_of(value)
    return actual == name or (name == "number" and actual == "integer")
