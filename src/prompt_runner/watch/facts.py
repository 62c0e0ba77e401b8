"""The facts of one supervision sample (SPEC 8, catalog J): the ``watch`` line.

One sample answers "is the run alive, and is it advancing?" without deciding
anything::

    WATCH 16:57Z runner=UP prompt=11 quiet=0min repos=3 dirty=0 commits=27

* ``runner`` is ``UP`` only when ``.prompt_runner/run.pid`` names a live
  process *identity* (pid plus start time, :mod:`prompt_runner.state.lock`);
  a recycled pid, a dead pid or garbage reads ``DOWN``. No process-name match
  is ever made, so a supervisor shell whose command line mentions
  ``prompt-runner run`` cannot fake liveness.
* ``prompt`` is the id in the name of the newest ``logs/prompt-<id>-*.log``
  of a prompt the packet still holds: a prompt deleted from the packet (or
  whose file now gives another ``id:``) is never named, as ``status`` no
  longer lists it; the newest log of one still there is named instead
  (``none`` when there is none; a packet with no prompt file at all, which
  no run reads, takes nothing out). The ids are read as text
  (:mod:`prompt_runner.packet.prompt_ids_text`): the few files named for
  the newest log's id first, every prompt's front matter only when those do
  not hold it.
* ``quiet`` is whole minutes since the newest mtime found under
  ``.prompt_runner/logs`` and every repo of the manifest, skipping derived
  trees (:data:`PRUNED_DIRS`); ``?`` when nothing could be measured. Mtimes,
  not event timestamps, so both JSONL event schemas count the same.
* ``dirty`` sums ``git status --porcelain`` lines, ``commits`` the commits
  reachable from ``HEAD``, over the manifest's repos (``?`` when a repo cannot
  be read).
* ``stage`` (``stage=committing`` at the line's end, only while there is one)
  is what a live runner does outside a session, as its control snapshot
  shows it (:mod:`prompt_runner.runner.stages`): ``{"name": "verifying" |
  "committing", "prompt_id", "since"}``, or ``None`` -- no stage, or no live
  runner (a killed runner's snapshot keeps its last stage; that is no stage).

This module is on a polling hot path: it reads the manifest with the YAML
parser only (no pydantic) and walks trees with :func:`os.scandir`, pruning
before descending, so a pruned tree is never listed or stat'ed. Each repo's
two git processes are started (``os.posix_spawn``, no ``subprocess``, no
thread: :func:`prompt_runner.git.start_git`) before the walk and collected
after it, so they run while this process walks; its imports are the standard
library's light modules (no ``dataclasses``, ``typing``, ``threading``), and
a sample holds its paths as ``os.path`` text (:func:`prompt_runner.paths.packet_dir`
and its siblings, ``state/layout_text.py``), so it loads no ``pathlib``
either; :func:`manifest_repos` builds its ``Path`` values where it is called.
"""

from __future__ import annotations

import os
import re
import time

from ..errors import UserError
from ..paths import (
    MANIFEST_NAME,
    STATE_DIR,
    expanded_text,
    packet_dir,
    pure_text,
    repo_path_error,
    resolved_text,
    stat_kind,
)
from ..proc.values import Frozen
from ..state import layout_text
from . import kept_manifest

TYPE_CHECKING = False  # typing and pathlib cost import time on the watch path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path
    from typing import Any

    from ..proc import ProcResult, Quick
    from ..state.layout import StateLayout

SCHEMA = "prompt_runner.watch/v1"

PRUNED_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "_build",
        "deps",
        "node_modules",
        "__pycache__",
        ".venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".elixir_ls",
        ".gradle",
        ".next",
        ".direnv",
        STATE_DIR,
    }
)
"""Directory names never descended into: VCS bookkeeping, dependency and build
output, caches, and runtime state (its ``logs/`` is scanned explicitly).
Their mtimes say nothing about a session's progress, and they dominate a scan."""

# compiled on first match (re's cache), not at import: most samples match a name or two
_PROMPT_LOG = r"^prompt-(?P<id>.+?)-\d{8}(?:-\d{6}|T[\d.]+Z?)(?:-\d+)?\.log$"
_PROMPT_LOG_LOOSE = r"^prompt-(?P<id>[^-]+)(?:-.*)?\.log$"


