"""Committers: record a verified prompt's work in git (SPEC 3.5).

``git`` commits every target repo that has changes with the prompt's
``commit`` message (``git add -A`` then ``git commit``), after the verifier
passed; ``noop`` commits nothing (``--no-commit``: commits are the session's
business); a callback committer lets API users decide. A failed commit is a
result (:attr:`CommitResult.error`), never swallowed: the runner records the
prompt as ``commit_failed`` and halts the run (exit 3).

Every path goes to git as a ``:(literal)`` pathspec on stdin
(:func:`prompt_runner.git.literal_pathspecs`): a file named ``pages/[id].tsx``,
``*.txt`` or ``:(glob)**`` commits that file, never the user's others.

Git's auto-maintenance is batched, as git batches it for its own multi-commit
commands (``git am`` and ``git rebase`` run it once, as they finish): each
commit runs with ``-c maintenance.auto=false -c gc.auto=0`` (git before 2.29
ran ``git gc --auto`` instead, which ``gc.auto=0`` turns off), and
:meth:`GitCommitter.maintain` runs ``git maintenance run --auto --quiet`` in
each work tree with commits since its last check -- every
:data:`MAINTENANCE_EVERY` commits there and once at the end of the run -- unless
the user's own ``maintenance.auto`` is false; it runs git's commit-graph
task as well when due (:data:`_COMMIT_GRAPH`). Maintenance is bounded
(:data:`MAINTENANCE_TIMEOUT_MS`) and never fails a commit or a run: what went
wrong comes back as a line to say.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from . import proc
from .commit_errors import commit_failure, failure_line
from .git import (
    GitError,
    literal_pathspecs,
    porcelain_status,
    run_git_paths,
    shown_path,
    without_pathspec_env,
)
from .proc.quick import available as quick_available

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

INDEX_LOCK_WAIT_S = 10.0

MAINTENANCE_EVERY = 20
"""Commits in one work tree between two checks of git's auto-maintenance.

Git's own thresholds are thousands of loose objects (``gc.auto``: 6700) or
tens of packs (``gc.autoPackLimit``: 50), and a prompt's commit adds a few
objects to a few dozen, so a check every 20 commits runs maintenance at most
a few hundred objects later than a check per commit would; two git processes
(reading ``maintenance.auto``, then ``git maintenance run --auto``) per 20
prompts cost ~0.2 ms a prompt instead of one process (~1.3-4.7 ms) each."""

MAINTENANCE_TIMEOUT_MS = 60_000
"""How long one work tree's maintenance may take (ms) before it is ended.

``git gc --auto`` detaches into the background by default
(``gc.autoDetach``), so this bound only binds where the user turned that off
and a repack of a large repository runs in the foreground."""

_NO_AUTO_MAINTENANCE = ("-c", "maintenance.auto=false", "-c", "gc.auto=0")

_NO_DETACH = ("-c", "gc.autoDetach=false", "-c", "maintenance.autoDetach=false")
"""The runner's own maintenance runs in the foreground, within its bound."""

_COMMIT_GRAPH = ("-c", "maintenance.commit-graph.enabled=true")
"""The runner's maintenance also runs git's commit-graph task (``git
commit-graph write --split --reachable``) when it is due: git's own
``--auto`` rule, 100 or more commits reachable from a ref and not yet in the
graph (``maintenance.commit-graph.auto``). A run adds a commit a prompt, and
a repository that never gets a real ``git gc`` (which writes the graph too,
``gc.writeCommitGraph``) would otherwise have every one of them only as a
loose object: ``git rev-list --count HEAD``, which ``watch`` samples, read
301 such commits in 6.9 ms and 2.3 ms with the graph. Passed as ``-c`` (never
written to the user's config), and left out where the user set
``maintenance.commit-graph.enabled`` either way."""

MESSAGE_FILE = "PROMPT_RUNNER_COMMIT_MSG"
"""The commit message's file in the git directory, while a scoped commit runs."""

_CLEANUP = "--cleanup=whitespace"
"""What git does with a ``-F`` message by default, whatever the user's
``commit.cleanup``: trailing whitespace and blank edges go, ``#`` lines stay
(``strip`` would drop a ``#42 fix`` message whole and fail the commit)."""


