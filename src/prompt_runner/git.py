"""Small read-only git helpers (status, HEAD, upstream, ls-remote, commit count).

Every call goes through :func:`prompt_runner.proc.run` with an explicit
environment that makes git read-only and non-interactive:

* ``GIT_OPTIONAL_LOCKS=0`` -- ``git status`` must not refresh and rewrite the
  index (verification never mutates a repo);
* ``GIT_TERMINAL_PROMPT=0`` -- a remote that wants credentials fails instead
  of waiting on a terminal;
* ``LC_ALL=C`` -- messages parsed here are not translated;
* ``GIT_LITERAL_PATHSPECS=1`` -- a path handed to git names that one file:
  ``*``, ``?``, ``[...]`` and ``:(...)`` in a file name are not patterns (and the
  user's own ``GIT_GLOB_PATHSPECS``/``GIT_NOGLOB_PATHSPECS``/``GIT_ICASE_PATHSPECS``,
  which git refuses alongside it, are dropped).

The committer, whose ``git commit`` runs the repo's hooks, passes its paths
as ``:(literal)`` pathspecs (:func:`literal_pathspecs`) instead of setting
``GIT_LITERAL_PATHSPECS``, which git would hand on to the hooks: a hook's own
``git diff -- '*.py'`` keeps git's ordinary matching.

Nothing here fetches, commits or writes a ref. Helpers return values; a git
failure on something that should work raises :class:`GitError`.
"""

from __future__ import annotations

import collections
import os

from prompt_runner import proc
from prompt_runner.errors import InfrastructureError
from prompt_runner.proc.values import Frozen

TYPE_CHECKING = False  # dataclasses, typing and pathlib cost ~15 ms of watch's start-up
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path
    from typing import NamedTuple

DEFAULT_GIT_TIMEOUT_MS = 30_000
DEFAULT_LS_REMOTE_TIMEOUT_MS = 10_000

_READ_ONLY_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
    "GIT_LITERAL_PATHSPECS": "1",
}

PATHSPEC_ENV = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)
"""The variables that change how git reads every pathspec of a call."""


class GitError(InfrastructureError):
    """A git command that should have worked failed (names the command and repo)."""


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment git runs with: ``base`` (default ``os.environ``) plus the read-only pins."""
    env = without_pathspec_env(os.environ if base is None else base)
    env.update(_READ_ONLY_ENV)
    return env


def without_pathspec_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` minus :data:`PATHSPEC_ENV`: git then reads pathspec magic as written."""
    return {k: v for k, v in base.items() if k not in PATHSPEC_ENV}


def literal_pathspecs(paths: Iterable[str]) -> str:
    """``paths`` (work-tree-relative) as NUL-separated ``:(literal)`` pathspecs, for
    ``--pathspec-from-file=- --pathspec-file-nul`` on stdin.

    Each names exactly that path: no glob characters, no magic, no option (a
    leading ``-``) -- provided git runs without :data:`PATHSPEC_ENV` (see
    :func:`without_pathspec_env`; ``GIT_LITERAL_PATHSPECS`` would make the
    prefix itself part of the name).
    """
    return "\0".join(f":(literal){path}" for path in paths)


def run_git(
    repo: Path | str, *args: str, timeout_ms: int = DEFAULT_GIT_TIMEOUT_MS
) -> proc.ProcResult:
    """Run ``git <args>`` in ``repo`` and return the raw result (never raises)."""
    return proc.run(["git", *args], cwd=repo, env=git_env(), timeout_ms=timeout_ms)


