"""Which code made a derived file: the version and the source files that made it.

The caches of this release (the parsed-packet cache, the kept ``status --json``
text, the kept manifest reading of ``watch``) hold what some of Prompt Runner's
own code made. A new release says so by its version, but a checkout installed
in editable mode, a branch switch or a local patch changes the code under the
same version -- and a cache keyed by the version alone then serves what the
old code made. So a cache records :func:`code_stamp`: the version and a digest
of the path, size and mtime (ns) of every ``.py`` file under the parts of the
package named, and is used only while the stamp is the same.

Walking the whole package (~330 files) costs ~1.5 ms; a caller on a hot path
names only the parts its document depends on. Standard library only: the
digest is BLAKE2b from the interpreter's own ``_blake2`` module where it has
one (``hashlib`` loads OpenSSL first, ~3 ms of a hot path's start-up; the two
compute the same digest), else ``hashlib``'s.
"""

from __future__ import annotations

import os
from stat import S_ISDIR

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module: hashlib's is the same digest
    from hashlib import blake2b

from prompt_runner import __version__

__all__ = ["blake2b", "code_stamp"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_stamps: dict[tuple[str, ...], str] = {}


def code_stamp(*parts: str) -> str:
    """``<version>+<digest>`` of the source under ``parts`` of the package.

    Args:
        parts: paths relative to the ``prompt_runner`` package directory, files
            (``api_status.py``) or directories (``state``, walked without
            ``__pycache__``); none means the whole package. A missing part
            counts as missing, not as an error.

    Returns:
        ASCII text with no space or newline, the same within one process (it
        is computed once per ``parts``).
    """
    key = parts or ("",)
    stamp = _stamps.get(key)
    if stamp is None:
        digest = blake2b(digest_size=12)
        for part in key:
            _add(digest, os.path.join(_PACKAGE, part) if part else _PACKAGE)
        stamp = _stamps[key] = f"{__version__}+{digest.hexdigest()}"
    return stamp


def _add(digest: blake2b, path: str) -> None:
    try:
        st = os.stat(path)
    except OSError:
        digest.update(f"missing {path}\n".encode("utf-8", "surrogateescape"))
        return
    if not S_ISDIR(st.st_mode):  # os.path.isdir would stat it a second time
        digest.update(f"{path} {st.st_size} {st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
        return
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        digest.update(f"unlistable {path}\n".encode("utf-8", "surrogateescape"))
        return
    for entry in entries:
        if entry.name == "__pycache__":
            continue
        if entry.name.endswith(".py") or entry.is_dir(follow_symlinks=False):
            _add(digest, entry.path)
