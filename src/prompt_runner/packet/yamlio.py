"""Round-trip YAML for the files the authoring commands write or edit.

ruamel.yaml's round-trip mode keeps an author's comments, key order and
quoting when a command edits a file (``packet add-repo``, ``control amend
--persist``, ``packet migrate-contracts --write``). New values are written in
the reference system's style: strings double-quoted, two-space mappings, list
items indented under their key (``targets:\\n  - "app"``).
"""

from __future__ import annotations

import io
import itertools
from typing import Any

from ..errors import UserError


def round_trip() -> Any:
    """A ruamel ``YAML`` in round-trip mode with the house layout."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def round_trip_like(front: str) -> Any:
    """:func:`round_trip` with the mapping indent and list-item offset ``front`` uses.

    So rewriting one entry of a file laid out differently (``- a`` flush under
    its key, four-space mappings) does not re-indent the rest of it. What the
    text does not show keeps the house layout.
    """
    yaml = round_trip()
    mapping, offset = 2, 2
    lines = [ln for ln in front.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    found_mapping = found_offset = False
    for before, line in itertools.pairwise(lines):
        parent = len(before) - len(before.lstrip())
        indent = len(line) - len(line.lstrip())
        if not before.rstrip().endswith(":") or indent < parent:
            continue
        if line.lstrip().startswith("- ") and not found_offset:
            offset, found_offset = indent - parent, True
        elif not line.lstrip().startswith("-") and indent > parent and not found_mapping:
            mapping, found_mapping = indent - parent, True
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    return yaml


def quoted(value: Any) -> Any:
    """``value`` with every string double-quoted, lists and mappings included."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if isinstance(value, str):
        return DoubleQuotedScalarString(value)
    if isinstance(value, list | tuple):
        return CommentedSeq(quoted(v) for v in value)
    if isinstance(value, dict):
        out = CommentedMap()
        for key, item in value.items():
            out[key] = quoted(item)
        return out
    return value


def dump(yaml: Any, data: Any) -> str:
    """``data`` as YAML text."""
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()


def split_document(text: str, *, file: str | None = None) -> tuple[str, str] | None:
    """``(front matter YAML, rest after the closing ---)`` byte-exact; ``None``: no front matter.

    Raises:
        UserError: the front matter is opened but never closed (naming ``file``).
    """
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise UserError("front matter is never closed", file=file, fix="add a closing '---' line")


def load_mapping(yaml: Any, front: str, where: str) -> Any:
    """The front matter ``front`` as a ruamel mapping (empty -> an empty one).

    Raises:
        UserError: not valid YAML, or not a mapping; naming ``where``.
    """
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    try:
        data = yaml.load(front) if front.strip() else None
    except YAMLError as exc:
        raise UserError(
            f"front matter is not valid YAML ({str(exc).splitlines()[0]})",
            file=where,
            fix="fix the YAML",
        ) from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, CommentedMap):
        raise UserError("front matter is not a mapping", file=where, fix="write key: value lines")
    return data
