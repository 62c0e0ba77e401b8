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

from ..state.code_stamp import code_stamp
from ..state.layout import StateLayout

SCHEMA_VERSION = 1

TYPE_CHECKING = False  # Path only annotates here
if TYPE_CHECKING:
    from pathlib import Path


def read(layout: StateLayout, manifest: Path) -> tuple[str | None, list[tuple[str, str]]] | None:
    """``(name, [(repo, path text), ...])`` kept for the manifest's current text,
    or ``None`` (no such file, another text, another version, damaged)."""
    try:
        with open(layout.watch_manifest, "rb") as f:
            kept = json.loads(f.read())
        with open(manifest, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, ValueError):
        return None
    if (
        not isinstance(kept, dict)
        or kept.get("schema_version") != SCHEMA_VERSION
        or kept.get("version") != code_stamp("watch", "packet", "strict_yaml.py")
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


def keep(layout: StateLayout, text: str, name: str | None, repos: list[tuple[str, str]]) -> None:
    """Keep ``name`` and ``repos`` as read from the manifest ``text``, when the
    state root exists; a write that fails is skipped (the file is only a saving)."""
    if not os.path.isdir(layout.root):
        return
    doc = {
        "schema_version": SCHEMA_VERSION,
        "version": code_stamp("watch", "packet", "strict_yaml.py"),
        "manifest": text,
        "name": name,
        "repos": [list(pair) for pair in repos],
    }
    # lazy: only a sample that read the manifest anew writes
    from ..errors import StorageError
    from ..state.atomic import write_bytes_atomic

    try:
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        write_bytes_atomic(layout.watch_manifest, data + b"\n", durable=False)
    except (StorageError, OSError, UnicodeEncodeError):
        return
