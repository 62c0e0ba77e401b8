"""The parsed-packet cache: what reading a packet's files produced, kept in the
user's cache directory and used again while those files hold the same bytes.

Parsing YAML front matter is most of the cost of ``plan``, ``list`` and
``packet lint`` on a big packet, and the result is a function of the files'
bytes alone. So each command that parses a packet keeps the plain data it
parsed (front matter as JSON values, bodies) in one entry per packet directory
and, the next time, reads the entry instead of parsing -- provided the
entry's *digest* is the digest of today's files (see :func:`inputs_digest`).

The digest is by content, never by modification times: BLAKE2b over the
cache's schema version, Prompt Runner's version, the packet directory, the
prompt directory's name, the manifest's bytes, the prompt directory's
listing (every name and whether it is a file or a directory: the files that
are not prompts are reported as ignored) and the bytes of every prompt file.
An edit that keeps a file's size and mtime, an added or removed file, a
changed manifest -- each gives another digest, and the entry is not used.
Only what parsing those files gives is kept; whatever else a command reads is
read again on every use, never cached: where each repo resolves to
(symlinks, ``~``), every contract path against the work trees, the profiles,
the state. A section that depends on more than the files puts that into its
digest too (lint's prompt findings: what the manifest told the linter, read
afresh each time; see :mod:`prompt_runner.packet.lint.cached`).

Where: ``$PROMPT_RUNNER_CACHE_DIR`` (an empty value turns the cache off), else
``$XDG_CACHE_HOME/prompt-runner``, else ``~/.cache/prompt-runner``. A relative
value of either variable is ignored, as the XDG Base Directory specification
says of ``XDG_CACHE_HOME``: it would put the cache in whatever directory a
command runs from -- often a work tree, where a commit of every change would
take it in; entries
are ``packets/<hash of the packet directory>.<section>`` (a first line naming
the format and the checksum of the rest, then JSON). Nothing is ever written
into the packet. The cache is derived data: an entry that cannot be written
(a read-only home, a full disk) is silently not written, and one that is
missing, unreadable, corrupt, of another version or for other files is
silently not used -- a command then parses the files as if there were no
cache, and never fails or prints anything because of it.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..state import user_cache
from ..state.code_stamp import code_stamp
from .file_read import read_regular

ENTRY_MAX_BYTES = 1 << 30
"""A kept entry larger than this is not read (a corrupt or planted file)."""

SCHEMA_VERSION = 1
"""Bumped whenever what a section holds, or how the digest is made, changes."""


CACHE_ENV = user_cache.CACHE_ENV
"""Overrides the cache directory; set to the empty string to turn the cache off."""


def cache_dir() -> Path | None:
    """The cache directory (not created), or ``None`` when the cache is off
    (:func:`prompt_runner.state.user_cache.cache_dir` gives the rule)."""
    found = user_cache.cache_dir()
    return Path(found) if found is not None else None


def _version() -> str:
    # the version and the code that parses: an editable install changes under one version
    return code_stamp()


def entry_path(root: Path, section: str) -> Path | None:
    """The file of section ``section`` of the packet at ``root`` (absolute), ``None``
    when the cache is off."""
    base = cache_dir()
    if base is None:
        return None
    name = hashlib.blake2b(os.fsencode(root), digest_size=20).hexdigest()
    return base / "packets" / f"{name}.{section}"


# -- what was read ----------------------------------------------------------------------


@dataclass
class Reads:
    """The bytes a parse read: the manifest's, and each prompt file's by name."""

    manifest: bytes | None = None
    prompts: dict[str, bytes] = field(default_factory=dict)


def inputs_digest(
    root: Path,
    prompt_dir: str,
    manifest: bytes,
    entries: Iterable[tuple[str, str]],
    prompts: Mapping[str, bytes],
) -> str:
    """The digest a section is kept under (see the module docstring).

    Args:
        root: the packet directory (absolute).
        prompt_dir: the prompt directory relative to ``root`` (``prompts``).
        manifest: the manifest's bytes.
        entries: the prompt directory's :func:`~prompt_runner.packet.files.listing`.
        prompts: prompt file name -> its bytes, for every prompt file read.
    """
    h = hashlib.blake2b(digest_size=32)

    def part(data: bytes) -> None:
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    part(f"prompt-runner packet cache {SCHEMA_VERSION} {_version()}".encode())
    part(os.fsencode(root))
    part(prompt_dir.encode("utf-8", "surrogateescape"))
    part(manifest)
    names = b"\0".join(f"{kind}{name}".encode("utf-8", "surrogateescape") for name, kind in entries)
    part(names)
    for name in sorted(prompts):
        part(name.encode("utf-8", "surrogateescape"))
        part(prompts[name])
    return h.hexdigest()


def read_prompt_bytes(prompt_dir: Path, names: Iterable[str]) -> dict[str, bytes] | None:
    """Each named file's bytes, or ``None`` when one cannot be read (no cache use
    then; the parse that follows names the file). Read by the parse's rule
    (:func:`.file_read.read_regular`): a named pipe or a device is never read."""
    out: dict[str, bytes] = {}
    for name in names:
        try:
            out[name] = read_regular(os.path.join(prompt_dir, name))
        except UserError:
            return None
    return out


# -- entries ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """One kept result: the ``digest`` of its inputs (:func:`inputs_digest`) and its
    ``data`` (plain JSON values, see :func:`is_plain`)."""

    digest: str
    data: Any


def read_section(root: Path, name: str) -> Section | None:
    """Section ``name`` of the packet at ``root``, or ``None`` (none kept, unreadable,
    corrupt, another schema or version, another packet's)."""
    path = entry_path(root, name)
    if path is None:
        return None
    try:
        import orjson  # lazy: as in write_section

        data = read_regular(path, limit=ENTRY_MAX_BYTES)  # a pipe put there never blocks
        head, _, body = data.partition(b"\n")
        if head != _MAGIC + _checksum(body):
            return None  # torn, damaged or edited
        doc = orjson.loads(body)
    except (OSError, ValueError, UserError):
        return None
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != SCHEMA_VERSION
        or doc.get("version") != _version()
        or doc.get("root") != os.fsdecode(root)
        or doc.get("section") != name
        or not isinstance(doc.get("digest"), str)
    ):
        return None
    return Section(doc["digest"], doc.get("data"))