@dataclass(frozen=True)
class CommitResult:
    """What a committer did.

    Attributes:
        commits: repo name -> new commit sha, for each repo committed (repos
            that share one git work tree are committed once, under the first
            name).
        skipped: ``True`` when the committer commits nothing by design (noop).
        error: why committing failed (names the repo), else ``None``.
        heads: repo name -> HEAD sha after committing, for every name the
            committer looked at (committed or not; names sharing a work tree
            included) whose HEAD it could read.
        paths: repo name -> the work-tree-relative paths its work tree's commit
            took (empty for a commit of every change).
        exact: ``True`` when no commit hook ran that could have written files,
            so the committed paths (every change, for an unscoped commit) are
            known to be clean afterwards.
        added: repo name -> the paths its commit holds that the runner did not
            ask for (a commit hook staged them; as
            :func:`~prompt_runner.git.shown_path` shows them). Only for a
            commit scoped to paths in a work tree with commit hooks.
        restaged: repo name -> the paths where its commit differs from what the
            runner staged, which is what the verifier saw (a hook rewrote,
            staged or unstaged them; shown as ``added`` is). Only for a commit
            scoped to paths in a work tree with commit hooks; a repo left out is
            unknown.
    """

    commits: Mapping[str, str] = field(default_factory=dict)
    skipped: bool = False
    error: str | None = None
    heads: Mapping[str, str] = field(default_factory=dict)
    paths: Mapping[str, frozenset[str]] = field(default_factory=dict)
    exact: bool = False
    added: Mapping[str, frozenset[str]] = field(default_factory=dict)
    restaged: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def progress_suffix(self) -> str:
        """The ``progress.log`` suffix: sha, ``repo=sha,...``, ``no_changes`` or ``no_commit``."""
        if self.skipped:
            return "no_commit"
        if not self.commits:
            return "no_changes"
        if len(self.commits) == 1:
            return next(iter(self.commits.values()))
        return ",".join(f"{name}={sha}" for name, sha in self.commits.items())


class Committer(Protocol):
    """Commits a verified prompt's work."""

    name: str

    def commit(
        self,
        *,
        prompt_id: str,
        message: str,
        repos: Mapping[str, Path],
        paths: Mapping[str, Collection[str]] | None = None,
    ) -> CommitResult:
        """Commit each repo in ``repos`` (name -> path) that has changes.

        ``paths``: per repo name, the paths (relative to the repo's work-tree
        root) that are this prompt's work; only those are committed, so a
        user's unrelated uncommitted files never ride along. ``None`` = every
        change in the repo.
        """
        ...


class NoopCommitter:
    """Commits nothing (``--no-commit`` / API default)."""

    name = "noop"

    def commit(
        self,
        *,
        prompt_id: str,
        message: str,
        repos: Mapping[str, Path],
        paths: Mapping[str, Collection[str]] | None = None,
    ) -> CommitResult:
        return CommitResult(skipped=True)


class CallbackCommitter:
    """Delegates to ``callback(prompt_id, message, repos) -> CommitResult``."""

    name = "callback"

    def __init__(self, callback: Callable[[str, str, Mapping[str, Path]], CommitResult]) -> None:
        self._callback = callback

    def commit(
        self,
        *,
        prompt_id: str,
        message: str,
        repos: Mapping[str, Path],
        paths: Mapping[str, Collection[str]] | None = None,
    ) -> CommitResult:
        return self._callback(prompt_id, message, repos)


COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
"""The hooks ``git commit`` may run: any of them may write into the work tree."""

REJECTING_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg")
"""The hooks whose failure stops ``git commit``."""


@dataclass(frozen=True)
class RepoDirs:
    """Where one work tree's git data lives (one ``git rev-parse`` per path per run).

    Attributes:
        root: the work-tree root.
        git_dir: its git directory (``.git``, or ``.git/worktrees/<name>``).
        common_dir: the directory holding refs and objects.
        hooks_dir: where ``git commit`` looks for hooks (``core.hooksPath`` honoured).
    """

    root: Path
    git_dir: Path
    common_dir: Path
    hooks_dir: Path

    def commit_hooks(self, names: Collection[str] = COMMIT_HOOKS) -> list[str]:
        """The executable hooks among ``names`` (in that order)."""
        return [hook for hook in names if os.access(self.hooks_dir / hook, os.X_OK)]

    def has_commit_hooks(self) -> bool:
        return bool(self.commit_hooks())

    def has_submodules(self) -> bool:
        """True when the work tree declares submodules (a ``.gitmodules`` file)."""
        return (self.root / ".gitmodules").exists()


