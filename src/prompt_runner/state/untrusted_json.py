"""Decoding JSON nobody here vouches for: requests users write, state files a
crash or a hand may have damaged.

Every reader of such JSON treats ``ValueError`` (``json.JSONDecodeError`` is
one) as "bad input" and takes its documented path -- a refused request, a
state file moved aside, a record of truth's file and line named. Two things
slip past that:

* **Deep nesting.** The standard library's decoder recurses in C once per
  level and, near the interpreter's recursion limit (1000 levels less the
  caller's own stack), raises ``RecursionError``, which no such reader
  catches. orjson (a core dependency, used by the event readers) stops at
  1024 levels with its ``JSONDecodeError``, a ``ValueError``, and never uses
  Python's stack.
* **Duplicate keys.** Both decoders keep the *last* value of a repeated key
  without a word, so ``{"command": "view", ..., "command": "stop"}`` reads
  as ``stop``. YAML duplicates are refused everywhere (``strict_yaml.py``).

:func:`loads` turns the first into a :class:`JsonNestingError` (a
``ValueError``). :func:`loads_unique` is for what users write (control
requests): it also refuses a repeated key, naming it, and nesting deeper
than ``max_depth``, so nothing downstream recurses far on a request.

Files the runner itself writes (``state.json``, ``runs/current.json``, the
JSONL records) are decoded with :func:`loads` -- or, on hot paths, with
``json.loads`` catching ``RecursionError`` next to ``ValueError`` in place
(``state/jsonl.py``) -- and duplicates are not looked for there: the runner
encodes dicts, which cannot repeat a key, so a repeat is a hand edit, and
checking costs a Python call per object on every read.

Standard library only (``json``): the CLI's hot paths import this.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing costs import time on the CLI hot path
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_REQUEST_DEPTH", "JsonNestingError", "loads", "loads_unique"]

MAX_REQUEST_DEPTH = 64
"""Deepest nesting :func:`loads_unique` takes by default (the top-level value is level 1).

A control request is 3 or 4 levels deep (``{"params": {"add": {clause: [...]}}}``);
64 leaves room for any clause value while keeping everything that later walks a
request (validation, ``repr``, the control log's encoder) far from the recursion limit.
"""


class JsonNestingError(ValueError):
    """The JSON document nests arrays/objects deeper than it may be decoded.

    Args:
        message: what was too deep (default: ``nested too deeply to decode``).
    """

    def __init__(self, message: str = "nested too deeply to decode") -> None:
        super().__init__(message)


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, with nesting too deep to decode a ``ValueError`` too.

    Args:
        text: the document (``bytes`` are decoded as ``json.loads`` does).

    Returns:
        The decoded value.

    Raises:
        JsonNestingError: the document nests deeper than the standard library's
            decoder can go from here (about 1000 levels less the caller's stack).
        ValueError: not valid JSON (``json.JSONDecodeError``), or bytes that are
            not valid UTF-8/16/32 (``UnicodeDecodeError``).
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise JsonNestingError() from None


def loads_unique(text: str | bytes, *, max_depth: int = MAX_REQUEST_DEPTH) -> Any:
    """Decode JSON a user wrote: as :func:`loads`, but refusing repeated keys and deep nesting.

    Args:
        text: the document.
        max_depth: the deepest nesting taken (the top-level value is level 1).

    Returns:
        The decoded value.

    Raises:
        ValueError: an object repeats a key (``duplicate key 'command'``); the
            document nests deeper than ``max_depth`` (a :class:`JsonNestingError`);
            or it is not valid JSON (as :func:`loads`).
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_pairs)
    except RecursionError:
        raise JsonNestingError() from None
    if type(value) in _CONTAINERS and _deeper_than(value, max_depth):
        raise JsonNestingError(f"nested deeper than {max_depth} levels")
    return value


_CONTAINERS = (dict, list)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: the object of ``pairs``; ``ValueError`` for a repeated key."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _deeper_than(value: dict[str, Any] | list[Any], limit: int) -> bool:
    """Whether ``value`` (level 1) holds a container below level ``limit``; no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.values() if type(node) is dict else node:
            if type(child) in _CONTAINERS:
                stack.append((child, depth + 1))
    return False
