"""Whether a packet's manifest loads, for the light readers (``status``, ``watch``).

The text reader (:mod:`~prompt_runner.packet.prompt_ids_text`) reads only
the manifest's ``prompt_dir:`` line, so a manifest that ``run`` refuses --
YAML that does not parse, an unknown ``provider:``, a key given twice inside
``repos:`` -- passed ``status`` without a word. Only the loader can tell, and
importing it (YAML, the pydantic models) costs more than ``status`` itself.
So a verdict is kept: once the manifest's text has been validated by the
loader (a ``run``, ``list``, ``plan`` that parsed it: :func:`keep_loads`) or by
the loader's own steps here (:func:`manifest_error`), the text is kept in the user's
cache directory, and while the manifest holds that very text (and this code
made the verdict: :func:`~prompt_runner.state.code_stamp.code_stamp`), the
answer is "it loads" for the cost of reading two small files. Whether a
manifest loads is a function of its bytes alone (its repos' paths are
resolved, and checked, by ``run``), so nothing goes stale. The provider is not
judged here: a manifest's ``provider:`` is a default that a prompt, a profile
or ``--provider`` may replace, so an unknown one is refused when a run plans
the prompts that would use it (as ``packet lint`` reports it).

A manifest that does not load is validated again on every call (its sentence
names the file as seen from the current directory; it is the rare state, the
one being fixed). The kept file is ``manifests/<digest of the packet
directory>.ok`` under :func:`~prompt_runner.state.user_cache.cache_dir`: a
header line, then the manifest's bytes. A missing, damaged or other
version's file is not used; one that cannot be written is not written; the
cache turned off (``PROMPT_RUNNER_CACHE_DIR=``) keeps nothing.

Imports on the hit path: ``os``, the file rule and the code stamp (no
``pathlib``, no YAML, no pydantic).
"""

from __future__ import annotations

import os

from ..errors import PromptRunnerError, UserError
from ..state.code_stamp import blake2b, code_stamp
from ..state.user_cache import cache_dir
from .file_read import read_regular

MANIFEST_NAME = "prompt_runner_packet.md"  # packet.files.MANIFEST_NAME (not on this path)
_FORMAT = b"prompt-runner manifest-ok 1"
_KEPT_MAX_BYTES = 1 << 20
"""A kept file larger than this is not read (a manifest is a page or two)."""


def _kept_path(root: str) -> str | None:
    base = cache_dir()
    if base is None:
        return None
    key = blake2b(os.path.abspath(root).encode("utf-8", "surrogateescape"), digest_size=16)
    return os.path.join(base, "manifests", key.hexdigest() + ".ok")


MADE_BY = (
    "__init__.py",
    "errors.py",
    "file_kinds.py",
    "option_table.py",
    "packet",
    "paths.py",
    "providers",
    "strict_yaml.py",
)
"""The parts of the package whose code validates a manifest (the front matter's
parser, the models and what they import): the kept verdict's stamp."""


def _header() -> bytes:
    return _FORMAT + b" " + code_stamp(*MADE_BY).encode("ascii") + b"\n"


def _is_kept(kept: str, data: bytes) -> bool:
    try:
        held = read_regular(kept)
    except (UserError, OSError):
        return False
    return len(held) <= _KEPT_MAX_BYTES and held == _header() + data


def _keep(kept: str, data: bytes) -> None:
    # lazy: only a verdict made anew is written
    from pathlib import Path

    from ..errors import StorageError
    from ..state.atomic import write_bytes_atomic

    try:
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        write_bytes_atomic(Path(kept), _header() + data, durable=False)
    except (StorageError, OSError):
        return


def _validated(root: str) -> str | None:
    """The loader's sentence for the manifest of ``root``, or ``None`` when it
    loads: the steps :func:`~prompt_runner.packet.source.read_packet_source`
    takes before it reads any prompt file."""
    from pathlib import Path

    from .files import display_path, find_packet_root, packet_prompt_dir
    from .frontmatter import decode_text, read_bytes, split_front_matter
    from .models import Manifest
    from .validation import validate_model

    try:
        found = find_packet_root(Path(root))
        file = found / MANIFEST_NAME
        where = display_path(file)
        text = decode_text(read_bytes(file, display=where), display=where)
        raw, _ = split_front_matter(text, file=where)
        packet_prompt_dir(found, validate_model(Manifest, raw, file=where))
    except (PromptRunnerError, OSError) as exc:
        return str(exc)
    return None


def keep_loads(root: str | os.PathLike[str], data: bytes) -> None:
    """Keep the verdict "it loads" for the manifest text ``data`` of the packet at
    ``root``: called by the loader once it validated those very bytes
    (:func:`~prompt_runner.packet.source.read_packet_source`), so a ``status``
    after a ``run`` loads nothing to know it. Skipped when it is kept already
    or the cache is off; a write that fails is skipped."""
    kept = _kept_path(os.fspath(root))
    if kept is not None and not _is_kept(kept, data):
        _keep(kept, data)


def manifest_error(root: str | os.PathLike[str]) -> str | None:
    """The sentence ``run`` refuses the manifest of the packet at ``root`` with,
    or ``None`` when the manifest loads.

    A verdict "it loads" is kept for the manifest's text (see the module
    docstring), so a call on an unchanged manifest reads two small files and
    imports nothing more. Never raises for an invalid manifest.
    """
    text = os.fspath(root)
    try:
        data = read_regular(os.path.join(text, MANIFEST_NAME))
    except (UserError, OSError):
        return _validated(text)  # the loader's own sentence for a missing or odd file
    kept = _kept_path(text)
    if kept is not None and _is_kept(kept, data):
        return None
    error = _validated(text)
    if error is None and kept is not None:
        _keep(kept, data)
    return error
