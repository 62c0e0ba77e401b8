"""Safe YAML loading that refuses a key given twice in one mapping.

PyYAML keeps the last of two equal keys and says nothing, so a second
``verify:`` block silently replaces the first contract. Every YAML document
Prompt Runner reads (front matter of manifests, prompts, profiles and
templates; YAML files a contract checks) is loaded through :func:`load`,
which raises :class:`DuplicateKeyError` instead. Keys brought in by a merge
key (``<<: *base``) may be overridden, as YAML intends. The round-trip
editors (ruamel.yaml) refuse duplicates on their own.

The loader is PyYAML's C ``CSafeLoader`` when it is built, else ``SafeLoader``.
The C parser builds the node tree; PyYAML's constructor, which turns nodes
into Python values, is pure Python and was most of the cost of loading 5,000
prompt files. :func:`load` first tries a direct construction
(:func:`_construct_plain`) that handles what front matter is made of --
mappings, sequences and the standard scalar tags, through PyYAML's own scalar
constructors -- and gives up on anything else (a merge key, a recursive
alias, another tag, a repeated or unhashable key, any error), in which case
the document is constructed by PyYAML as before, so its values and its errors
are PyYAML's either way.

YAML 1.1 reads an unquoted ``on``, ``off``, ``yes`` or ``no`` as a boolean,
keys included, so ``notify: {on: [run_failed]}`` would hold the key ``True``.
``load(text, keys_as_written=("notify",))`` reads the keys of those top-level
mappings as their text; everything else keeps YAML's reading.

YAML 1.1 also reads ``010`` as the octal 8, ``0x10`` as 16, ``0b10`` as 2,
``1_0`` as 10 and ``1:30`` as 90; :func:`int_spelling` tells, from a composed
node, a plain scalar so read whose text is not that number written in decimal
(the front matter refuses such a prompt id, which would silently rename it).

:func:`alias_growth` counts the values a document's aliases add to those it
writes; the front matter and the ``yaml`` clause refuse a document that adds
more than :data:`MAX_ALIAS_GROWTH` ("billion laughs").
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import Any

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"


class DuplicateKeyError(yaml.YAMLError):
    """A mapping holds the same key twice.

    Attributes:
        key: the repeated key.
        line: the 1-based line (in the parsed text) of the repeat.
        first_line: the 1-based line of its first occurrence.
    """

    def __init__(self, key: Any, line: int, first_line: int) -> None:
        where = f"twice on line {line}" if line == first_line else f"at line {line}"
        super().__init__(
            f"duplicate key {key!r} {where}"
            + ("" if line == first_line else f" (first at line {first_line})")
        )
        self.key = key
        self.line = line
        self.first_line = first_line


@cache
def _loader() -> type[Any]:
    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class UniqueKeyLoader(base):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                _check_unique(self, node)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def _check_unique(loader: Any, node: yaml.MappingNode) -> None:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            if key in seen:
                raise DuplicateKeyError(key, line, seen[key])
            seen[key] = line
        except TypeError:  # an unhashable key: construct_mapping says so itself
            continue


def load(text: str, *, keys_as_written: Collection[str] = ()) -> Any:
    """Parse one YAML document safely (see :func:`load_with_node`)."""
    return load_with_node(text, keys_as_written=keys_as_written)[0]


def load_with_node(text: str, *, keys_as_written: Collection[str] = ()) -> tuple[Any, Any]:
    """Parse one YAML document safely; return ``(value, node)``.

    ``node`` is the document's composed node tree as ``yaml.compose`` gives it
    (its marks place each key; ``keys_as_written`` retags some scalars, which
    moves no mark), or ``None`` when the document is empty or PyYAML's
    constructor built it (flattening a merge key rewrites the tree).

    Args:
        text: the YAML text.
        keys_as_written: top-level keys whose mapping's plain (unquoted) keys
            YAML would read as booleans are read as the text written instead
            (``on`` stays ``"on"``), e.g. ``("notify",)``.

    Raises:
        DuplicateKeyError: a mapping repeats a key (a ``yaml.YAMLError``).
        yaml.YAMLError: any other invalid YAML.
    """
    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if keys_as_written:
            _read_keys_as_written(node, keys_as_written)
        try:
            return _construct_plain(loader, node), node
        except _NotPlain:
            return loader.construct_document(node), None
    finally:
        loader.dispose()


_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "binary", "timestamp")
)


class _NotPlain(Exception):
    """The document needs PyYAML's own constructor (see :func:`_construct_plain`)."""


def _construct_plain(loader: Any, root: Any) -> Any:
    """``root`` as PyYAML's safe constructor builds it, for plain documents.

    Mappings (tag ``map``), sequences (``seq``) and scalars tagged ``str``
    (the node's text) or ``null``, ``bool``, ``int``, ``float``, ``binary``,
    ``timestamp`` (PyYAML's scalar constructor for the tag) are built
    directly; an aliased node is built once and shared, as PyYAML shares it.

    Raises:
        _NotPlain: anything else -- another tag or node kind, a merge key, a
            recursive alias, a key that repeats or is unhashable, or any error
            of a scalar constructor -- so the caller lets PyYAML construct
            the whole document (and raise its own error).
    """
    try:
        return _PlainBuilder(loader).build(root)
    except RecursionError:
        raise _NotPlain from None