def run_git_paths(
    repo: Path | str, *args: str, timeout_ms: int = DEFAULT_GIT_TIMEOUT_MS
) -> proc.ProcResult:
    """:func:`run_git` for a call whose output names paths (``-z``): a name that
    is not UTF-8 comes back byte-exact, as :func:`os.fsdecode` reads it
    (``surrogateescape``: ``caf\\xe9.txt`` is ``'caf\\udce9.txt'``), so
    ``os.lstat`` and a pathspec written with ``os.fsencode`` name that file.

    :func:`run_git` decodes with replacement (``U+FFFD``), which names no file.
    Only when its output holds a ``U+FFFD`` is git asked again, through
    ``subprocess`` (loaded then, never on a hot path) for the raw bytes.

    Returns:
        The result (never raises); ``stdout`` as described, ``stderr`` as
        :func:`run_git` gives it.
    """
    res = run_git(repo, *args, timeout_ms=timeout_ms)
    if not res.ok or "\ufffd" not in res.stdout:
        return res
    import subprocess  # lazy: only for an output that was not UTF-8

    try:
        raw = subprocess.run(
            ["git", *args],
            cwd=repo,
            env=git_env(),
            capture_output=True,
            timeout=timeout_ms / 1000,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return res  # as it was: the caller's path check says what it names
    if raw.returncode != 0:
        return res
    return proc.ProcResult(
        res.argv,
        0,
        stdout=os.fsdecode(raw.stdout),
        stderr=res.stderr,
        duration_ms=res.duration_ms,
    )


def shown_path(path: str) -> str:
    """``path`` as :func:`run_git` gives it: a name :func:`run_git_paths` read
    byte-exact (``'caf\\udce9.txt'``) with its undecodable bytes as ``U+FFFD``
    (``'caf\\ufffd.txt'``), as every record, line and comparison of the runner
    holds paths (JSON and the console take no lone surrogates). Any other
    path is returned as it is."""
    if path.isascii():
        return path
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def start_git(
    repo: Path | str, *args: str, timeout_ms: int = DEFAULT_GIT_TIMEOUT_MS
) -> proc.Quick | proc.ProcResult:
    """Start ``git -C <repo> <args>`` and return at once (:func:`proc.start_quick`:
    no ``subprocess``, no thread), with :func:`run_git`'s environment and deadline.

    Returns:
        The running child (its ``result()`` is what :func:`run_git` would have
        returned, but for ``argv``, which names ``-C``), or the
        :class:`~prompt_runner.proc.ProcResult` of a start that failed. Where
        :func:`proc.quick.available` is false (or ``posix_spawn`` cannot start
        a new session), :func:`run_git`'s result at once.
    """
    from prompt_runner.proc import quick  # lazy: loads os, select and time only

    if quick.available():
        try:
            argv = ["git", "-C", str(repo), *args]
            return quick.start_quick(argv, env=git_env(), timeout_ms=timeout_ms)
        except NotImplementedError:  # pragma: no cover - posix_spawn without setsid
            pass
    return run_git(repo, *args, timeout_ms=timeout_ms)  # pragma: no cover - no posix_spawn


def _checked(repo: Path | str, *args: str) -> str:
    res = run_git(repo, *args)
    if not res.ok:
        reason = res.start_error or res.stderr.strip() or f"exit {res.returncode}"
        if res.timed_out:
            reason = "timed out"
        raise GitError(f"{repo}: `git {' '.join(args)}` failed: {reason}")
    return res.stdout


def is_git_repo(path: Path | str) -> bool:
    """True when ``path`` is an existing directory inside a git work tree."""
    from pathlib import Path  # lazy: watch's sample (start_git) loads no pathlib

    if not Path(path).is_dir():
        return False
    res = run_git(path, "rev-parse", "--is-inside-work-tree")
    return res.ok and res.stdout.strip() == "true"


def show_prefix(repo: Path | str) -> str:
    """``repo``'s path relative to its work-tree root, with a trailing ``/`` ('' at the root)."""
    return _checked(repo, "rev-parse", "--show-prefix").strip()


class StatusEntry(Frozen):
    """One ``git status --porcelain`` line (a frozen value).

    Attributes:
        code: the two-letter ``XY`` status (``??`` = untracked).
        path: the path relative to the work-tree root.
        orig_path: the source path of a rename or copy, else ``None``.
    """

    _fields = ("code", "path", "orig_path")
    __slots__ = _fields
    code: str
    path: str
    orig_path: str | None

    def __init__(self, code: str, path: str, orig_path: str | None = None) -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "orig_path", orig_path)


if TYPE_CHECKING:

    class StatusRow(NamedTuple):
        """One changed or untracked path in a :class:`RepoSnapshot`.

        Attributes:
            code: git's ``XY`` status, plus its submodule field for a submodule
                (``.M S.MU``); ``?`` untracked, ``!`` ignored, ``R-`` a rename's source.
            path: the path relative to the work-tree root.
            size: the file's size in bytes (``-1``: it could not be read).
            mtime_ns: its modification time in nanoseconds (``-1``: it could not be read).
        """

        code: str
        path: str
        size: int
        mtime_ns: int

    class RepoSnapshot(NamedTuple):
        """What ``git status --porcelain=v2 --branch`` says about one repo, plus the
        size and mtime of each changed path (``runner/workspace.py`` takes and
        compares them; equal snapshots mean nothing changed).

        Attributes:
            head: the HEAD oid (``(initial)`` before the first commit).
            rows: the changed and untracked paths, sorted.
        """

        head: str
        rows: tuple[StatusRow, ...]

else:  # the same namedtuple classes, made without importing typing (~4 ms)

    def __getattr__(name: str) -> type:
        """``StatusRow`` and ``RepoSnapshot``, made on first use (PEP 562): making
        a namedtuple costs ~0.1 ms each, and watch's sample uses neither."""
        if name == "StatusRow":
            made = collections.namedtuple(
                "StatusRow", ["code", "path", "size", "mtime_ns"], module=__name__
            )
            made.__doc__ = (
                "One changed or untracked path in a RepoSnapshot: code, path, size, mtime_ns."
            )
        elif name == "RepoSnapshot":
            made = collections.namedtuple("RepoSnapshot", ["head", "rows"], module=__name__)
            made.__doc__ = (
                "What `git status --porcelain=v2 --branch` says about one repo: head, rows."
            )
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = made
        return made


