"""What a watch sample read from the manifest, kept beside the run's state.

A sample needs the packet's name and its repos' paths from the manifest's
front matter, and importing the YAML parser to read them was the largest part
of ``watch --once``'s start-up. So the state root keeps them
(``StateLayout.watch_manifest``) together with the manifest's very text, and a
sample uses them while the manifest holds that same text: they are a function
of its bytes alone (and of this version of Prompt Runner, which the file
names), so there is nothing to go stale. What the paths resolve to (``~``,
symlinks, the current directory) is worked out again on every sample, as is
every check of the result (:func:`~prompt_runner.watch.facts.manifest_repos`).

File (JSON, ``schema_version`` 1): ``{"schema_version", "version", "manifest":
<its text>, "name": <the name, or null for the directory's>, "repos": [[repo,
path text], ...]}``. A missing, damaged or other version's file is not used;
one that cannot be written is not written. Only a state root that exists
gets one (a watch never creates the state root).
"""

from __future__ import annotations

import json
import os

from ..state import layout_text
from ..state.code_stamp import code_stamp

SCHEMA_VERSION = 1

MADE_BY = (
    "watch/facts.py",
    "watch/kept_manifest.py",
    "packet/__init__.py",
    "packet/frontmatter.py",
    "packet/file_read.py",
    "file_kinds.py",
    "strict_yaml.py",
    "errors.py",
)
"""The source files whose code makes the kept reading (the front matter's
parser and what takes the name and repos from it): the file's ``version`` is
their :func:`~prompt_runner.state.code_stamp.code_stamp`, so a hit stats these
eight files, not the ~48 under ``watch/`` and ``packet/`` (a file not there
is stamped as missing). ``tests/watch/
test_kept_manifest.py`` fails when reading a manifest loads a module of the
package not named here."""

TYPE_CHECKING = False  # the layout's paths only annotate here (a sample reads as text)
if TYPE_CHECKING:
    from pathlib import Path

    from ..state.layout import StateLayout


def _root(state: StateLayout | str) -> str:
    """The state root of ``state`` (a layout, or its root as text), as text."""
    return state if isinstance(state, str) else os.fspath(state.root)


def read(
    state: StateLayout | str, manifest: Path | str
) -> tuple[str | None, list[tuple[str, str]]] | None:
    """``(name, [(repo, path text), ...])`` kept for the manifest's current text,
    or ``None`` (no such file, another text, another version, damaged).

    Args:
        state: the state root (a layout, or its root directory as text).
        manifest: the packet's manifest file.
    """
    try:
        with open(layout_text.watch_manifest(_root(state)), "rb") as f:
            kept = json.loads(f.read())
        with open(manifest, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deeply
        return None
    if (
        not isinstance(kept, dict)
        or kept.get("schema_version") != SCHEMA_VERSION
        or kept.get("version") != code_stamp(*MADE_BY)
        or kept.get("manifest") != text
    ):
        return None
    name, repos = kept.get("name"), kept.get("repos")
    if not (name is None or isinstance(name, str)) or not isinstance(repos, list):
        return None
    pairs: list[tuple[str, str]] = []
    for pair in repos:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            return None
        pairs.append((pair[0], pair[1]))
    return name, pairs


def keep(
    state: StateLayout | str, text: str, name: str | None, repos: list[tuple[str, str]]
) -> None:
    """Keep ``name`` and ``repos`` as read from the manifest ``text`` in the state
    root ``state`` (a layout, or its root as text), when that root exists; a
    write that fails is skipped (the file is only a saving)."""
    root = _root(state)
    if not os.path.isdir(root):
        return
    doc = {
        "schema_version": SCHEMA_VERSION,
        "version": code_stamp(*MADE_BY),
        "manifest": text,
        "name": name,
        "repos": [list(pair) for pair in repos],
    }
    # lazy: only a sample that read the manifest anew writes
    from pathlib import Path

    from ..errors import StorageError
    from ..state.atomic import write_bytes_atomic

    try:
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        write_bytes_atomic(Path(layout_text.watch_manifest(root)), data + b"\n", durable=False)
    except (StorageError, OSError, UnicodeEncodeError):
        return
