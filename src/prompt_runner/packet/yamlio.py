"""Round-trip YAML for the files the authoring commands write or edit.

ruamel.yaml's round-trip mode keeps an author's comments, key order and
quoting when a command edits a file (``packet add-repo``, ``control amend
--persist``, ``packet migrate-contracts --write``). New values are written in
the reference system's style: strings double-quoted, two-space mappings, list
items indented under their key (``targets:\\n  - "app"``). Such an edit
splits the file with :func:`split_for_edit` and joins it with
:meth:`Document.with_front`: the BOM, the ``---`` lines and the body stay the
file's bytes, and the new front matter is written with the file's line end (a
CRLF file stays CRLF).
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Document:
    """A file with YAML front matter, split so an edit can put it back as it was.

    Only the front matter an edit dumps is new text; the BOM, the opening and
    closing lines and the body are the file's own, byte for byte, and the
    dumped YAML is written with the file's line end (:attr:`newline`), so a
    CRLF file stays CRLF and an LF file LF.
    """

    bom: str
    """``"\\ufeff"`` when the file starts with a byte order mark, else ``""``."""
    opening: str
    """The opening ``---`` line as written, its line end included."""
    front: str
    """The front matter's YAML as written (line ends included)."""
    closing: str
    """The closing ``---`` (or ``...``) line as written, its line end included."""
    body: str
    """Everything after the closing line, as written."""

    @property
    def newline(self) -> str:
        """The file's line end: the one the opening line ends with (``\\n`` if none)."""
        ends = self.opening[len(self.opening.rstrip("\r\n")) :]
        return ends or "\n"

    @property
    def yaml_text(self) -> str:
        """:attr:`front` with ``\\n`` line ends, for ruamel to load.

        ruamel keeps a comment's line end as it read it, so a CRLF front
        matter loaded as it is would dump with ``\\r\\n`` and ``\\n`` mixed.
        """
        return _lf(self.front)

    def with_front(self, dumped: str) -> str:
        """The file's text with ``dumped`` (YAML with ``\\n`` line ends) as its
        front matter, written with :attr:`newline`; the rest as it was."""
        front = _lf(dumped)
        if self.newline != "\n":
            front = front.replace("\n", self.newline)
        return f"{self.bom}{self.opening}{front}{self.closing}{self.body}"


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _is_fence(line: str, *marks: str) -> bool:
    """``line`` (its line end included) is one of ``marks``, as the prompt
    loader reads it (:func:`~prompt_runner.packet.frontmatter.split_front_matter_node`):
    trailing blanks allowed, leading ones not."""
    return line.rstrip("\r\n").rstrip() in marks


def split_for_edit(text: str, *, file: str | None = None) -> Document | None:
    """``text`` as a :class:`Document`; ``None``: it has no front matter.

    The lines are those the prompt loader sees: one BOM, then a ``---`` line,
    and the first ``---`` or ``...`` line after it closes the front matter.

    Raises:
        UserError: the front matter is opened but never closed (naming ``file``).
    """
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    if not lines or not _is_fence(lines[0], "---"):
        return None
    for index in range(1, len(lines)):
        if _is_fence(lines[index], "---", "..."):
            return Document(
                bom=bom,
                opening=lines[0],
                front="".join(lines[1:index]),
                closing=lines[index],
                body="".join(lines[index + 1 :]),
            )
    raise UserError("front matter is never closed", file=file, fix="add a closing '---' line")


def split_document(text: str, *, file: str | None = None) -> tuple[str, str] | None:
    """``(front matter YAML, rest after the closing ---)`` byte-exact; ``None``: no front matter.

    Raises:
        UserError: the front matter is opened but never closed (naming ``file``).
    """
    found = split_for_edit(text, file=file)
    return None if found is None else (found.front, found.body)


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