def porcelain_status(repo: Path | str, *, byte_exact: bool = False) -> tuple[StatusEntry, ...]:
    """``git status --porcelain -z -uall`` in ``repo`` (untracked files listed one by one).

    Paths are relative to the work-tree root (porcelain v1 ignores
    ``status.relativePaths``); a name that is not UTF-8 is shown as
    :func:`shown_path` shows it, or with ``byte_exact`` as
    :func:`run_git_paths` reads it (for handing back to git).

    Raises:
        GitError: ``repo`` is not a git work tree or git failed.
    """
    args = ("status", "--porcelain=v1", "-z", "-uall", "--ignore-submodules=none")
    if byte_exact:
        res = run_git_paths(repo, *args)
        if not res.ok:
            _checked(repo, *args)  # raises, saying why
        out = res.stdout
    else:
        out = _checked(repo, *args)
    fields = out.split("\0")
    entries: list[StatusEntry] = []
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        orig = None
        if code[0] in "RC" or code[1] in "RC":
            orig = fields[i] if i < len(fields) else None
            i += 1
        entries.append(StatusEntry(code, path, orig))
    return tuple(entries)


def head_sha(repo: Path | str) -> str | None:
    """The full sha of ``HEAD``, or ``None`` when there is no commit yet (or no repo)."""
    res = run_git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    return (res.stdout.strip() or None) if res.ok else None


def current_branch(repo: Path | str) -> str | None:
    """The checked-out branch name, or ``None`` on a detached HEAD."""
    res = run_git(repo, "symbolic-ref", "-q", "--short", "HEAD")
    return (res.stdout.strip() or None) if res.ok else None


def commit_count(repo: Path | str) -> int:
    """How many commits are reachable from ``HEAD`` (0 when there is none)."""
    if head_sha(repo) is None:
        return 0
    return int(_checked(repo, "rev-list", "--count", "HEAD").strip() or 0)


class Upstream(Frozen):
    """The configured upstream of the current branch (a frozen value).

    Attributes:
        ref: the local remote-tracking ref (``refs/remotes/origin/main``).
        short: its short name (``origin/main``).
        remote: the remote name (``origin``).
        remote_ref: the branch ref on the remote (``refs/heads/main``).
        sha: the cached sha of ``ref``, ``None`` if it was never fetched.
    """

    _fields = ("ref", "short", "remote", "remote_ref", "sha")
    __slots__ = _fields
    ref: str
    short: str
    remote: str
    remote_ref: str
    sha: str | None

    def __init__(self, ref: str, short: str, remote: str, remote_ref: str, sha: str | None) -> None:
        object.__setattr__(self, "ref", ref)
        object.__setattr__(self, "short", short)
        object.__setattr__(self, "remote", remote)
        object.__setattr__(self, "remote_ref", remote_ref)
        object.__setattr__(self, "sha", sha)


def upstream(repo: Path | str) -> Upstream | None:
    """The current branch's upstream from cached refs (no network), or ``None`` if unset."""
    branch = current_branch(repo)
    if branch is None:
        return None
    fmt = "%(upstream)%00%(upstream:short)%00%(upstream:remotename)%00%(upstream:remoteref)"
    res = run_git(repo, "for-each-ref", f"--format={fmt}", f"refs/heads/{branch}")
    if not res.ok:
        return None
    parts = res.stdout.rstrip("\n").split("\0")
    if len(parts) < 4 or not parts[0]:
        return None
    ref, short, remote, remote_ref = parts[:4]
    sha_res = run_git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    sha = (sha_res.stdout.strip() or None) if sha_res.ok else None
    return Upstream(ref, short, remote, remote_ref, sha)


class RemoteTip(Frozen):
    """What ``git ls-remote`` said about one ref (a frozen value).

    Attributes:
        sha: the remote's sha for the ref, ``None`` when it could not be read.
        error: why it could not be read (timeout, unreachable, no such ref).
    """

    _fields = ("sha", "error")
    __slots__ = _fields
    sha: str | None
    error: str | None

    def __init__(self, sha: str | None, error: str | None = None) -> None:
        object.__setattr__(self, "sha", sha)
        object.__setattr__(self, "error", error)


def ls_remote(
    repo: Path | str, remote: str, ref: str, *, timeout_ms: int = DEFAULT_LS_REMOTE_TIMEOUT_MS
) -> RemoteTip:
    """Read ``ref`` on ``remote`` with a bounded ``git ls-remote`` (never fetches).

    Args:
        repo: the local repo whose remote configuration is used.
        remote: remote name or URL.
        ref: full ref on the remote (``refs/heads/main``).
        timeout_ms: deadline for the whole git process group, in milliseconds.
    """
    res = run_git(repo, "ls-remote", "--exit-code", remote, ref, timeout_ms=timeout_ms)
    if res.timed_out:
        return RemoteTip(None, f"ls-remote timed out after {timeout_ms} ms")
    if not res.ok:
        if res.returncode == 2:
            return RemoteTip(None, f"{ref} not found on {remote}")
        lines = res.stderr.strip().splitlines()
        reason = res.start_error or (lines[-1] if lines else f"exit {res.returncode}")
        return RemoteTip(None, f"ls-remote failed: {reason}")
    for line in res.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return RemoteTip(sha)
    return RemoteTip(None, f"{ref} not found on {remote}")