_HEX = frozenset("0123456789abcdef")


def read_git_file(path: str | Path) -> str:
    """The stripped ASCII text of a small git file (``HEAD``, a loose ref: well
    under 4 KiB), read with one ``read`` -- no file object, which costs more
    than the read (these are read several times a prompt).

    Raises:
        OSError: it cannot be opened or read; UnicodeDecodeError: not ASCII.
    """
    fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    try:
        data = os.read(fd, 4096)
        while len(data) % 4096 == 0 and (more := os.read(fd, 65536)):
            data += more  # longer than a ref file ever is: read it all
    finally:
        os.close(fd)
    return data.decode("ascii").strip()


def read_head(git_dir: Path, common_dir: Path) -> str | None:
    """The commit HEAD points at, read from the files-backend ref files.

    Follows ``HEAD`` (``ref: refs/heads/<branch>`` or a detached sha) to the
    loose ref file, which git writes on every commit. Returns ``None`` when
    the answer is not plainly there (reftable storage, a packed-only ref, an
    unusual ``HEAD``); callers then ask ``git rev-parse HEAD``.
    """
    try:
        text = read_git_file(os.path.join(git_dir, "HEAD"))
        if text.startswith("ref: "):
            ref = text[len("ref: ") :]
            if not ref.startswith("refs/heads/") or ".." in ref.split("/"):
                return None
            text = read_git_file(os.path.join(common_dir, ref))
    except (OSError, UnicodeDecodeError):
        return None
    if len(text) in (40, 64) and set(text) <= _HEX:
        return text
    return None


_COMMIT_REGISTRAR = threading.local()
"""``.fn``: ``(pid, prompt_id) -> unregister`` for this thread's run, set by the
run as it starts (``runner/orphans.reap``); per thread, so two library runs on
two threads of one process never register in each other's registry."""


def register_commits_with(
    registrar: Callable[[int, str], Callable[[], None] | None] | None,
) -> None:
    """Set how this thread's ``git commit`` children are registered while they
    run in a work tree with commit hooks: ``registrar(pid, prompt_id)`` records
    the process and returns what unregisters it (``None``: nothing to undo); it
    may raise OSError (the commit then runs unregistered). ``None`` unsets it."""
    _COMMIT_REGISTRAR.fn = registrar


