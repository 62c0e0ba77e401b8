"""Did a session change the workspace? Compared from git before and after.

A snapshot of each target repo is its HEAD sha plus, for every path in
``git status --porcelain``, its status code, size and mtime (ns). Two snapshots
differ when a session committed, created, deleted or edited anything. A target
that is not a git repo falls back to the session's ``file_change`` events.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .. import git

Snapshot = dict[str, tuple[str | None, tuple[tuple[str, str, int, int], ...]] | None]


def snapshot(repos: Mapping[str, Path]) -> Snapshot:
    """Snapshot each repo (``None`` for a repo git cannot read)."""
    out: Snapshot = {}
    for name, path in repos.items():
        try:
            entries = git.porcelain_status(path)
            prefix_root = Path(git.run_git(path, "rev-parse", "--show-toplevel").stdout.strip())
        except Exception:
            out[name] = None
            continue
        rows = []
        for entry in entries:
            target = prefix_root / entry.path
            try:
                stat = target.stat()
                rows.append((entry.code, entry.path, stat.st_size, stat.st_mtime_ns))
            except OSError:
                rows.append((entry.code, entry.path, -1, -1))
        out[name] = (git.head_sha(path), tuple(sorted(rows)))
    return out


def changed(before: Snapshot, after: Snapshot, *, file_events: int = 0) -> bool:
    """True when any repo's snapshot differs (or, without git, any file event was seen)."""
    for name, value in after.items():
        if value is None or before.get(name) is None:
            if file_events:
                return True
            continue
        if before.get(name) != value:
            return True
    return False
