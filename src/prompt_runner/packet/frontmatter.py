"""Split a markdown file into YAML front matter and body.

Format (the reference system's): the file starts with a line ``---``, the YAML
front matter follows, and a line ``---`` closes it; everything after is the
markdown body. YAML is parsed with PyYAML's safe loader (C-accelerated when
available). Every malformed case raises :class:`~prompt_runner.errors.UserError`
naming the file and the fix.

YAML anchors and aliases let a few hundred bytes describe a structure of
billions of values ("billion laughs"); the loader shares the aliased objects,
but anything that walks the result (validation, JSON dumps) expands them. So
every parsed document is measured as expanded -- counting a shared object
each time it is referenced -- and refused past :data:`MAX_VALUES` values or
:data:`MAX_DEPTH` levels, long before the expansion costs anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .. import strict_yaml
from ..errors import UserError
from .file_read import read_regular

MAX_VALUES = 100_000
"""Most values (scalars, keys, lists, mappings) a parsed YAML document may expand to."""
MAX_DEPTH = 100
"""Deepest nesting a parsed YAML document may have (also stops self-referencing aliases)."""


def read_text(path: Path, *, display: str | None = None) -> str:
    """Read ``path`` as UTF-8.

    Raises:
        UserError: unreadable or not UTF-8.
    """
    where = display or str(path)
    return decode_text(read_bytes(path, display=where), display=where)


def read_bytes(path: Path, *, display: str | None = None) -> bytes:
    """Read ``path``'s bytes by :func:`.file_read.read_regular`'s rule: a regular
    file of at most :data:`.file_read.MAX_FILE_BYTES` bytes.

    Raises:
        UserError: not found, a directory, not a regular file (a named pipe, a
            device), too large, or unreadable.
    """
    return read_regular(path, display=display or str(path))


def decode_text(data: bytes, *, display: str) -> str:
    """``data`` (read from the file ``display`` names) as UTF-8 text.

    Raises:
        UserError: not valid UTF-8.
    """
    where = display
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"is not valid UTF-8 (byte {exc.start})", file=where, fix="save the file as UTF-8"
        ) from None


def split_front_matter(text: str, *, file: str) -> tuple[dict[str, Any], str]:
    """Return ``(front_matter_mapping, body)``.

    Args:
        text: the whole file.
        file: the name used in error messages.

    Raises:
        UserError: no front matter, unterminated front matter, invalid YAML, or
            front matter that is not a mapping.
    """
    data, body, _ = split_front_matter_node(text, file=file)
    return data, body


def split_front_matter_node(
    text: str, *, file: str
) -> tuple[dict[str, Any], str, tuple[str, Any] | None]:
    """:func:`split_front_matter`, and ``(yaml_text, node)``: the front matter's
    text and its composed YAML node (``None`` when there is no such node, see
    :func:`~prompt_runner.strict_yaml.load_with_node`). Lint places its
    findings with the node instead of composing the text again.

    Raises:
        UserError: as :func:`split_front_matter`.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        raise UserError(
            "has no YAML front matter",
            file=file,
            fix="start the file with a '---' line, the YAML keys, then a closing '---' line",
        )
    closing = None
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() in ("---", "..."):
            closing = index
            break
    if closing is None:
        raise UserError(
            "front matter opened with '---' is never closed",
            file=file,
            fix="add a closing '---' line after the YAML keys",
        )
    raw = "".join(lines[1:closing])
    body = "".join(lines[closing + 1 :])
    data, node = _parse_yaml_node(raw, file=file, line_offset=1)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(
            f"front matter is a {type(data).__name__}, not a mapping of keys",
            file=file,
            fix="write the front matter as 'key: value' lines",
        )
    for key in data:
        if not isinstance(key, str):
            raise UserError(
                f"front matter key {key!r} is not a string",
                file=file,
                fix="quote the key or rename it",
            )
    return data, body, (raw, node) if node is not None else None


def split_prompt_front_matter(
    text: str, *, file: str
) -> tuple[dict[str, Any], str, tuple[str, Any] | None]:
    """:func:`split_front_matter_node` for a prompt file: its ``id`` and
    ``depends_on`` entries also checked as written (:func:`check_written_ids`).

    Raises:
        UserError: as :func:`split_front_matter`, or an id YAML 1.1 reads as
            another number than its text says.
    """
    data, body, parsed = split_front_matter_node(text, file=file)
    check_written_ids(parsed, file=file)
    return data, body, parsed


_ID_KEYS = ("id", "depends_on")