def write_section(root: Path, name: str, section: Section) -> None:
    """Keep ``section`` as ``name`` for the packet at ``root`` (replacing what was
    kept); silently nothing when the cache is off, the data is not plain JSON,
    or writing fails."""
    path = entry_path(root, name)
    if path is None or not is_plain(section.data):
        return
    doc = {
        "schema": SCHEMA_VERSION,
        "version": _version(),
        "root": os.fsdecode(root),
        "section": name,
        "digest": section.digest,
        "data": section.data,
    }
    try:
        import orjson  # lazy: only a command that parsed a packet writes

        from ..state.atomic import write_bytes_atomic

        body = orjson.dumps(doc)
        write_bytes_atomic(path, _MAGIC + _checksum(body) + b"\n" + body, durable=False)
    except (OSError, TypeError, ValueError):
        return  # the cache is an optimisation: a failed write costs the next parse only


_MAGIC = b"prompt-runner packet-cache "
"""An entry's first line: this, the BLAKE2b of the rest (hex), a newline; then the JSON."""


def _checksum(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=16).hexdigest().encode()


_INT_RANGE = (-(2**63), 2**64 - 1)  # what orjson writes and reads back as the same int


def is_plain(value: Any) -> bool:
    """Whether ``value`` comes back from JSON exactly as it is: dicts with string
    keys, lists, strings, bools, ``None``, ints orjson can write, finite floats
    (a YAML date, a set, a tuple, bytes or NaN would come back as something else)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not all(type(k) is str for k in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int:
            if not _INT_RANGE[0] <= item <= _INT_RANGE[1]:
                return False
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif kind not in (str, bool, type(None)):
            return False
    return True
