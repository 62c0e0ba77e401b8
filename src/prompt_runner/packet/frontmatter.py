"""Split a markdown file into YAML front matter and body.

Format (the reference system's): the file starts with a line ``---``, the YAML
front matter follows, and a line ``---`` closes it; everything after is the
markdown body. YAML is parsed with PyYAML's safe loader (C-accelerated when
available). Every malformed case raises :class:`~prompt_runner.errors.UserError`
naming the file and the fix.

YAML anchors and aliases let a few hundred bytes describe a structure of
billions of values ("billion laughs"); the loader shares the aliased objects,
but anything that walks the result (validation, JSON dumps) expands them. So
every parsed document is measured by what its aliases add -- the values it
holds expanded, counting a shared object each time it is referenced, minus
the values it writes (:func:`~prompt_runner.strict_yaml.alias_growth`, the
``yaml`` clause's rule) -- and refused past :data:`MAX_VALUES` added values or
:data:`MAX_DEPTH` levels, long before the expansion costs anything. The values
written are bounded by the file's size alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .. import strict_yaml
from ..errors import UserError
from .file_read import read_regular

MAX_VALUES = strict_yaml.MAX_ALIAS_GROWTH
"""Most values (scalars, keys, lists, mappings) a parsed YAML document's aliases
may add to those it writes."""
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


_ID_KEYS = ("id", "depends_on", "phase")

_PLAIN_TYPES = {
    "tag:yaml.org,2002:bool": "the boolean {value}",
    "tag:yaml.org,2002:null": "null (no value)",
    "tag:yaml.org,2002:float": "the number {value}",
    "tag:yaml.org,2002:timestamp": "a date",
}
"""What YAML 1.1 makes of an unquoted scalar that is neither text nor an integer."""


def check_written_ids(parsed: tuple[str, Any] | None, *, file: str) -> None:
    """Refuse a prompt's ``id``, ``depends_on`` entry or ``phase`` written
    unquoted in a form YAML 1.1 reads as something other than its text, reading
    each scalar's text from the composed node:

    * a number form whose text is not the number in decimal -- ``010`` (octal
      8, so the prompt would be ``"08"``), ``0x10``, ``0b1``, ``1_0``, ``1:30``
      -- or a signed one (``+1`` and ``-0`` would be ``"01"`` and ``"00"``);
    * a boolean (``yes``, ``off``), a null (``~``, nothing), a float
      (``1.5``, ``.inf``) or a date (``2026-01-01``).

    A decimal ``id: 2`` stays the id ``"02"``, as documented. The sentence
    names the text as written and its line, not the value YAML made of it. A
    document PyYAML's own constructor built (a merge key: no node kept) is not
    checked.

    Raises:
        UserError: naming the file, the key, the line and the spelling to write.
    """
    node = parsed[1] if parsed is not None else None
    if not isinstance(node, yaml.MappingNode):
        return
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.value not in _ID_KEYS:
            continue
        if key_node.value == "depends_on" and isinstance(value_node, yaml.SequenceNode):
            for index, entry in enumerate(value_node.value):
                _check_written_id(entry, f"depends_on[{index}]", file=file)
        else:
            _check_written_id(value_node, key_node.value, file=file)


def _check_written_id(node: Any, key: str, *, file: str) -> None:
    if not isinstance(node, yaml.ScalarNode) or node.style:
        return  # quoted, or a mapping/list the models refuse with their own sentence
    text = node.value
    line = f"line {node.start_mark.line + 2}"
    spelling = strict_yaml.int_spelling(node)
    if spelling is None and node.tag == "tag:yaml.org,2002:int" and text[:1] in "+-":
        spelling = ("signed", int(text))
    if spelling is not None:
        how, number = spelling
        shown = f"{number:02d}" if number >= 0 else str(number)
        if key == "id":
            became = f'so the prompt\'s id would be "{shown}"'
        elif key == "phase":
            became = f'so its phase would be "{number}"'
        else:
            became = f"so it would name the prompt numbered {number}"
        what = "number" if how == "signed" else f"{how} number"
        written = f'"{shown}"' if how == "signed" and key != "phase" else f'"{text}"'
        if number < 0 and key != "phase":
            fix = 'write the id it means, quoted, e.g. "01"'
        elif key in ("id", "phase"):
            fix = f"quote it: {key}: {written}"
        else:
            fix = f"quote it: {written}"
        raise UserError(
            f"YAML 1.1 reads the unquoted {text} as the {what} {number}, {became} ({line})",
            file=file,
            key=key,
            fix=fix,
        )
    template = _PLAIN_TYPES.get(node.tag)
    if template is None or (node.tag.endswith(":null") and key == "phase"):
        return  # no phase: written as nothing, it means just that
    if key == "depends_on":  # the whole value, not a list
        written_as = f"the unquoted {text}" if text else "an empty value"
        what = template.format(value=_bool_word(text) if "bool" in node.tag else text)
        raise UserError(
            f"YAML 1.1 reads {written_as} as {what}, not a list of prompt ids ({line})",
            file=file,
            key=key,
            fix='write a list, e.g. depends_on: ["01"], or depends_on: [] for none',
        )
    value = text.lower() if node.tag.endswith(":float") else _bool_word(text)
    read_as = template.format(value=value)
    written_as = f"the unquoted {text}" if text else "an empty value"
    if node.tag.endswith(":null"):
        fix = 'write the id quoted, e.g. id: "01"'
        if key.startswith("depends_on"):
            fix = 'write the id of the prompt it needs, quoted, e.g. "01"'
    else:
        fix = f'quote it: {key}: "{text}"' if key in ("id", "phase") else f'quote it: "{text}"'
    raise UserError(
        f"YAML 1.1 reads {written_as} as {read_as}, not text ({line})",
        file=file,
        key=key,
        fix=fix,
    )


def _bool_word(text: str) -> str:
    """``true`` or ``false`` for a YAML 1.1 boolean spelling (``yes``, ``Off``...)."""
    return "true" if text.lower() in ("y", "yes", "true", "on") else "false"


_KEYS_AS_WRITTEN = ("notify",)
"""Top-level keys whose mapping's keys are read as written: ``notify: {on: [...]}``
keeps ``on`` a name, not YAML 1.1's boolean (see :func:`strict_yaml.load`)."""


