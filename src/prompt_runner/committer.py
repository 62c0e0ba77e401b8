"""Committers: record a verified prompt's work in git (SPEC 3.5).

``git`` commits every target repo that has changes with the prompt's
``commit`` message (``git add -A`` then ``git commit``), after the verifier
passed; ``noop`` commits nothing (``--no-commit``: commits are the session's
business); a callback committer lets API users decide. A failed commit is a
result (:attr:`CommitResult.error`), never swallowed: the runner records the
prompt as ``commit_failed``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from . import proc

INDEX_LOCK_WAIT_S = 10.0


@dataclass(frozen=True)
class CommitResult:
    """What a committer did.

    Attributes:
        commits: repo name -> new commit sha, for each repo committed.
        skipped: ``True`` when the committer commits nothing by design (noop).
        error: why committing failed (names the repo), else ``None``.
    """

    commits: Mapping[str, str] = field(default_factory=dict)
    skipped: bool = False
    error: str | None = None

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


class GitCommitter:
    """``git add -A`` + ``git commit -m MESSAGE`` in every changed target repo."""

    name = "git"

    def __init__(self, timeout_ms: int = 120_000) -> None:
        self._timeout_ms = timeout_ms
        self._toplevel: dict[Path, Path] = {}

    def _git(self, repo: Path, *args: str, stdin: str | None = None) -> proc.ProcResult:
        """Run git; while another git process holds the index lock (e.g. a commit
        left running by a runner that was killed), wait for it up to
        :data:`INDEX_LOCK_WAIT_S` seconds before reporting the failure."""
        env = dict(os.environ)
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"  # "nothing to commit" is matched below
        deadline = time.monotonic() + INDEX_LOCK_WAIT_S
        while True:
            res = proc.run(
                ["git", *args], cwd=repo, env=env, timeout_ms=self._timeout_ms, stdin_text=stdin
            )
            locked = "index.lock': File exists" in res.stderr
            if res.ok or not locked or time.monotonic() >= deadline:
                return res
            time.sleep(0.2)

    def commit(
        self,
        *,
        prompt_id: str,
        message: str,
        repos: Mapping[str, Path],
        paths: Mapping[str, Collection[str]] | None = None,
    ) -> CommitResult:
        commits: dict[str, str] = {}
        seen: set[Path] = set()
        for name, path in repos.items():
            root = self._toplevel.get(path)
            if root is None:
                top = self._git(path, "rev-parse", "--show-toplevel")
                if not top.ok:
                    return CommitResult(commits, error=f"{name} ({path}) is not a git repository")
                root = self._toplevel[path] = Path(top.stdout.strip())
            if root in seen:
                continue
            seen.add(root)
            scope: list[str] = []
            stdin = None
            if paths is not None:
                wanted = sorted(paths.get(name, ()))
                if not wanted:
                    continue  # nothing of this prompt's work in this repo
                scope = ["--pathspec-from-file=-", "--pathspec-file-nul"]
                stdin = "\0".join(wanted)
            added = self._git(root, "add", "-A", *scope, stdin=stdin)
            if not added.ok:
                return CommitResult(commits, error=f"{name}: git add failed: {_why(added)}")
            done = self._git(root, "commit", "-q", "-m", message, *scope, stdin=stdin)
            if not done.ok:
                if "nothing to commit" in done.stdout + done.stderr:
                    continue  # a clean tree: nothing to record for this repo
                return CommitResult(commits, error=f"{name}: git commit failed: {_why(done)}")
            sha = self._git(root, "rev-parse", "HEAD")
            commits[name] = sha.stdout.strip()
        return CommitResult(commits)


def _why(res: proc.ProcResult) -> str:
    """The most telling line of a git failure: its ``fatal:``/``error:`` line if any."""
    if res.timed_out:
        return "timed out"
    text = (res.stderr or res.stdout).strip() or res.start_error or f"exit {res.returncode}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[-1] if lines else text


def make_committer(name: str) -> Committer:
    """``git`` or ``noop``."""
    if name == "git":
        return GitCommitter()
    return NoopCommitter()
