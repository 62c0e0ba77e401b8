"""Each target repo's branch and HEAD, pinned as a run starts (see ``repo_guard``).

Read from the ref files (``<git dir>/HEAD`` and the branch's ref): no git
process on the common path. A repo that left the pinned branch, or whose HEAD
no longer descends from the pinned one, is named with the way back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import git
from ..committer import GitCommitter, RepoDirs, read_git_file, read_head
from ..verifier.model import VerifierItem, item


@dataclass
class Pin:
    """Where one target repo was when the run started.

    Attributes:
        path: the repo directory.
        dirs: its work tree's git directories.
        branch: the checked-out branch (``main``), ``None`` on a detached HEAD.
        head: the last HEAD known to be on the run's line of history
            (``None`` before the first commit).
    """

    path: Path
    dirs: RepoDirs
    branch: str | None
    head: str | None


def _branch(pin_path: Path, dirs: RepoDirs) -> str | None:
    """The branch ``HEAD`` names, read from ``<git dir>/HEAD`` (git when unclear)."""
    try:
        text = read_git_file(dirs.git_dir / "HEAD")
    except (OSError, UnicodeDecodeError):
        text = ""
    if text.startswith("ref: refs/heads/") and text != "ref: refs/heads/.invalid":
        return text[len("ref: refs/heads/") :]
    if len(text) in (40, 64) and not text.startswith("ref: "):
        return None  # detached
    return git.current_branch(pin_path)  # reftable or an unusual HEAD


def _head(pin_path: Path, dirs: RepoDirs) -> str | None:
    return read_head(dirs.git_dir, dirs.common_dir) or git.head_sha(pin_path)


def _descends(root: Path, old: str, new: str) -> bool:
    """True when commit ``new`` has ``old`` in its history (``git merge-base --is-ancestor``)."""
    return git.run_git(root, "merge-base", "--is-ancestor", old, new).returncode == 0


def _where(branch: str | None, head: str | None) -> str:
    if branch is not None:
        return f"branch {branch!r}"
    return f"a detached HEAD ({head[:12] if head else 'no commit'})"


class BranchPins:
    """Each target repo's branch and HEAD, pinned at run start (see the module doc)."""

    def __init__(self, pins: Mapping[str, Pin]) -> None:
        self.pins = dict(pins)

    @classmethod
    def start(cls, committer: GitCommitter, repos: Mapping[str, Path]) -> BranchPins:
        """Pin ``repos`` (name -> directory); repos that are not git work trees are skipped."""
        pins: dict[str, Pin] = {}
        for name, path in repos.items():
            dirs = committer.locate(path)
            if dirs is not None:
                pins[name] = Pin(path, dirs, _branch(path, dirs), _head(path, dirs))
        return cls(pins)

    def detached(self) -> list[str]:
        """Warnings for the pinned repos that are on a detached HEAD."""
        return [
            f"repo {name!r} ({pin.path}) is on a detached HEAD "
            f"({pin.head[:12] if pin.head else 'no commit'}): its prompts' commits land on "
            "no branch; check out a branch first if the work should land on one"
            for name, pin in self.pins.items()
            if pin.branch is None
        ]

    def moved(self, names: Iterable[str]) -> dict[str, str]:
        """Per repo of ``names`` that left the run's branch or history, a sentence
        saying where it is and how to return. A repo whose HEAD moved forward on
        the pinned branch (a session's own commit) moves its pin along."""
        out: dict[str, str] = {}
        for name in names:
            pin = self.pins.get(name)
            if pin is None:
                continue
            branch, head = _branch(pin.path, pin.dirs), _head(pin.path, pin.dirs)
            started = _where(pin.branch, pin.head)
            if branch != pin.branch:
                back = f"git switch {pin.branch}"
                if pin.branch is None:
                    back = f"git switch --detach {pin.head}"
                out[name] = (
                    f"repo {name!r} is on {_where(branch, head)}, but the run started on "
                    f"{started}; the runner commits only there. Return with `{back}` "
                    "(bring your uncommitted changes along) and redo any commit made "
                    "elsewhere on it."
                )
            elif head != pin.head and pin.head is not None:
                if head is not None and _descends(pin.dirs.root, pin.head, head):
                    pin.head = head  # a commit on top: still the run's history
                    continue
                out[name] = (
                    f"the history of repo {name!r} was rewritten: HEAD "
                    f"{head[:12] if head else '(none)'} no longer contains {pin.head[:12]}, "
                    f"where the run left {started} (a reset, rebase or amend). Restore it "
                    f"with `git reset --keep {pin.head}` (uncommitted changes are kept) and "
                    "redo the work without rewriting history."
                )
        return out

    def failures(self, names: Iterable[str]) -> list[VerifierItem]:
        """:meth:`moved` as failed ``repo_branch`` verifier items (a repair acts on them)."""
        return [
            item("repo_branch", passed=False, repo=name, details=sentence)
            for name, sentence in self.moved(names).items()
        ]

    def committed(self, heads: Mapping[str, str]) -> None:
        """The runner committed: ``heads`` (repo name -> new HEAD) are the pins now."""
        for name, sha in heads.items():
            if name in self.pins:
                self.pins[name].head = sha