def check_written_ids(parsed: tuple[str, Any] | None, *, file: str) -> None:
    """Refuse a prompt's ``id`` (or ``depends_on`` entry) written unquoted in a
    YAML 1.1 number form whose text is not the number in decimal -- ``010``
    (octal 8, so the prompt would be ``"08"``), ``0x10``, ``0b1``, ``1_0``,
    ``1:30`` -- reading each scalar's text from the composed node. A decimal
    ``id: 2`` stays the id ``"02"``, as documented. A document PyYAML's own
    constructor built (a merge key: no node kept) is not checked.

    Raises:
        UserError: naming the file, the key and the quoted spelling to write.
    """
    node = parsed[1] if parsed is not None else None
    if not isinstance(node, yaml.MappingNode):
        return
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.value not in _ID_KEYS:
            continue
        if key_node.value == "id":
            _check_written_id(value_node, "id", file=file)
        elif isinstance(value_node, yaml.SequenceNode):
            for index, entry in enumerate(value_node.value):
                _check_written_id(entry, f"depends_on[{index}]", file=file)
        else:
            _check_written_id(value_node, "depends_on", file=file)


def _check_written_id(node: Any, key: str, *, file: str) -> None:
    spelling = strict_yaml.int_spelling(node)
    if spelling is None:
        return
    how, number = spelling
    text = node.value
    became = (
        f'so the prompt\'s id would be "{number:02d}"'
        if key == "id"
        else f"so it would name the prompt numbered {number}"
    )
    quoted = f'id: "{text}"' if key == "id" else f'"{text}"'
    raise UserError(
        f"YAML 1.1 reads the unquoted {text} as the {how} number {number}, {became} "
        f"(line {node.start_mark.line + 2})",
        file=file,
        key=key,
        fix=f"quote it: {quoted}",
    )


_KEYS_AS_WRITTEN = ("notify",)
"""Top-level keys whose mapping's keys are read as written: ``notify: {on: [...]}``
keeps ``on`` a name, not YAML 1.1's boolean (see :func:`strict_yaml.load`)."""


def parse_yaml(raw: str, *, file: str, line_offset: int = 0) -> Any:
    """Parse YAML safely; errors name the line (1-based in the file).

    Raises:
        UserError: invalid YAML, a mapping that repeats a key (YAML would keep
            the last one silently), or a document that expands (through
            anchors and aliases) past :data:`MAX_VALUES` values or
            :data:`MAX_DEPTH` levels.
    """
    return _parse_yaml_node(raw, file=file, line_offset=line_offset)[0]


def _parse_yaml_node(raw: str, *, file: str, line_offset: int = 0) -> tuple[Any, Any]:
    """:func:`parse_yaml`'s value and the composed node (``load_with_node``)."""
    try:
        data, node = strict_yaml.load_with_node(raw, keys_as_written=_KEYS_AS_WRITTEN)
    except strict_yaml.DuplicateKeyError as exc:
        raise UserError(
            f"duplicate key {exc.key!r} at line {exc.line + line_offset} (first at line "
            f"{exc.first_line + line_offset}); YAML would silently keep only the last one",
            file=file,
            fix="keep one of them (merge their contents into it)",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        where = f"line {mark.line + 1 + line_offset}" if mark is not None else "front matter"
        raise UserError(
            f"invalid YAML at {where}: {problem}",
            file=file,
            fix="fix the YAML syntax (check indentation, quotes and colons)",
        ) from None
    except RecursionError:
        raise UserError(
            "YAML is nested too deeply", file=file, fix="flatten the front matter"
        ) from None
    check_expanded_size(data, file=file)
    return data, node


def check_expanded_size(data: Any, *, file: str) -> None:
    """Refuse ``data`` if, expanded, it holds more than :data:`MAX_VALUES` values.

    Walks the structure iteratively, counting a shared (aliased) list or
    mapping once per reference, and stops at the first limit crossed, so the
    cost is bounded by the limits, not by the expanded size.

    Raises:
        UserError: more than :data:`MAX_VALUES` values, or deeper than
            :data:`MAX_DEPTH` levels (which also catches self-referencing aliases).
    """
    count = 1
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[Any] = [*node.keys(), *node.values()]
        elif isinstance(node, list | tuple | set):
            children = list(node)
        else:
            continue
        if not children:
            continue
        if depth >= MAX_DEPTH:
            raise UserError(
                f"front matter nests more than {MAX_DEPTH} levels deep",
                file=file,
                fix="flatten it (and remove any alias that refers to itself)",
            )
        count += len(children)
        if count > MAX_VALUES:
            raise UserError(
                f"front matter expands to more than {MAX_VALUES:,} values (YAML anchors/aliases)",
                file=file,
                fix="remove the aliases",
            )
        # only containers go on the stack: a scalar child is counted above and has no children
        stack.extend((child, depth + 1) for child in children if isinstance(child, _CONTAINERS))


_CONTAINERS = (dict, list, tuple, set)
