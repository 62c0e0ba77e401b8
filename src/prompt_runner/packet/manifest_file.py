"""Read a YAML manifest file strictly and validate it against its schema.

The fleet and workspace manifests are read the same way: a regular file
(:func:`.file_read.read_regular`, the rule every packet file is read by) of at
most :data:`MAX_BYTES` of UTF-8, parsed by :func:`.frontmatter.parse_yaml` (a
repeated key is an error), a mapping whose ``schema`` is the one this build
reads, then validated by pydantic. Every problem is one
:class:`~prompt_runner.errors.UserError` (exit 2) naming the file, the key
and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import UserError
from .file_read import read_regular
from .frontmatter import parse_yaml
from .validation import validate_model

M = TypeVar("M", bound=BaseModel)

MAX_BYTES = 1_000_000
"""A manifest larger than this is refused (it is a few dozen lines)."""


def read_manifest(file: Path, *, kind: str, missing_fix: str) -> Any:
    """The parsed YAML of the ``kind`` manifest (``"fleet"``, ``"workspace"``) at ``file``.

    Args:
        file: the manifest file.
        kind: what it is, for the messages.
        missing_fix: the fix when ``file`` is missing or not a file.

    Raises:
        UserError: missing, a directory or not a regular file (a named pipe,
            a device: refused before any read), over :data:`MAX_BYTES`, not UTF-8,
            unreadable, or invalid YAML.
    """
    return parse_yaml(_read(file, kind, missing_fix), file=str(file))


def validate_manifest(model: type[M], data: Any, *, kind: str, schema: str, file: str) -> M:
    """Parsed YAML ``data`` from ``file`` as ``model``: a mapping whose ``schema``
    is ``schema``, validated.

    Raises:
        UserError: not a mapping, a missing or other ``schema``, or the first
            validation problem (naming ``file``, the key path and the fix).
    """
    if not isinstance(data, dict):
        raise UserError(
            f"a {kind} manifest must be a YAML mapping, not {type(data).__name__}",
            file=file,
            fix=f"start it with `schema: {schema}` and `id: NAME`",
        )
    given = data.get("schema")
    if given != schema:
        raise UserError(
            "is missing" if given is None else f"{given!r} is not a {kind} schema this build reads",
            file=file,
            key="schema",
            fix=f"write `schema: {schema}`",
        )
    return validate_model(model, data, file=file)


def _read(file: Path, kind: str, missing_fix: str) -> str:
    data = read_regular(
        file,
        limit=MAX_BYTES,
        not_file_fix=missing_fix,
        missing="does not exist",
        missing_fix=missing_fix,
    )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError("is not UTF-8 text", file=file, fix="save it as UTF-8") from None