def parse_yaml(raw: str, *, file: str, line_offset: int = 0) -> Any:
    """Parse YAML safely; errors name the line (1-based in the file).

    Raises:
        UserError: invalid YAML, a mapping that repeats a key (YAML would keep
            the last one silently), or a document that expands (through
            anchors and aliases) past :data:`MAX_VALUES` values beyond those
            it writes, or past :data:`MAX_DEPTH` levels.
    """
    return _parse_yaml_node(raw, file=file, line_offset=line_offset)[0]


def _parse_yaml_node(raw: str, *, file: str, line_offset: int = 0) -> tuple[Any, Any]:
    """:func:`parse_yaml`'s value and the composed node (``load_with_node``)."""
    try:
        data, node = strict_yaml.load_with_node(raw, keys_as_written=_KEYS_AS_WRITTEN)
    except strict_yaml.DuplicateKeyError as exc:
        line, first = exc.line + line_offset, exc.first_line + line_offset
        where = (
            f"twice on line {line}" if line == first else f"at line {line} (first at line {first})"
        )
        raise UserError(
            f"duplicate key {exc.key!r} {where}; YAML would silently keep only the last one",
            file=file,
            fix="keep one of them (merge their contents into it)",
        ) from None
    except yaml.reader.ReaderError as exc:  # a control character: no mark, a position
        line = raw[: exc.position].count("\n") + 1 + line_offset
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        shown = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        raise UserError(
            f"invalid YAML at line {line}: the character {shown} is not allowed in YAML",
            file=file,
            fix='remove it, or write it as an escape in a double-quoted string (e.g. "\\t")',
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
    check_expanded_size(data, file=file, anchored="&" in raw)
    return data, node


def check_expanded_size(data: Any, *, file: str, anchored: bool = True) -> None:
    """Refuse ``data`` if its aliases add more than :data:`MAX_VALUES` values to
    those it writes, or if it nests deeper than :data:`MAX_DEPTH` levels.

    The added values are counted by :func:`~prompt_runner.strict_yaml.alias_growth`
    (each list and map sized once, in time proportional to the values written,
    however large the expansion); a document without aliases adds none, and one
    whose text has no ``&`` (``anchored=False``) has no anchor for an alias to
    name, so it is not counted. Only then is the depth walked, the expanded way,
    which that bound keeps to the values written plus at most :data:`MAX_VALUES`.

    Raises:
        UserError: more than :data:`MAX_VALUES` added values, or deeper than
            :data:`MAX_DEPTH` levels (which also catches self-referencing aliases).
    """
    growth = strict_yaml.alias_growth(data) if anchored else 0
    if growth is None:  # a list or map that contains itself: endlessly deep
        raise _too_deep(file)
    if growth > MAX_VALUES:
        raise UserError(
            f"front matter expands to more than {MAX_VALUES:,} values (YAML anchors/aliases)",
            file=file,
            fix="remove the aliases",
        )
    # a non-empty list or map at depth MAX_DEPTH (the document's own at 0) is too deep
    stack: list[tuple[Any, int]] = [(data, 0)] if isinstance(data, _CONTAINERS) else []
    while stack:
        node, depth = stack.pop()
        if not node:
            continue
        if depth >= MAX_DEPTH:
            raise _too_deep(file)
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        stack.extend([(child, depth + 1) for child in children if isinstance(child, _CONTAINERS)])


def _too_deep(file: str) -> UserError:
    return UserError(
        f"front matter nests more than {MAX_DEPTH} levels deep",
        file=file,
        fix="flatten it (and remove any alias that refers to itself)",
    )


_CONTAINERS = (dict, list, tuple, set)