class _PlainBuilder:
    """One document's :func:`_construct_plain` (a class, not a closure that calls
    itself: that would be a reference cycle holding the loader and every value
    until the cyclic collector ran)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.constructors = loader.yaml_constructors
        self.built: dict[int, Any] = {}
        self.pending: set[int] = set()

    def build(self, node: Any) -> Any:
        ident = id(node)
        built = self.built
        if ident in built:
            return built[ident]
        tag = node.tag
        kind = type(node)
        if kind is yaml.ScalarNode:
            if tag == _STR_TAG:
                value: Any = node.value
            elif tag in _SCALAR_TAGS:
                try:
                    value = self.constructors[tag](self.loader, node)
                except Exception:
                    raise _NotPlain from None
            else:
                raise _NotPlain
        elif ident in self.pending:
            raise _NotPlain  # a recursive alias
        elif kind is yaml.MappingNode and tag == _MAP_TAG:
            self.pending.add(ident)
            value = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    raise _NotPlain
                key = self.build(key_node)
                try:
                    if key in value:
                        raise _NotPlain  # a repeat: PyYAML's path names it
                except TypeError:
                    raise _NotPlain from None  # unhashable
                value[key] = self.build(value_node)
            self.pending.discard(ident)
        elif kind is yaml.SequenceNode and tag == _SEQ_TAG:
            self.pending.add(ident)
            value = [self.build(child) for child in node.value]
            self.pending.discard(ident)
        else:
            raise _NotPlain
        built[ident] = value
        return value


def _read_keys_as_written(node: Any, names: Collection[str]) -> None:
    """Retag the boolean-looking plain keys of ``node``'s mappings under ``names`` as strings."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.value not in names:
            continue
        if not isinstance(value_node, yaml.MappingNode):
            continue
        for inner, _ in value_node.value:
            if isinstance(inner, yaml.ScalarNode) and inner.tag == _BOOL_TAG and not inner.style:
                inner.tag = _STR_TAG


def int_spelling(node: Any) -> tuple[str, int] | None:
    """``(how, number)`` for a plain scalar YAML 1.1 reads as an integer whose
    text is not that number in decimal: ``010`` is ``("octal", 8)``, ``0x10``
    ``("hexadecimal", 16)``, ``0b10`` ``("binary", 2)``, ``1_0`` ``("'_'-separated",
    10)`` (YAML 1.1 drops the ``_``), ``1:30`` ``("sexagesimal (base 60)", 90)``. ``None`` for
    any other node: a decimal ``2``, ``+2`` or ``07`` (octal 7 is 7), a quoted
    scalar, a string, a mapping.
    """
    if not isinstance(node, yaml.ScalarNode) or node.tag != _INT_TAG or node.style:
        return None
    digits = node.value.lstrip("+-")
    if digits.startswith("0b"):
        how = "binary"
    elif digits.startswith("0x"):
        how = "hexadecimal"
    elif ":" in digits:
        how = "sexagesimal (base 60)"
    elif "_" in digits:
        how = "'_'-separated"
    elif digits.startswith("0") and digits.isdigit() and int(digits, 8) != int(digits):
        how = "octal"
    else:
        return None
    try:
        number = int(yaml.SafeLoader("").construct_yaml_int(node))
    except (ValueError, yaml.YAMLError):  # PyYAML's resolver and constructor disagree
        return None
    return how, number


MAX_ALIAS_GROWTH = 100_000
"""The most values a YAML document's aliases may add to those it writes (the
``yaml`` clause's limit, and the front matter's: :func:`alias_growth` counts them)."""


_SHARED = (dict, list, tuple, set, frozenset)
"""What an alias can make the value of several places and a walk then visits
once per place (a scalar is visited once wherever it is)."""


def _children(value: Any) -> list[Any]:
    """The values a list or map (or a YAML set or pair) holds, a map's keys included."""
    return [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)


def alias_growth(data: Any) -> int | None:
    """How many values ``data`` holds beyond those written, counting shared ones each time.

    YAML's aliases make one parsed list or map the value of several places; a
    walk of the document (comparing, printing) visits it once per place. The
    count is found without such a walk: each list and map is sized once, in
    time proportional to the values written, however large the expansion
    (``9 ** 11`` for a 531-byte document).

    Args:
        data: a parsed document.

    Returns:
        The expanded number of values minus the written number (``0`` for a
        document without a shared list or map), or ``None`` when a list or
        map contains itself (an alias inside its own anchor).
    """
    if not isinstance(data, _SHARED):
        return 0
    sizes: dict[int, int] = {}
    started: set[int] = set()
    written = 1
    stack: list[tuple[Any, list[Any] | None]] = [(data, None)]
    while stack:
        value, kids = stack.pop()
        key = id(value)
        if kids is not None:  # every child is sized: size this one
            sizes[key] = 1 + sum([sizes.get(id(k), 1) for k in kids])
            started.discard(key)
            continue
        if key in sizes:
            continue
        if key in started:  # started and not finished: it is its own ancestor
            return None
        started.add(key)
        kids = _children(value)
        written += len(kids)
        stack.append((value, kids))
        stack.extend([(k, None) for k in kids if isinstance(k, _SHARED) and id(k) not in sizes])
    return sizes[id(data)] - written
