"""Glob patterns over repo-relative paths, and a contained file walk.

Pattern syntax (``/``-separated, matched against the whole relative path):

* ``*`` -- any run of characters except ``/``;
* ``?`` -- one character except ``/``;
* ``[abc]`` / ``[!abc]`` -- a character class;
* ``**`` as a whole segment -- zero or more directories (``a/**/b``, ``**/*.py``);
  a trailing ``/**`` matches everything below;
* ``{a,b}`` -- alternatives.

The walk never follows directory symlinks, skips ``.git``, and yields a file
symlink only when :func:`~prompt_runner.verifier.paths.refusal` accepts it
(its real path stays inside the repo, outside any ``.git``).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Collection, Iterator
from pathlib import Path

from prompt_runner.verifier.paths import contained, refusal

_MAGIC = re.compile(r"[*?\[{]")
SKIP_DIRS = frozenset({".git"})


def is_pattern(text: str) -> bool:
    """True when ``text`` has glob magic characters."""
    return _MAGIC.search(text) is not None


def literal_prefix(pattern: str) -> str:
    """The leading directories of ``pattern`` without magic (``a/b/*.txt`` -> ``a/b``)."""
    parts: list[str] = []
    for part in pattern.split("/")[:-1]:
        if is_pattern(part):
            break
        parts.append(part)
    return "/".join(parts)


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The compiled regex equivalent of ``pattern`` (full match)."""
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    parts = pattern.split("/")
    for idx, part in enumerate(parts):
        last = idx == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        out.append(_segment(part))
        if not last:
            out.append("/")
    return "".join(out)


def _segment(part: str) -> str:
    res: list[str] = []
    i, n = 0, len(part)
    while i < n:
        c = part[i]
        i += 1
        if c == "*":
            res.append("[^/]*")
        elif c == "?":
            res.append("[^/]")
        elif c == "[":
            j = part.find("]", i + 1 if i < n and part[i] in "!^" else i)
            if j == -1:
                res.append(re.escape(c))
                continue
            body = part[i:j]
            i = j + 1
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            res.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
        elif c == "{":
            j = part.find("}", i)
            if j == -1:
                res.append(re.escape(c))
                continue
            alts = part[i:j].split(",")
            i = j + 1
            res.append("(?:" + "|".join(_segment(a) for a in alts) + ")")
        else:
            res.append(re.escape(c))
    return "".join(res)


def matches(pattern: str, rel: str) -> bool:
    """True when the repo-relative path ``rel`` matches ``pattern``."""
    return compile_glob(pattern).match(rel) is not None


def walk_files(root: Path, start: str = "", skip: Collection[str] = SKIP_DIRS) -> Iterator[str]:
    """Repo-relative paths of files under ``root/start`` (see the module notes on symlinks).

    Directories named in ``skip`` (default: ``.git``) are not entered.
    Uses ``os.scandir`` directly (file types come from the directory entries,
    so a large tree costs one ``getdents`` per directory, not a ``stat`` per file).
    """
    base = root / start if start else root
    if not base.is_dir() or not contained(root, base):
        return
    stack = [(str(base), f"{start}/" if start else "")]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            if entry.is_symlink():
                if refusal(root, rel_dir + entry.name) is None and os.path.isfile(entry.path):
                    yield rel_dir + entry.name
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in skip:
                    subdirs.append((entry.path, f"{rel_dir}{entry.name}/"))
            elif entry.is_file(follow_symlinks=False):
                yield rel_dir + entry.name
        stack.extend(reversed(subdirs))