class GitCommitter:
    """``git add`` + ``git commit -F MESSAGE_FILE`` in every changed target repo's work tree."""

    name = "git"

    def __init__(
        self,
        timeout_ms: int = 120_000,
        lock_wait_s: float = INDEX_LOCK_WAIT_S,
        maintenance_timeout_ms: int = MAINTENANCE_TIMEOUT_MS,
    ) -> None:
        """``timeout_ms``: per git call, in ms; ``lock_wait_s``: how long (s) a held
        ``index.lock`` is waited for before the commit fails naming it;
        ``maintenance_timeout_ms``: the bound of one work tree's maintenance
        (:meth:`maintain`), in ms."""
        self._timeout_ms = timeout_ms
        self._lock_wait_s = lock_wait_s
        self._maintenance_timeout_ms = maintenance_timeout_ms
        self._repos: dict[Path, RepoDirs] = {}
        self._unmaintained: dict[Path, int] = {}  # work-tree root -> commits since its check
        self._git_env: dict[str, str] | None = None

    def maintain(self, *, due_only: bool = False) -> list[str]:
        """Run git's auto-maintenance in the work trees this committer committed in.

        ``due_only=False`` (the end of a run, however it ended): every work tree
        with a commit since its last check; ``True`` (after a prompt): only
        those with at least :data:`MAINTENANCE_EVERY` commits since. In each,
        ``maintenance.auto`` is read first and a user's ``false`` is respected
        (``git maintenance run --auto`` does not read it: git's callers do),
        then ``git maintenance run --auto --quiet`` with the commit-graph task
        too unless the user set ``maintenance.commit-graph.enabled``
        (:data:`_COMMIT_GRAPH`; ``git gc --auto --quiet`` on a git without
        ``maintenance``), each git
        bounded by ``maintenance_timeout_ms`` (:data:`MAINTENANCE_TIMEOUT_MS`).
        A work tree counts as checked whatever the outcome, so a failure is not
        retried at once.

        Returns:
            One line per work tree whose maintenance failed or timed out
            (naming it and git's message), for the caller to say.

        Raises:
            KeyboardInterrupt: only with ``due_only=True`` (mid-run, the
                interrupt is the run's); at the end of a run an interrupt
                ends that git, stops here and comes back as a line.
        """
        due = [
            root
            for root, count in self._unmaintained.items()
            if count >= (MAINTENANCE_EVERY if due_only else 1)
        ]
        problems: list[str] = []
        for root in due:
            del self._unmaintained[root]
            try:
                problem = self._maintain_one(root)
            except KeyboardInterrupt:  # proc.run ended that git
                if due_only:
                    raise  # mid-run: the interrupt is the run's
                problems.append(f"git maintenance in {root} was cut short by an interrupt")
                break  # the run is ending: it goes on ending
            except Exception as exc:  # never let maintenance fail a run
                problem = f"{type(exc).__name__}: {exc}"
            if problem is not None:
                problems.append(f"git maintenance in {root} failed (not retried): {problem}")
        return problems

    def _maintain_one(self, root: Path) -> str | None:
        """One work tree's auto-maintenance; why it failed, or ``None``."""
        settings = self._maintenance_settings(root)
        if settings.get("maintenance.auto") == "false":
            return None  # the user's own choice, as git's commands respect it
        # the commit-graph task too, unless the user decided about it: see _COMMIT_GRAPH
        graph = _COMMIT_GRAPH if "maintenance.commit-graph.enabled" not in settings else ()
        # in the foreground: git detaches an auto gc (and, from 2.47, an auto
        # maintenance) by default, which would outlive the bound, a Ctrl-C and
        # the run itself -- and `stop` would find it as the run's leftover
        res = self._bounded_git(
            root, *_NO_DETACH, *graph, "maintenance", "run", "--auto", "--quiet"
        )
        if not res.ok and "is not a git command" in res.stderr:  # git before 2.29
            res = self._bounded_git(root, *_NO_DETACH, "gc", "--auto", "--quiet")
        if res.ok:
            return None
        if res.timed_out:
            return f"ended after {self._maintenance_timeout_ms} ms"
        return failure_line(res)

    def _maintenance_settings(self, root: Path) -> dict[str, str]:
        """The user's ``maintenance.auto`` and ``maintenance.commit-graph.enabled``
        as git reads them for ``root`` (booleans normalised to ``true``/``false``),
        one ``git config`` call; the keys that are not set are absent. A value
        git cannot read as a boolean leaves both out (maintenance then runs as
        git's defaults say, as it did before either was read)."""
        res = self._bounded_git(
            root,
            "config",
            "--bool",
            "--get-regexp",
            r"^maintenance\.(auto|commit-graph\.enabled)$",
        )
        if not res.ok:  # 1: neither is set; otherwise git could not read one
            return {}
        settings: dict[str, str] = {}
        for line in res.stdout.splitlines():
            key, _, value = line.partition(" ")
            settings[key] = value.strip()  # the last of a multi-valued key wins, as in git
        return settings

    def _bounded_git(self, root: Path, *args: str) -> proc.ProcResult:
        env = without_pathspec_env(os.environ)
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"  # "is not a git command" is matched above
        return proc.run(["git", *args], cwd=root, env=env, timeout_ms=self._maintenance_timeout_ms)

    def _git(
        self, repo: Path, *args: str, stdin: str | None = None, registered: str | None = None
    ) -> proc.ProcResult:
        """Run git; while another git process holds the index lock (e.g. a commit
        left running by a runner that was killed), wait for it up to
        ``lock_wait_s`` seconds (default :data:`INDEX_LOCK_WAIT_S`) before
        reporting the failure.

        The environment drops the pathspec-mode variables, so the
        ``:(literal)`` prefix of every path is read as magic (see ``git.py``).
        ``registered``: the prompt id to register the child under while it runs
        (:meth:`_register`)."""
        env = self._env()
        deadline = time.monotonic() + self._lock_wait_s
        while True:
            res = self._run_git(repo, args, env, stdin, registered)
            locked = "index.lock': File exists" in res.stderr
            if res.ok or not locked or time.monotonic() >= deadline:
                return res
            time.sleep(0.2)

    def _env(self) -> dict[str, str]:
        """The environment of this committer's git children: the runner's as it
        was at the first of them (a run's own environment does not change under
        it), minus the pathspec-mode variables, never prompting, in the C locale
        ("nothing to commit" is matched). Built once: copying ``os.environ`` for
        each child cost ~0.2 ms of it."""
        if self._git_env is None:
            env = without_pathspec_env(os.environ)
            env["GIT_TERMINAL_PROMPT"] = "0"
            env["LC_ALL"] = "C"
            self._git_env = env
        return self._git_env

    def _run_git(
        self,
        repo: Path,
        args: tuple[str, ...],
        env: dict[str, str],
        stdin: str | None,
        registered: str | None = None,
    ) -> proc.ProcResult:
        """One git child: through ``posix_spawn`` (:func:`proc.start_quick`, as
        ``git -C <repo>``, with ``SIGPIPE``/``SIGXFSZ`` at their defaults for the
        hooks a commit runs) where the platform has it, else ``subprocess``.
        Either way in a new session, bounded by the commit timeout, ended with
        its group when the caller is interrupted; with ``registered`` (a prompt
        id), registered while it runs (:meth:`_register`)."""
        on_start = None
        if registered is not None:
            on_start = lambda pid: self._register(pid, registered)  # noqa: E731
        if quick_available():
            started = proc.start_quick(
                ("git", "-C", str(repo), *args),
                env=env,
                timeout_ms=self._timeout_ms,
                stdin=stdin.encode("utf-8", "surrogateescape") if stdin is not None else None,
                restore_signals=True,
            )
            if isinstance(started, proc.ProcResult):
                return started
            forget = on_start(started.pid) if on_start is not None else None
            try:
                return started.result()
            finally:
                if forget is not None:
                    forget()
        return proc.run(
            ["git", *args],
            cwd=repo,
            env=env,
            timeout_ms=self._timeout_ms,
            stdin_text=stdin,
            on_start=on_start,
        )

    def _register(self, pid: int, prompt_id: str) -> Callable[[], None] | None:
        """Register the running ``git commit`` ``pid`` (its process group: the
        hooks and their children) as agents are, through the registrar the run
        set on this thread as it started (:func:`register_commits_with`), so a
        runner killed while a hook runs leaves it to ``stop`` and the next run,
        not to land a commit later. Returns what unregisters it; ``None`` when
        nothing was registered (no registrar on this thread, or the record
        could not be written)."""
        registrar = getattr(_COMMIT_REGISTRAR, "fn", None)
        if registrar is None:
            return None
        try:
            unregister: Callable[[], None] | None = registrar(pid, prompt_id)
        except OSError:
            return None  # the commit still runs, unregistered, as an agent would
        return unregister

    def _commit(
        self,
        root: Path,
        message: str,
        scope: list[str],
        stdin: str | None,
        registered: str | None = None,
    ) -> proc.ProcResult:
        """``git commit -q -F -`` (or ``-F FILE``): the message never goes through argv,
        where Linux caps one word at 128 KiB (E2BIG). It goes on stdin (``-F -``,
        which git reads exactly as a file) unless stdin carries the pathspecs; only
        then is it written to a file, ``PROMPT_RUNNER_COMMIT_MSG`` in the work
        tree's git directory (beside git's own ``COMMIT_EDITMSG``), removed after
        the commit: a runner killed meanwhile leaves that one file there, which the
        next commit removes (``-F -`` or not), never a directory per commit in
        ``$TMPDIR``."""
        if stdin is None:
            # This runner holds the work tree's commit lock, so a message file
            # there is one a killed runner left: gone with the next commit of any
            # kind, not only the next scoped one.
            located = self._repo(root)
            if located is not None:
                with contextlib.suppress(OSError):
                    (located.git_dir / MESSAGE_FILE).unlink()
            return self._git(
                root,
                *_NO_AUTO_MAINTENANCE,
                "commit",
                "-q",
                _CLEANUP,
                "-F",
                "-",
                *scope,
                stdin=message,
                registered=registered,
            )
        repo = self._repo(root)
        if repo is None:  # located before the commit: not seen, but never an editor
            with tempfile.TemporaryDirectory(prefix="prompt-runner-commit-") as tmp:
                file = Path(tmp) / "message.txt"
                return self._commit_from(file, root, message, scope, stdin, registered)
        # one runner commits in a work tree at a time (its lock): one file name
        return self._commit_from(
            repo.git_dir / MESSAGE_FILE, root, message, scope, stdin, registered
        )

    def _commit_from(
        self,
        file: Path,
        root: Path,
        message: str,
        scope: list[str],
        stdin: str,
        registered: str | None = None,
    ) -> proc.ProcResult:
        file.write_text(message, encoding="utf-8")
        try:
            return self._git(
                root,
                *_NO_AUTO_MAINTENANCE,
                "commit",
                "-q",
                _CLEANUP,
                "-F",
                str(file),
                *scope,
                stdin=stdin,
                registered=registered,
            )
        finally:
            with contextlib.suppress(OSError):
                file.unlink()

    def locate(self, path: Path) -> RepoDirs | None:
        """The work tree ``path`` belongs to (cached); ``None`` if not a git repo."""
        return self._repo(path)

    def plain(self, paths: Collection[Path]) -> bool:
        """True when no work tree of ``paths`` has a commit hook or submodules: a
        commit there takes exactly what git status showed, and nothing else
        (the runner may then commit a clean session whole, unseen)."""
        for path in paths:
            repo = self._repo(path)
            if repo is None or repo.has_commit_hooks() or repo.has_submodules():
                return False
        return True

    def _repo(self, path: Path) -> RepoDirs | None:
        """The work tree ``path`` belongs to (cached); ``None`` if not a git repo."""
        known = self._repos.get(path)
        if known is not None:
            return known
        res = self._git(
            path,
            "rev-parse",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
            "--git-path",
            "hooks",
        )
        lines = res.stdout.splitlines()
        if not res.ok or len(lines) != 4:
            return None
        base = Path(path)
        root, git_dir, common, hooks = (Path(line) for line in lines)
        found = RepoDirs(root, git_dir, base / common, base / hooks)  # relative to `path`
        self._repos[path] = found
        return found

    @staticmethod
    def _note_head(
        repo: RepoDirs,
        names: list[str],
        heads: dict[str, str],
        taken: dict[str, frozenset[str]],
        wanted: frozenset[str],
    ) -> str | None:
        """Record ``repo``'s HEAD (from its ref file) and what was taken, for ``names``."""
        sha = read_head(repo.git_dir, repo.common_dir)
        for each in names:
            taken[each] = wanted
            if sha is not None:
                heads[each] = sha
        return sha

    @staticmethod
    def _byte_names(root: Path, wanted: Collection[str]) -> list[str]:
        """``wanted`` (paths as the runner holds them, :func:`~prompt_runner.git.shown_path`)
        as git names them, sorted: a name that is not UTF-8 is held with ``U+FFFD``
        for its bytes, which names no file, so each such path becomes every changed
        path of ``root`` shown that way (one ``git status``; the runner could not
        tell them apart either). Without ``U+FFFD``, ``wanted`` as it is."""
        if not any("\ufffd" in p for p in wanted):
            return sorted(wanted)
        try:
            entries = porcelain_status(root, byte_exact=True)
        except GitError:
            return sorted(wanted)  # staging then says what git says
        by_shown: dict[str, set[str]] = {}
        for entry in entries:
            for raw in (entry.path, entry.orig_path):
                if raw is not None:
                    by_shown.setdefault(shown_path(raw), set()).add(raw)
        out: set[str] = set()
        for path in wanted:
            out |= by_shown.get(path, {path}) if "\ufffd" in path else {path}
        return sorted(out)

    def _stage(self, root: Path, wanted: Collection[str] | None) -> str | None:
        """Stage ``wanted`` (work-tree-relative paths; ``None`` = everything).

        Paths still on disk go through ``git add -A``; paths gone from the work
        tree through ``git rm --cached --ignore-unmatch``, because ``git add``
        refuses a path that is in neither the work tree nor the index (the
        source of a ``git mv``, a ``git rm``). Returns why staging failed, or ``None``.
        """
        if wanted is None:
            res = self._git(root, "add", "-A")
            return None if res.ok else f"git add failed: {failure_line(res)}"
        present = [p for p in sorted(wanted) if os.path.lexists(root / p)]
        missing = [p for p in sorted(wanted) if p not in present]
        # git status names an untracked repository of its own `dir/` (a submodule: `dir`);
        # `git add` would record it as a bare gitlink, and the files in it nowhere
        nested = [p for p in present if p.endswith("/") and os.path.lexists(root / p / ".git")]
        if nested:
            return (
                f"{', '.join(nested)} is a git repository inside the work tree, not a "
                "submodule: git would commit it as a bare gitlink and none of the files in "
                "it. Commit them in that repository, add it as a submodule (`git "
                "submodule add`), or move the work out of it; nothing was committed"
            )
        scope = ["--pathspec-from-file=-", "--pathspec-file-nul"]
        if present:
            res = self._git(root, "add", "-A", *scope, stdin=literal_pathspecs(present))
            if not res.ok:
                return f"git add failed: {failure_line(res)}"
        if missing:
            res = self._git(
                root,
                "rm",
                "-q",
                "--cached",
                "--ignore-unmatch",
                *scope,
                stdin=literal_pathspecs(missing),
            )
            if not res.ok:
                return f"git rm --cached failed: {failure_line(res)}"
        return None

    def _index_to_commit(
        self, root: Path, sha: str, named: Collection[str]
    ) -> tuple[set[str] | None, set[str] | None, str | None]:
        """After a scoped commit that ran hooks: what commit ``sha`` holds, where it
        differs from what the runner staged, and the real index made to match it
        for those paths and ``named`` (git's names of the paths the runner asked for).

        ``git commit -- <paths>`` builds the commit in a temporary index, so what
        a hook stages there (a formatter's ``git add``) reaches the commit but not
        the user's index, whose next ``git commit`` would silently revert it; a
        path a hook unstaged stays staged there. ``git reset -q <sha> -- <paths>``
        sets each to the commit's entry (or none).

        Returns:
            The commit's paths (byte-exact), the paths where the commit differs
            from the real index as the runner staged it -- what the verifier saw
            -- (as :func:`~prompt_runner.git.shown_path` shows them; read before
            the index is set), each ``None`` when git could not list them; and
            why the index could not be set (else ``None``).
        """
        staged = run_git_paths(
            root, "diff", "--cached", "--no-renames", "--name-only", "-z", sha
        )  # the real index still holds the runner's staging: the temporary one took the hooks'
        apart = {shown_path(p) for p in staged.stdout.split("\0") if p} if staged.ok else None
        listed = run_git_paths(
            root, "diff-tree", "-r", "-z", "--root", "--no-renames", "--no-commit-id",
            "--name-only", sha,
        )  # fmt: skip
        inside = {p for p in listed.stdout.split("\0") if p} if listed.ok else None
        scope = sorted(set(named) | (inside or set()))
        if not scope:
            return inside, apart, None
        res = self._git(
            root,
            "reset",
            "-q",
            sha,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=literal_pathspecs(scope),
        )
        if res.ok:
            return inside, apart, None
        return (
            inside,
            apart,
            (
                f"the commit {sha[:12]} was made, but the index could not be set to it for "
                f"its paths (git reset failed: {failure_line(res)}); `git status` shows "
                f"them changed: run `git reset -q {sha[:12]} -- <path>` for each"
            ),
        )

    def commit(
        self,
        *,
        prompt_id: str,
        message: str,
        repos: Mapping[str, Path],
        paths: Mapping[str, Collection[str]] | None = None,
    ) -> CommitResult:
        # Group the repo names by work tree: names sharing one are committed together.
        groups: dict[Path, tuple[RepoDirs, list[str]]] = {}
        for name, path in repos.items():
            repo = self._repo(path)
            if repo is None:
                return CommitResult(error=f"{name} ({path}) is not a git repository")
            groups.setdefault(repo.root, (repo, []))[1].append(name)
        ordered = _inner_first(list(groups.values()))
        commits: dict[str, str] = {}
        heads: dict[str, str] = {}
        taken: dict[str, frozenset[str]] = {}
        added: dict[str, frozenset[str]] = {}
        restaged: dict[str, frozenset[str]] = {}
        exact = True
        for repo, names in ordered:
            scope: list[str] = []
            stdin = None
            wanted: frozenset[str] = frozenset()
            named: list[str] = []
            if paths is not None:
                wanted = frozenset(p for name in names for p in paths.get(name, ()))
                # a clone inside this work tree committed on its own (just before):
                # git names it `dir/`, and staging it would record a bare gitlink
                wanted -= {f"{inner}/" for inner in _inner_roots(repo.root, groups)}
                if not wanted:  # nothing of this prompt's work in this work tree
                    self._note_head(repo, names, heads, taken, wanted)
                    continue
                named = self._byte_names(repo.root, wanted)  # a name not UTF-8: its bytes
                scope = ["--pathspec-from-file=-", "--pathspec-file-nul"]
                stdin = literal_pathspecs(named)
            name = names[0]
            error = self._stage(repo.root, named if paths is not None else None)
            if error is not None:
                return CommitResult(commits, error=f"{name}: {error}")
            hooked = repo.has_commit_hooks()
            exact = exact and not hooked
            # registered while its hooks run: see _register
            done = self._commit(
                repo.root, message, scope, stdin, registered=prompt_id if hooked else None
            )
            if not done.ok:
                if "nothing to commit" in done.stdout + done.stderr:
                    self._note_head(repo, names, heads, taken, wanted)
                    continue  # a clean tree: nothing to record for this repo
                why = commit_failure(done, repo.commit_hooks(REJECTING_HOOKS), repo.hooks_dir)
                return CommitResult(commits, error=f"{name}: {why}")
            self._unmaintained[repo.root] = self._unmaintained.get(repo.root, 0) + 1
            sha = self._note_head(repo, names, heads, taken, wanted)
            if sha is None:
                sha = self._git(repo.root, "rev-parse", "HEAD").stdout.strip()
                for each in names:
                    heads[each] = sha
            commits[name] = sha
            if paths is not None and repo.has_commit_hooks():
                inside, apart, problem = self._index_to_commit(repo.root, sha, named)
                if inside is not None:
                    extra = frozenset(shown_path(p) for p in inside) - wanted
                    if extra:
                        added[name] = extra
                if apart is not None:
                    restaged[name] = frozenset(apart)
                if problem is not None:
                    return CommitResult(commits, error=f"{name}: {problem}", heads=heads)
        return CommitResult(
            commits, heads=heads, paths=taken, exact=exact, added=added, restaged=restaged
        )


def _inner_roots(root: Path, groups: Mapping[Path, object]) -> list[str]:
    """The work-tree roots among ``groups``' keys that lie inside ``root``, as
    paths relative to it."""
    outer = root.resolve()
    inside = (each.resolve() for each in groups if each != root)
    return [p.relative_to(outer).as_posix() for p in inside if p.is_relative_to(outer)]


def _inner_first(
    groups: list[tuple[RepoDirs, list[str]]],
) -> list[tuple[RepoDirs, list[str]]]:
    """``groups`` in their order, except that a work tree inside another (a
    submodule or a nested clone declared as a repo of its own) comes before it:
    its commit is made first, so the superproject's records the new pointer."""
    out: list[tuple[RepoDirs, list[str]]] = []
    for group in groups:
        root = group[0].root.resolve()
        outer = [i for i, (other, _) in enumerate(out) if root.is_relative_to(other.root.resolve())]
        out.insert(outer[0] if outer else len(out), group)
    return out


def make_committer(name: str) -> Committer:
    """``git`` or ``noop``."""
    if name == "git":
        return GitCommitter()
    return NoopCommitter()
