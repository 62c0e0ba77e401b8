"""Value objects of the verifier: contract, context, items and the report.

A :class:`Contract` is the validated ``verify:`` block of one prompt; each
clause family (``verifier/clauses/*``) defines its own frozen entry types that
derive from :class:`ClauseEntry`. :func:`prompt_runner.verifier.verify` turns a
contract into a :class:`VerifierReport`: one :class:`VerifierItem` per check,
each with a verdict and a ``details`` string a repair session can act on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASS = "pass"
FAILURE = "failure"
FAULT = "verifier_fault"
TIMEOUT = "verifier_timeout"
FAULT_VERDICTS = frozenset({FAULT, TIMEOUT})


@dataclass(frozen=True, kw_only=True)
class ClauseEntry:
    """One validated entry of a clause (subclassed per clause family).

    Attributes:
        repo: the logical repo the entry names, ``None`` = the prompt's first target.
    """

    repo: str | None = None

    def to_raw(self) -> object:
        """The canonical, JSON-safe, re-parseable form of this entry."""
        raise NotImplementedError

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        """``(repo or None, relative path)`` pairs checked for containment at load time."""
        return ()

    def written_paths(self) -> tuple[str, ...]:
        """The entry's paths as the contract writes them, globs whole (``beta:*.txt``,
        where :meth:`path_refs` keeps only a glob's literal prefix): what a check
        of their spelling reads."""
        return tuple(path for _repo, path in self.path_refs())

    def repo_refs(self) -> tuple[str, ...]:
        """Every repo name this entry mentions (checked against the packet's repos)."""
        return (self.repo,) if self.repo is not None else ()


@dataclass(frozen=True)
class Contract:
    """A validated completion contract.

    Attributes:
        entries: clause name -> its validated entries, in evaluation order.
            Clauses given with an empty list are dropped (they assert nothing).
    """

    entries: Mapping[str, tuple[ClauseEntry, ...]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """True when the contract asserts nothing."""
        return not any(self.entries.values())

    def has(self, clause: str) -> bool:
        """True when ``clause`` has at least one entry."""
        return bool(self.entries.get(clause))

    def clauses(self) -> tuple[str, ...]:
        """The clause names present, in evaluation order."""
        return tuple(name for name, entries in self.entries.items() if entries)

    def restricted(self, clauses: Collection[str]) -> Contract:
        """A contract holding only the named clauses (e.g. the structural subset)."""
        return Contract({k: v for k, v in self.entries.items() if k in clauses})

    def to_raw(self) -> dict[str, list[object]]:
        """JSON-safe canonical form (stable for fingerprints; :func:`parse_contract` reads it)."""
        return {name: [e.to_raw() for e in entries] for name, entries in self.entries.items()}


@dataclass(frozen=True)
class VerifyContext:
    """Where and how a contract is checked.

    Attributes:
        repos: logical repo name -> absolute directory; includes ``"packet"``.
        default_repo: the prompt's first target (used when an entry has no ``repo:``).
        env: environment for verification commands (``None`` = the runner's ``os.environ``).
        structural_only: skip ``commands`` entirely (agent-owned prompts).
        baseline: per repo name, the paths (relative to the work-tree root)
            that already had uncommitted changes when the prompt started (the
            packet's completion contract: when the run started), with their
            ``(size, mtime_ns)`` then. ``changed_paths_only`` does not count
            such a path while it is unchanged since: it is the user's or an
            earlier prompt's work, not the session's.
        own_paths: per repo name, the paths (relative to the work-tree root)
            that are the prompt's own work: what its sessions changed (taken
            from ``git status`` after its last session, before it was
            verified) and what its contract names as outputs (a path below a
            named directory counts too). ``changed_paths_only`` counts only
            these, so what a verify command writes (``coverage.xml``, a cache
            directory) is never the prompt's change. ``None``, or a repo
            missing from it: not known (pre-flight verification, ``prompt-runner
            verify``, a contract that runs no commands); the ``baseline`` rule
            alone applies.
        on_process_start: called with each verify command's pid (its
            process-group id) once it runs; returns the callable that forgets
            it when it is gone (the runner's orphan registry,
            ``runner/orphans.py``). ``None`` = not registered.
    """

    repos: Mapping[str, Path]
    default_repo: str | None
    env: Mapping[str, str] | None = None
    structural_only: bool = False
    baseline: Mapping[str, Mapping[str, tuple[int, int]]] | None = None
    own_paths: Mapping[str, Collection[str]] | None = None
    on_process_start: Callable[[int], Callable[[], None] | None] | None = None


def subject(path: str | None, command: Sequence[str] | str | None, repo: str | None) -> str:
    """What an item checked, as a report line shows it after the clause name:
    its path (quoted as JSON when it has a space at an end or a control
    character, so ``"doc.md "`` is not read as ``doc.md``); else its command
    (an argv joined as a POSIX shell would read it, ``make 'a b'``, never a
    Python list); else its repo (``repos_clean``'s items check a whole work
    tree); else ``""``."""
    if path:
        if path.isprintable() and path == path.strip():
            return path
        import json  # lazy: only a path with edge spaces or a control character

        return json.dumps(path, ensure_ascii=False)  # "doc.md ", "a\nb": seen as written
    if isinstance(command, str):
        return command
    if command:
        import shlex  # lazy: only a report with a failed command pays for it

        return shlex.join(str(word) for word in command)
    return repo or ""


@dataclass(frozen=True)
class VerifierItem:
    """One checked item of a contract.

    Attributes:
        kind: the clause name (``files_exist``, ``commands``, ...).
        repo: the logical repo the item was checked in.
        path: the repo-relative path or pattern checked, if any.
        command: the argv (structured) or shell text (legacy) that ran, if any.
        cwd: the absolute working directory of a command.
        passed: the item holds.
        verdict: ``pass`` | ``failure`` | ``verifier_fault`` | ``verifier_timeout``.
        details: a diagnostic sentence a repair session can act on (never empty).
        output: captured command output, capped with an explicit truncation marker.
        extra: clause-specific JSON-safe facts (``markers``, ``dirty_count``, ...).
    """

    kind: str
    repo: str | None
    path: str | None
    command: tuple[str, ...] | str | None
    cwd: str | None
    passed: bool
    verdict: str
    details: str
    output: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_fault(self) -> bool:
        """True for ``verifier_fault`` and ``verifier_timeout``."""
        return self.verdict in FAULT_VERDICTS

    @property
    def subject(self) -> str:
        """What the item checked, for a one-line report: see :func:`subject`."""
        return subject(self.path, self.command, self.repo)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict; ``extra`` keys are merged at the top level."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "repo": self.repo,
            "path": self.path,
            "command": list(self.command) if isinstance(self.command, tuple) else self.command,
            "cwd": self.cwd,
            "pass": self.passed,
            "verdict": self.verdict,
            "details": self.details,
            "output": self.output,
        }
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data


def item(
    kind: str,
    *,
    passed: bool,
    details: str,
    repo: str | None = None,
    path: str | None = None,
    command: tuple[str, ...] | str | None = None,
    cwd: str | None = None,
    verdict: str | None = None,
    output: str | None = None,
    **extra: Any,
) -> VerifierItem:
    """Build a :class:`VerifierItem`; ``verdict`` defaults from ``passed``."""
    return VerifierItem(
        kind=kind,
        repo=repo,
        path=path,
        command=command,
        cwd=cwd,
        passed=passed,
        verdict=verdict or (PASS if passed else FAILURE),
        details=details or ("ok" if passed else "failed"),
        output=output,
        extra=extra,
    )


@dataclass(frozen=True)
class VerifierReport:
    """Every item of one verification, in clause evaluation order.

    Attributes:
        items: all items.
        passed: every item passed (an empty contract passes).
        fault: the first ``verifier_fault``/``verifier_timeout`` item, else ``None``.
    """

    items: tuple[VerifierItem, ...]
    passed: bool
    fault: VerifierItem | None

    @classmethod
    def of(cls, items: tuple[VerifierItem, ...]) -> VerifierReport:
        """The report of ``items``."""
        fault = next((i for i in items if i.is_fault), None)
        return cls(items, all(i.passed for i in items), fault)

    def failures(self) -> tuple[VerifierItem, ...]:
        """Failed items, excluding faults."""
        return tuple(i for i in self.items if not i.passed and not i.is_fault)

    def faults(self) -> tuple[VerifierItem, ...]:
        """``verifier_fault`` and ``verifier_timeout`` items."""
        return tuple(i for i in self.items if i.is_fault)

    def to_dict(self) -> dict[str, Any]:
        """``{"pass", "items", "failures", "faults"}``, JSON-safe."""
        return {
            "pass": self.passed,
            "items": [i.to_dict() for i in self.items],
            "failures": [i.to_dict() for i in self.failures()],
            "faults": [i.to_dict() for i in self.faults()],
        }
