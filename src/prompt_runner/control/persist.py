"""Write an amended contract back into its prompt file (``control amend|relax --persist``).

A ruamel.yaml round trip of the front matter: comments and key order are
kept, only the ``verify`` value changes. Imported only by the commands that
persist (ruamel.yaml is heavy; the control CLI's other commands never load it).
"""

from __future__ import annotations

import difflib
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.util import load_yaml_guess_indent

from ..errors import UserError
from ..packet.own_edits import write_packet_file
from ..packet.yamlio import split_for_edit
from ..verifier import parse_contract


def amended_text(prompt_file: Path, after: Mapping[str, Sequence[Any]]) -> tuple[bytes, str]:
    """``prompt_file``'s bytes now, and its text with ``after`` as its ``verify:`` block.

    Nothing is written (:func:`write_prompt_file` does, once the caller has
    checked the packet loads with the new text). A ruamel.yaml round trip
    keeps the front matter's comments and key order; only the ``verify``
    value changes (an existing clause keeps its place, entries that are plain
    paths stay plain strings). The body, the ``---`` lines and a BOM are
    untouched, and the front matter keeps the file's line end (CRLF stays CRLF).

    Returns:
        ``(old bytes, new text)``.

    Raises:
        UserError: the file has no YAML front matter.
        OSError: the file cannot be read.
    """
    data = prompt_file.read_bytes()
    document = split_for_edit(data.decode("utf-8"), file=str(prompt_file))
    if document is None:
        raise UserError("has no YAML front matter", file=prompt_file, fix="add a --- block")
    front_text = document.yaml_text
    _, indent, block_seq_indent = load_yaml_guess_indent(front_text)
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=indent, offset=block_seq_indent or 0)
    front = yaml.load(front_text) or {}
    verify = front.get("verify")
    if verify is None:
        verify = CommentedMap()
        front["verify"] = verify
    for clause in list(verify):
        if clause not in after:
            del verify[clause]
    for clause, entries in after.items():
        old = verify.get(clause)
        if isinstance(old, list):
            _update_in_place(clause, old, list(entries), file=str(prompt_file))
        else:
            verify[clause] = [_plain(e) for e in entries]
    out = io.StringIO()
    yaml.dump(front, out)
    return data, document.with_front(out.getvalue())


def write_prompt_file(
    prompt_file: Path, old: bytes, new_text: str, *, state_root: Path | None = None
) -> str:
    """Replace ``prompt_file`` (whose bytes were ``old``) with ``new_text``; return a
    unified diff.

    The file is replaced atomically; a symlinked prompt file is written
    through (its target is replaced, the link kept). With ``state_root`` the
    write is recorded as prompt-runner's own packet edit, so a session running
    meanwhile never commits it (:mod:`prompt_runner.packet.own_edits`).

    Raises:
        StorageError: the file or the record cannot be written.
    """
    write_packet_file(prompt_file, new_text, state_root=state_root, by="control --persist")
    return "".join(
        difflib.unified_diff(
            old.decode("utf-8").splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"a/{prompt_file.name}",
            tofile=f"b/{prompt_file.name}",
        )
    )


def restore_prompt_file(prompt_file: Path, old: bytes) -> None:
    """Put ``old``, the bytes :func:`amended_text` read, back into ``prompt_file``,
    byte for byte: a persist that failed after its write leaves the file as it
    was. Not recorded as prompt-runner's own edit: the file is what it was
    before the command, whoever wrote that.

    Raises:
        StorageError: the file cannot be written.
    """
    write_packet_file(prompt_file, old.decode("utf-8"), by="control --persist (undone)")


def _plain(entry: Any) -> Any:
    """A canonical entry as an author writes it: a bare path stays a string."""
    if isinstance(entry, Mapping) and set(entry) == {"path"}:
        return entry["path"]
    return dict(entry) if isinstance(entry, Mapping) else entry


def _update_in_place(clause: str, old: list[Any], new: list[Any], *, file: str) -> None:
    """Make the YAML list ``old`` hold ``new`` (canonical) while keeping untouched items.

    Items already there keep their position and comments; gone ones are
    deleted; added ones are appended.
    """

    def canon(item: Any) -> Any:
        try:
            raw = json.loads(json.dumps({clause: [item]}, default=str))
            return parse_contract(raw, file=file).to_raw()[clause][0]
        except (UserError, KeyError, IndexError, TypeError, ValueError):
            return None

    have = [canon(item) for item in old]
    for index in reversed(range(len(old))):
        if have[index] not in new:
            del old[index]
    for entry in new:
        if entry not in have:
            old.append(_plain(entry))