class RepoRef(Frozen):
    """One repo of the manifest: logical ``name`` and absolute ``path`` (a frozen value)."""

    _fields = ("name", "path")
    __slots__ = _fields
    name: str
    path: Path

    def __init__(self, name: str, path: Path) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "path", path)


def manifest_repos(root: Path, *, state: StateLayout | None = None) -> tuple[str, list[RepoRef]]:
    """Read the packet name and repos from the manifest with the YAML parser only.

    Args:
        root: the packet directory.
        state: the run's state root, which keeps what was read while the
            manifest holds the same text (watch/kept_manifest.py): then the
            YAML parser is not even loaded.

    Returns:
        ``(packet name, repos)``; relative repo paths resolve against ``root``.

    Raises:
        UserError: the manifest is unreadable, has no front matter, or its
            ``repos`` is not a mapping.
    """
    from pathlib import Path  # lazy: a sample (_manifest_text) reads the manifest as text

    name, repos = _manifest_text(
        os.fspath(root), None if state is None else os.fspath(state.root), dir_name=root.name
    )
    return name, [RepoRef(repo_name, Path(path)) for repo_name, path in repos]


def _manifest_text(
    root: str, state_root: str | None, *, dir_name: str | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """:func:`manifest_repos` on text: ``(packet name, [(repo name, absolute
    resolved path), ...])`` of the packet directory ``root``, kept in the state
    root ``state_root`` (``None``: not kept); ``dir_name`` is the name the
    packet takes when the manifest gives none (default: ``root``'s last part).

    Raises:
        UserError: as :func:`manifest_repos`.
    """
    if dir_name is None:
        dir_name = os.path.basename(root)
    manifest = pure_text(os.path.join(root, MANIFEST_NAME))  # str(Path(root) / MANIFEST_NAME)
    kept = kept_manifest.read(state_root, manifest) if state_root is not None else None
    if kept is not None:
        name, pairs = kept
        return (name if name is not None else dir_name), [
            (repo_name, _resolved(root, path_text, manifest, repo_name))
            for repo_name, path_text in pairs
        ]
    # lazy: only a sample that reads the manifest anew pays for YAML (and pathlib)
    from pathlib import Path

    from ..packet.frontmatter import read_text, split_front_matter

    text = read_text(Path(manifest), display=manifest)
    raw, _ = split_front_matter(text, file=manifest)
    name = raw.get("name")
    repos_raw = raw.get("repos") or {}
    if not isinstance(repos_raw, dict):
        raise UserError(
            "must be a mapping of repo names",
            file=manifest,
            key="repos",
            fix="write NAME: {path: DIR}",
        )
    repos: list[tuple[str, str]] = []
    pairs = []
    for repo_name, spec in repos_raw.items():
        path_text = spec.get("path") if isinstance(spec, dict) else spec
        if not isinstance(path_text, str) or not path_text.strip():
            raise UserError(
                "has no path",
                file=manifest,
                key=f"repos.{repo_name}.path",
                fix="give the repo a path",
            )
        repos.append((str(repo_name), _resolved(root, path_text, manifest, str(repo_name))))
        pairs.append((str(repo_name), path_text))
    shown = str(name) if name else None
    if state_root is not None:
        kept_manifest.keep(state_root, text, shown, pairs)
    return (shown if shown is not None else dir_name), repos


def _resolved(root: str, path_text: str, manifest: str, name: str) -> str:
    """A repo's ``path`` from the manifest, absolute (relative to ``root``), resolved:
    ``str((Path(path_text).expanduser() or root / it).resolve())``, as text.

    Raises:
        UserError: it cannot be resolved (``paths.repo_path_error``), as the loader says.
    """
    try:
        path = expanded_text(pure_text(path_text))
        if not path.startswith("/"):
            path = pure_text(os.path.join(root, path))
        return resolved_text(path)
    except (RuntimeError, OSError) as exc:  # ~nosuchuser, a symlink loop
        raise repo_path_error(manifest, name, path_text, exc) from None


# --------------------------------------------------------------------------- stage

STAGES = frozenset({"verifying", "committing"})
"""The stages a control snapshot shows outside a session (runner/stages.py's)."""


def live_stage(snapshot: Any) -> dict[str, str] | None:
    """The ``stage`` of a control snapshot document as a sample shows it:
    ``{"name": "verifying" | "committing", "prompt_id": id, "since": ISO 8601
    UTC}`` (a copy), or ``None`` when it shows none or not in that shape.
    Whether the runner that wrote it is alive is the caller's to know."""
    stage = snapshot.get("stage") if isinstance(snapshot, dict) else None
    if not isinstance(stage, dict):
        return None
    name, prompt_id, since = stage.get("name"), stage.get("prompt_id"), stage.get("since")
    if name not in STAGES or not isinstance(prompt_id, str) or not isinstance(since, str):
        return None
    return {"name": name, "prompt_id": prompt_id, "since": since}


def read_stage(state_root: str) -> dict[str, str] | None:
    """:func:`live_stage` of the control snapshot under the state root
    ``state_root`` (text), or ``None`` when it is missing or unreadable: the
    snapshot is a cache, written whole (temp file + rename), never evidence."""
    import json  # lazy: only a sample of a live run reads the snapshot

    try:
        with open(layout_text.snapshot(state_root), "rb") as handle:
            doc = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return None
    return live_stage(doc)


# --------------------------------------------------------------------------- mtime walk


def newest_mtime(
    roots: Iterable[str | os.PathLike[str]],
    *,
    pruned: frozenset[str] = PRUNED_DIRS,
    entries: dict[str, float] | None = None,
) -> float | None:
    """The newest mtime (epoch seconds) of any file under ``roots``.

    Files and symlinks count (a symlink by its own mtime: links are never
    followed); directories are only descended into, so neither a pruned
    directory appearing nor a deletion reads as progress. A directory whose
    name is in ``pruned`` is skipped by name before any system call: its tree
    is never listed and nothing in it is stat'ed.

    Each directory is opened once and its entries are stat'ed relative to
    that descriptor (``fstatat``), so a stat costs no path walk -- the same
    trick ``find`` uses. Unreadable entries are skipped.

    Args:
        roots: directories to walk; missing ones are ignored.
        pruned: directory names to skip entirely.
        entries: filled with the mtime of every entry directly in the first
            root, directories included (a directory's own, not its tree's),
            so :func:`newest_prompt_log` needs no second listing of it.

    Returns:
        The newest mtime, or ``None`` when there is no file to measure.
    """
    newest = -1.0
    stack = [os.fspath(root) for root in roots]
    stack.reverse()  # the first root is listed first (no order changes the maximum)
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    by_fd = os.scandir in os.supports_fd
    pending = entries  # for the first directory listed: the first root
    while stack:
        directory = stack.pop()
        seen, pending = pending, None
        fd = -1
        try:
            if by_fd:
                fd = os.open(directory, flags)
                it = os.scandir(fd)
            else:  # pragma: no cover - platforms without fd-based scandir
                it = os.scandir(directory)
        except OSError:
            if fd >= 0:
                os.close(fd)
            continue
        try:
            with it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in pruned:
                                stack.append(f"{directory}{os.sep}{entry.name}")
                            if seen is not None:
                                seen[entry.name] = entry.stat(follow_symlinks=False).st_mtime
                            continue
                        mtime = entry.stat(follow_symlinks=False).st_mtime
                    except OSError:
                        continue
                    if seen is not None:
                        seen[entry.name] = mtime
                    if mtime > newest:
                        newest = mtime
        finally:
            if fd >= 0:
                os.close(fd)
    return newest if newest >= 0 else None


def newest_prompt_log(
    logs: str | os.PathLike[str],
    *,
    entries: dict[str, float] | None = None,
    packet: str | os.PathLike[str] | None = None,
) -> str | None:
    """The prompt id in the name of the newest ``prompt-<id>-*.log`` in ``logs``.

    Log names are ``prompt-<id>-<stamp>[-<attempt>].log`` with the stamp
    ``YYYYmmddTHHMMSS.ffffffZ`` (ours) or ``YYYYmmdd-HHMMSS`` (the reference's);
    an id may itself contain ``-``.

    Args:
        logs: the state root's ``logs`` directory.
        entries: the mtimes of ``logs``'s entries as :func:`newest_mtime`
            found them (else ``logs`` is listed here).
        packet: the packet directory: only a prompt it still holds is named
            (the newest log of one; ``None`` when no log is of one). While
            its ids cannot be known -- a packet that does not load, or one
            with no prompt file at all, which no run reads (``has no
            prompts``) -- the newest log's id is named, as ``status`` then
            takes no prompt out.

    Returns:
        The id, or ``None`` when there is no (such) log.
    """
    if entries is None:
        entries = {}
        try:
            it = os.scandir(logs)
        except OSError:
            return None
        with it:
            for entry in it:
                try:
                    entries[entry.name] = entry.stat(follow_symlinks=False).st_mtime
                except OSError:
                    continue
    # The newest of the names that match: a name is matched only when it would be
    # the newest so far (a run's logs hold ~every name; most are older than one seen).
    best: tuple[float, str] | None = None
    best_match: re.Match[str] | None = None
    for name, mtime in entries.items():
        if not (name.startswith("prompt-") and name.endswith(".log")):
            continue
        if best is not None and (mtime, name) <= best:
            continue
        match = re.match(_PROMPT_LOG, name) or re.match(_PROMPT_LOG_LOOSE, name)
        if match is not None:
            best, best_match = (mtime, name), match
    if best_match is None:
        return None
    newest = best_match.group("id")
    if packet is None:
        return newest
    # lazy: only a sample with a prompt log reads the packet's prompt ids (as text)
    from ..packet import prompt_ids_text

    if prompt_ids_text.holds_named(packet, (newest,)) is not None:
        return newest  # the common case: a file or two read, not every prompt's
    held = prompt_ids_text.prompt_ids(packet)
    if not held:  # unknown (the packet does not load), or no prompt a run could read
        return newest  # then nothing is taken out
    return next((pid for pid in _ids_newest_first(entries) if pid in held), None)


def _ids_newest_first(entries: dict[str, float]) -> Iterator[str]:
    """The prompt ids the ``prompt-<id>-*.log`` names among ``entries`` give,
    newest log first (each id once)."""
    seen: set[str] = set()
    logs = [(m, n) for n, m in entries.items() if n.startswith("prompt-") and n.endswith(".log")]
    for _, name in sorted(logs, reverse=True):
        match = re.match(_PROMPT_LOG, name) or re.match(_PROMPT_LOG_LOOSE, name)
        if match is not None and match.group("id") not in seen:
            seen.add(match.group("id"))
            yield match.group("id")


# --------------------------------------------------------------------------- git


def _start_repo(name: str, path: str) -> tuple[dict[str, Any], Any, Any]:
    """Start ``git status --porcelain`` and ``git rev-list --count HEAD`` in the
    repo ``name`` at ``path`` (both at once: rev-list walks every commit, and a
    sample waits for the longer one, not for both in turn); ``(facts, status,
    count)``, the two started children (``None`` for a repo that is not a
    directory)."""
    facts: dict[str, Any] = {
        "name": name,
        "path": path,
        "dirty": None,
        "commits": None,
        "error": None,
    }
    kind = stat_kind(path)  # Path.is_dir, then Path.exists, in one stat
    if kind != "dir":
        facts["error"] = "path_not_found" if kind is None else "not_a_directory"
        return facts, None, None
    # lazy: only a sample that reads repos pays for this (proc.quick: no subprocess)
    from .. import git

    # rev-list first: it is the longer one (it walks every commit), and each
    # start waits until its child has exec'd
    count = git.start_git(path, "rev-list", "--count", "HEAD")
    try:
        status = git.start_git(path, "status", "--porcelain")
    except BaseException:
        _abandon(count)
        raise
    return facts, status, count


def _result(started: Quick | ProcResult) -> ProcResult:
    return started.result() if hasattr(started, "result") else started


def _abandon(*started: Any) -> None:
    for child in started:
        if hasattr(child, "abandon"):
            child.abandon()


def _finish_repo(started: tuple[dict[str, Any], Any, Any]) -> dict[str, Any]:
    """The repo's facts once its two children have ended (see :func:`_start_repo`)."""
    facts, status, count = started
    if status is None:
        return facts
    res = _result(status)
    counted = _result(count)
    if not res.ok:
        facts["error"] = "not_git_repo" if res.returncode == 128 else "git_status_failed"
        return facts
    facts["dirty"] = sum(1 for line in res.stdout.splitlines() if line.strip())
    if counted.ok and counted.stdout.strip().isdigit():
        facts["commits"] = int(counted.stdout.strip())
    else:
        from .. import git  # lazy: loaded already, by _start_repo

        if git.head_sha(facts["path"]) is None:
            facts["commits"] = 0  # a repo with no commit yet (one process less in the common case)
        else:
            facts["error"] = "git_rev_list_failed"
    return facts


def _total(facts: list[dict[str, Any]], key: str) -> int | None:
    values = [f[key] for f in facts]
    if any(v is None for v in values):
        return None
    return sum(int(v) for v in values)


# --------------------------------------------------------------------------- sample


def check_root(state_root: str | None) -> None:
    """Refuse a state root that exists but is no directory (``.prompt_runner``
    being a file): ``status``'s sentence (``state/usable.check_state_root``).
    ``None`` (a relative ``$PROMPT_RUNNER_STATE_DIR``, no state root) passes:
    ``StateLayout.of_packet`` refuses it where it is built.

    One ``stat`` when it is a directory; the sentence's modules (and
    ``pathlib``) load only when it is not.

    Raises:
        StorageError: ``state_root`` is a file (exit 3).
    """
    if state_root is not None and not os.path.isdir(state_root) and os.path.exists(state_root):
        # lazy: only a state root that is no directory pays for the sentence
        from pathlib import Path

        from ..state.usable import check_state_root

        check_state_root(Path(state_root))


def sample(
    packet: Path | str, *, now: float | None = None, state: StateLayout | None = None
) -> dict[str, Any]:
    """Take one supervision sample of the packet at ``packet``.

    Args:
        packet: the packet directory (or its manifest file).
        now: the sample time in epoch seconds (default: the current time).
        state: the run's state root (default: the packet's, see
            :meth:`~prompt_runner.state.layout.StateLayout.of_packet`).

    Returns:
        A JSON-safe dict: ``schema``, ``packet`` (name), ``root``, ``at``
        (ISO 8601 UTC), ``runner`` (``"up"|"down"``), ``pid`` (the live
        runner's; ``None`` when ``runner`` is ``"down"`` -- a stale ``run.pid``
        names no runner), ``last_pid`` (the pid a stale ``run.pid`` names
        while ``runner`` is ``"down"``: a killed runner's, a recycled one;
        else ``None``), ``prompt`` (id or ``None``), ``quiet_minutes`` (int or
        ``None`` when nothing is measurable), ``newest_mtime`` (epoch s or
        ``None``), ``repos`` (count), ``dirty`` and ``commits`` (ints, or
        ``None`` when a repo could not be read), ``repo_details`` (per repo:
        name, path, dirty, commits, error), ``stage`` (a live runner's stage
        outside a session, :func:`live_stage`'s ``{"name", "prompt_id",
        "since"}``; ``None`` without one or without a live runner).

    Raises:
        UserError: ``packet`` is not a packet directory or its manifest is
            unreadable.
        StorageError: the state root is a file, not a directory (exit 3;
            :func:`check_root`), checked before the manifest is read.
    """
    # Paths are text here (os.path): the sample loads no pathlib (watch --once).
    root = packet_dir(packet)
    state_root = layout_text.state_root(root) if state is None else os.fspath(state.root)
    check_root(state_root)  # a file there: exit 3, as `status` says, before any read
    # A relative $PROMPT_RUNNER_STATE_DIR: no state root, and of_packet's error
    # is raised below, after the manifest's own errors, as it was.
    name, repos = _manifest_text(root, state_root)
    if state_root is None:
        from ..state.layout import StateLayout  # lazy: only to raise its error

        StateLayout.of_packet(root)
        raise AssertionError("unreachable: of_packet raises where state_root is None")
    when = time.time() if now is None else now
    logs_dir = layout_text.logs_dir(state_root)

    started: list[tuple[dict[str, Any], Any, Any]] = []
    try:
        # git runs while this process reads run.pid and walks the trees
        for repo_name, path in repos:
            started.append(_start_repo(repo_name, path))
        ident = None
        run_pid = layout_text.run_pid(state_root)
        if os.path.exists(run_pid):  # the file exists only while a run holds the packet
            # lazy: only a sample of a packet a run holds (or held) reads its identity
            from ..state.lock import identity_alive, read_pid_file

            ident = read_pid_file(run_pid)
        alive = ident is not None and identity_alive(ident)
        stage = read_stage(state_root) if alive else None  # read after the liveness check
        logs: dict[str, float] = {}  # the logs are listed once, for both
        newest = newest_mtime([logs_dir, *(path for _, path in repos)], entries=logs)
        prompt = newest_prompt_log(logs_dir, entries=logs, packet=root)
    except BaseException:
        for _, status, count in started:
            _abandon(status, count)
        raise
    try:
        facts = [_finish_repo(one) for one in started]
    except BaseException as exc:
        for _, status, count in started:
            _abandon(status, count)
        if not isinstance(exc, Exception):
            raise
        # git could not be run or read: say so rather than guess
        facts = [
            {
                "name": repo_name,
                "path": path,
                "dirty": None,
                "commits": None,
                "error": "git_failed",
            }
            for repo_name, path in repos
        ]

    quiet = None if newest is None else max(0, int((when - newest) // 60))
    return {
        "schema": SCHEMA,
        "packet": name,
        "root": root,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)),
        "runner": "up" if alive else "down",
        "pid": ident.pid if alive and ident is not None else None,  # a dead runner's is no runner's
        "last_pid": ident.pid if not alive and ident is not None else None,
        "prompt": prompt,
        "quiet_minutes": quiet,
        "newest_mtime": newest,
        "repos": len(repos),
        "dirty": _total(facts, "dirty"),
        "commits": _total(facts, "commits"),
        "repo_details": facts,
        "stage": stage,
    }


def format_line(s: dict[str, Any]) -> str:
    """The one-line form of a :func:`sample`, e.g.
    ``WATCH 16:57Z runner=UP prompt=11 quiet=0min repos=3 dirty=0 commits=27``.

    Unknown facts render as ``?`` (``quiet=?min``, ``dirty=?``); no prompt as
    ``prompt=none``. A live runner's stage outside a session ends the line
    (``... commits=27 stage=committing``); without one the line is the
    reference's.
    """

    def show(value: Any) -> str:
        return "?" if value is None else str(value)

    hhmm = str(s["at"])[11:16]
    line = (
        f"WATCH {hhmm}Z runner={str(s['runner']).upper()} prompt={s['prompt'] or 'none'} "
        f"quiet={show(s['quiet_minutes'])}min repos={s['repos']} dirty={show(s['dirty'])} "
        f"commits={show(s['commits'])}"
    )
    stage = s.get("stage")
    return f"{line} stage={stage['name']}" if isinstance(stage, dict) else line


def watch(
    packet: Path | str,
    *,
    interval_s: float,
    emit: Callable[[dict[str, Any]], None],
    once: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Sample ``packet`` every ``interval_s`` seconds and hand each sample to ``emit``.

    Runs until interrupted (``KeyboardInterrupt`` propagates), or returns after
    the first sample when ``once``.

    Raises:
        UserError: not a packet, or ``interval_s`` is not positive.
    """
    if not once and interval_s <= 0:
        raise UserError(
            f"interval {interval_s} is not positive", key="--interval", fix="use seconds > 0"
        )
    root = packet_dir(packet)
    while True:
        started = time.monotonic()
        emit(sample(root))
        if once:
            return
        sleep(max(0.0, interval_s - (time.monotonic() - started)))
