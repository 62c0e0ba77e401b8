"""What the authoring commands share when they write a packet's files: names,
repo paths as the manifest stores them, and a new file written only once."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import UserError
from .frontmatter import split_front_matter
from .models import Manifest
from .validation import validate_model
from .yamlio import Document, split_for_edit

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""A packet or repo name: a letter or digit, then letters, digits, ``_``, ``.``, ``-``."""


def split_manifest_text(text: str, where: str) -> Document:
    """The manifest's text split for an edit (:func:`.yamlio.split_for_edit`):
    its BOM, fences, line end and body are written back as they were.

    Raises:
        UserError: no front matter, or it is not closed.
    """
    try:
        found = split_for_edit(text)
    except UserError as exc:
        raise UserError(exc.reason, file=where, fix=exc.fix) from None
    if found is None:
        raise UserError("has no YAML front matter", file=where, fix="start it with a '---' line")
    return found


def validated_manifest_text(front: str, body: str, where: str) -> str:
    """The manifest text of ``front`` and ``body``, once it validates.

    Raises:
        UserError: the manifest model rejects it.
    """
    return validated_manifest(f"---\n{front}---\n{body}", where)


def validated_manifest(text: str, where: str) -> str:
    """The whole manifest text ``text``, once it validates.

    Raises:
        UserError: the manifest model rejects it.
    """
    raw, _ = split_front_matter(text, file=where)
    validate_model(Manifest, raw, file=where)
    return text


def write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text``.

    Raises:
        UserError: it already exists.
    """
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UserError("already exists", file=path, fix="pick another name, or edit it") from None


def repo_path_text(path: str, packet_dir: Path, cwd: Path | None) -> str:
    """A repo path as the manifest should store it.

    Absolute paths stay absolute. With ``cwd``, a relative ``path`` means
    relative to ``cwd`` (where the user typed it) and is rewritten relative to
    the packet directory, which is what the manifest resolves against.

    Raises:
        UserError: ``path`` is empty.
    """
    if not path.strip():
        raise UserError("repo path is empty", key="repos", fix="give the repo's directory")
    expanded = os.path.expanduser(path)
    if os.path.isabs(expanded) or cwd is None:
        return expanded
    return os.path.relpath(os.path.abspath(cwd / expanded), os.path.abspath(packet_dir))


def parse_repo_flag(text: str) -> tuple[str, str]:
    """``"NAME=PATH"`` -> ``(NAME, PATH)``.

    Raises:
        UserError: no ``=``, or an empty side.
    """
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise UserError(
            f"--repo {text!r} is not NAME=PATH", key="--repo", fix="write e.g. --repo app=../app"
        )
    return name.strip(), path.strip()


def check_repo_name(name: str) -> None:
    """Raise :class:`UserError` unless ``name`` can name a repo (``packet`` is taken)."""
    if name == "packet" or not NAME.match(name):
        raise UserError(
            f"invalid repo name {name!r}",
            key="repos",
            fix="start it with a letter or digit, then use letters, digits, '_', '.', '-' "
            "('packet' is reserved for the packet dir)",
        )
