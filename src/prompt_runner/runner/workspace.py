"""Did a session change the workspace? Compared from git before and after.

A snapshot of each target repo comes from one ``git status --porcelain=v2
--branch -z -uall --ignore-submodules=none`` call: the HEAD oid from its
header plus, for every changed or untracked path, its status (with git's
submodule field for a submodule, see :func:`uncommitted_submodule`) and the
file's size and mtime (ns); a name that is not UTF-8 is held as
:func:`prompt_runner.git.shown_path` shows it (its file is read by its bytes,
and the committer finds them again). Two snapshots differ when a session
committed, created, deleted or edited anything. A target that is not a git
repo falls back to the session's ``file_change`` events.

Consecutive prompts share a snapshot: right after a prompt's commit, the
engine derives what ``git status`` would now say from the prompt's last
snapshot (its committed paths are clean, HEAD is the new commit) and hands it
to the next session as its "before" (:class:`Carry`). It is used only when
the commit was scoped to known paths, no commit hook could have written files,
and it is younger than :data:`CARRY_MAX_AGE_S` -- a run paused at a boundary
takes a fresh snapshot. This saves one ``git status`` per prompt (a changed
file in that sub-second gap counts as the next session's, as any edit made
during a session does).
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import git

Snapshot = dict[str, git.RepoSnapshot | None]
"""Per repo name, its snapshot (``None``: git could not read the repo)."""

_TOPLEVEL: dict[Path, Path | None] = {}

CARRY_MAX_AGE_S = 1.0
"""How long (seconds) a snapshot derived at a commit may stand in for a fresh one."""


@dataclass(frozen=True)
class Carry:
    """A snapshot derived right after a commit, for the next session's "before".

    Attributes:
        snapshot: per repo name, what ``git status`` reports after the commit.
        repos: repo name -> directory the snapshot describes.
        taken_at: ``time.monotonic()`` seconds when it was derived.
    """

    snapshot: Snapshot
    repos: Mapping[str, Path]
    taken_at: float

    @classmethod
    def now(cls, snapshot: Snapshot, repos: Mapping[str, Path]) -> Carry:
        """Carry ``snapshot`` of ``repos``, taken (or derived) just now."""
        return cls(snapshot, dict(repos), time.monotonic())

    def fresh(self, name: str, path: Path) -> git.RepoSnapshot | None:
        """The carried snapshot of ``name`` if it describes ``path`` and is young enough."""
        if self.repos.get(name) != path:
            return None
        if time.monotonic() - self.taken_at > CARRY_MAX_AGE_S:
            return None
        return self.snapshot.get(name)


def after_commit(
    last: Snapshot,
    repos: Mapping[str, Path],
    *,
    heads: Mapping[str, str],
    committed: Mapping[str, Collection[str]],
) -> Carry:
    """What ``git status`` says after a commit, derived from ``last`` (taken before it).

    Args:
        last: the snapshot taken after the session, before the commit.
        repos: repo name -> directory, as ``last`` was taken.
        heads: repo name -> HEAD sha after committing (repos without one
            are left out of the carry).
        committed: repo name -> work-tree-relative paths the commit took.

    Returns:
        A :class:`Carry`; repos whose state cannot be derived are left out.
    """
    derived: Snapshot = {}
    for name, value in last.items():
        if value is None or name not in heads:
            continue  # unknown now: the next session asks git
        taken = set(committed.get(name, ()))
        derived[name] = git.RepoSnapshot(
            heads[name], tuple(row for row in value.rows if row.path not in taken)
        )
    return Carry.now(derived, repos)


def toplevel(repo: Path) -> Path | None:
    """The work-tree root of ``repo`` (cached per path; ``None`` if not git)."""
    if repo not in _TOPLEVEL:
        res = git.run_git(repo, "rev-parse", "--show-toplevel")
        _TOPLEVEL[repo] = Path(res.stdout.strip()) if res.ok else None
    return _TOPLEVEL[repo]


def nested_roots(outer: Mapping[str, Path], inner: Mapping[str, Path]) -> dict[str, dict[str, str]]:
    """Which repos of ``inner`` have their own work tree inside a work tree of ``outer``.

    Args:
        outer: repo name -> directory (the repos whose snapshots are read).
        inner: repo name -> directory (the repos that may sit inside them: a
            submodule or a nested clone declared as a repo of its own).

    Returns:
        Per repo of ``outer`` with any: the inner work tree's path relative to
        the outer work-tree root (no trailing ``/``) -> the inner repo's name
        (the first so named). A repo git cannot read has none; two names for
        one work tree are never nested. One ``git rev-parse`` per directory not
        yet asked (:func:`toplevel`).
    """
    roots = {name: top.resolve() for name, path in inner.items() if (top := toplevel(path))}
    out: dict[str, dict[str, str]] = {}
    for name, path in outer.items():
        top = toplevel(path)
        if top is None:
            continue
        root = top.resolve()
        for other, inner_root in roots.items():
            if inner_root != root and inner_root.is_relative_to(root):
                out.setdefault(name, {}).setdefault(inner_root.relative_to(root).as_posix(), other)
    return out


def _code(parts: list[str]) -> str:
    """A changed entry's status: ``XY``, plus git's submodule field for a
    submodule (``.M S.MU``: its content is modified (M) or has untracked files (U))."""
    return parts[1] if parts[2].startswith("N") else f"{parts[1]} {parts[2]}"


NESTED_REPO = "? S..U"
"""The code of a row for an untracked directory that is a git repository of its
own (a clone inside the work tree, not a submodule: git lists it as ``dir/``).
Held as a submodule with untracked work (:func:`uncommitted_submodule`), which
the superproject's commit cannot take -- ``git add`` would record a bare gitlink
(mode 160000, no ``.gitmodules``) and the files inside nowhere. Its size and
mtime are those of its own ``git status`` (:func:`_inner_fingerprint`), so
work inside it changes the row."""

UNINITIALISED_SUBMODULE = ".. S..U"
"""The code of a row for a submodule that is not checked out (a clone made
without ``--recursive``: an empty directory, no ``.git``) and yet holds files:
git's status cannot see them, and no commit takes them. Held as a submodule
with untracked work; its size and mtime fingerprint the files in it."""


def uncommitted_submodule(code: str) -> bool:
    """True when a snapshot row's ``code`` is a submodule with uncommitted work
    inside it (modified content or untracked files; also :data:`NESTED_REPO` and
    :data:`UNINITIALISED_SUBMODULE`): committing the superproject cannot take
    that work."""
    _, _, sub = code.partition(" ")
    return len(sub) == 4 and sub[0] == "S" and (sub[2] == "M" or sub[3] == "U")


def _inner_fingerprint(directory: Path) -> tuple[int, int]:
    """``(size, mtime)`` standing for what a nested repository holds: the length
    and CRC-32 of its own ``git status --porcelain=v2 --branch -z -uall`` (its
    HEAD and every changed file with its size), ``(-1, -1)`` when git cannot
    read it."""
    res = git.run_git(directory, "status", "--porcelain=v2", "--branch", "-z", "-uall")
    if not res.ok:
        return -1, -1
    listing = res.stdout.encode("utf-8", "replace")
    for item in res.stdout.split("\0"):  # sizes and mtimes too: an edit changes the row
        rel = item.rsplit(" ", 1)[-1] if item[:1] in "12?" else ""
        if rel:
            try:
                stat = os.lstat(directory / rel)
                listing += f"{stat.st_size}:{stat.st_mtime_ns}".encode()
            except OSError:
                pass
    return len(listing), zlib.crc32(listing)


def _files_fingerprint(directory: Path) -> tuple[int, int] | None:
    """``(size, mtime)`` standing for the files under ``directory`` (count of
    entries, CRC-32 of their names, sizes and mtimes), ``None`` when it holds none."""
    seen: list[str] = []
    for top, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            try:
                stat = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            seen.append(f"{os.path.join(top, name)}:{stat.st_size}:{stat.st_mtime_ns}")
    if not seen:
        return None
    return len(seen), zlib.crc32("\0".join(seen).encode("utf-8", "surrogateescape"))


def _unchecked_submodules(root: Path) -> list[git.StatusRow]:
    """Rows for the submodules ``root``'s ``.gitmodules`` declares that are not
    checked out (no ``.git`` in their directory) and yet hold files. One ``git
    config`` call, only where ``.gitmodules`` exists."""
    if not (root / ".gitmodules").is_file():
        return []
    res = git.run_git(
        root, "config", "-z", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$"
    )
    rows: list[git.StatusRow] = []
    for item in res.stdout.split("\0") if res.ok else ():
        _, _, rel = item.partition("\n")
        rel = rel.strip("/")
        if not rel or ".." in rel.split("/"):
            continue
        directory = root / rel
        if not directory.is_dir() or os.path.lexists(directory / ".git"):
            continue
        found = _files_fingerprint(directory)
        if found is not None:
            rows.append(git.StatusRow(UNINITIALISED_SUBMODULE, rel, *found))
    return rows


def _parse_v2(out: str) -> tuple[str, list[tuple[str, str]]]:
    head = ""
    entries: list[tuple[str, str]] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if item.startswith("# branch.oid "):
            head = item[len("# branch.oid ") :]
        elif item.startswith(("1 ", "u ")):
            parts = item.split(" ", 8 if item[0] == "1" else 10)
            entries.append((_code(parts), parts[-1]))
        elif item.startswith("2 "):
            parts = item.split(" ", 9)
            entries.append((_code(parts), parts[-1]))
            if i < len(fields) and fields[i]:
                entries.append(("R-", fields[i]))  # the rename source
            i += 1
        elif item.startswith(("? ", "! ")):
            entries.append((item[0], item[2:]))
    return head, entries


def snapshot(repos: Mapping[str, Path], *, carry: Carry | None = None) -> Snapshot:
    """Snapshot each repo (``None`` for a repo git cannot read).

    ``carry``: a snapshot derived at the last commit; repos it still describes
    (see :meth:`Carry.fresh`) are taken from it instead of asking git.
    """
    out: Snapshot = {}
    for name, path in repos.items():
        carried = carry.fresh(name, path) if carry is not None else None
        if carried is not None:
            out[name] = carried
            continue
        root = toplevel(path)
        if root is None:
            out[name] = None
            continue
        res = git.run_git_paths(  # a name that is not UTF-8 stays byte-exact
            path, "status", "--porcelain=v2", "--branch", "-z", "-uall", "--ignore-submodules=none"
        )  # a submodule.*.ignore setting must not hide work inside a submodule
        if not res.ok:
            out[name] = None
            continue
        head, entries = _parse_v2(res.stdout)
        rows = []
        for code, rel in entries:
            shown = git.shown_path(rel)  # the file is read by its own bytes, named as shown
            if code == "?" and rel.endswith("/"):  # a repository of its own, not a submodule
                rows.append(git.StatusRow(NESTED_REPO, shown, *_inner_fingerprint(root / rel)))
                continue
            try:
                stat = os.lstat(root / rel)
                rows.append(git.StatusRow(code, shown, stat.st_size, stat.st_mtime_ns))
            except OSError:
                rows.append(git.StatusRow(code, shown, -1, -1))
        rows.extend(_unchecked_submodules(root))
        out[name] = git.RepoSnapshot(head, tuple(sorted(rows)))
    return out


def all_clean(snap: Snapshot) -> bool:
    """True when git read every repo of ``snap`` and none has a changed or untracked path."""
    return all(value is not None and not value[1] for value in snap.values())


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


def changed_paths(before: Snapshot, after: Snapshot) -> dict[str, set[str]]:
    """Per repo, the paths (relative to the work-tree root) whose status, size
    or mtime differ between the snapshots, or that appear in only one."""
    out: dict[str, set[str]] = {}
    for name, value in after.items():
        old = before.get(name)
        if value is None or old is None:
            continue
        rows_before = {row[1]: row for row in old[1]}
        rows_after = {row[1]: row for row in value[1]}
        paths = {p for p in rows_after if rows_before.get(p) != rows_after[p]}
        paths |= {p for p in rows_before if p not in rows_after}
        if paths:
            out[name] = paths
    return out


UNBORN = "(initial)"
"""A repo's HEAD before its first commit, as ``git status --branch`` spells it."""


def heads(snap: Snapshot) -> dict[str, str]:
    """Per repo of ``snap``, its HEAD sha, or :data:`UNBORN` for a repo with no
    commit yet (repos git could not read left out)."""
    return {
        name: value.head
        for name, value in snap.items()
        if value is not None
        and (value.head == UNBORN or (len(value.head) in (40, 64) and value.head.isalnum()))
    }


def dirty_paths(snap: Snapshot) -> dict[str, set[str]]:
    """Per repo, every path git reports as changed or untracked in ``snap``."""
    return {name: {row[1] for row in value[1]} for name, value in snap.items() if value}
