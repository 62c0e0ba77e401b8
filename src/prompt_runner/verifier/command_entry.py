"""One ``commands`` entry as loaded: its form, its deadline, its repo references.

The entry model is shared by the clause (:mod:`.clauses.commands`: parsing,
labels, registration), the runner of a command (:mod:`.command_exec`), lint
and ``migrate-contracts``; it imports neither of the first two.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prompt_runner.verifier.model import ClauseEntry

DEFAULT_TIMEOUT_MS = 300_000
"""Deadline for a command without ``timeout_ms`` (5 minutes), legacy or structured."""

REPO_REF = re.compile(r"@repo:([A-Za-z0-9_.-]+)(?=/|$)")

ARTIFACT_REF = re.compile(r"@artifact:([A-Za-z0-9][A-Za-z0-9_.-]*)")
"""``@artifact:ID``: a workspace's contract artifact (``contracts.artifacts``), the
executable ``$PROMPT_RUNNER_ARTIFACTS_DIR/<ID>`` (docs/workspaces.md)."""

ARTIFACTS_ENV = "PROMPT_RUNNER_ARTIFACTS_DIR"
"""Where ``@artifact:ID`` resolves; a workspace's run and ``verify --workspace`` set it."""


@dataclass(frozen=True, kw_only=True)
class CommandEntry(ClauseEntry):
    """One verification command.

    Attributes:
        exec: the executable (structured form), else ``None``.
        args: literal arguments (structured form).
        shell: the shell text (legacy form), else ``None``.
        legacy: the entry is a legacy string or ``run:`` entry.
        bare_string: the legacy entry was written as a bare string.
        cwd: repo-relative working directory (``.`` = repo root).
        timeout_ms: deadline in ms (``None`` = :data:`DEFAULT_TIMEOUT_MS`).
        env: variables set over the inherited environment.
        fault_exit_codes: exit codes that mean ``verifier_fault``.
        stdout_contains, stdout_matches: output assertions.
        regenerates: repo-relative outputs the command must write anew.
    """

    exec: str | None = None
    args: tuple[str, ...] = ()
    shell: str | None = None
    legacy: bool = False
    bare_string: bool = False
    cwd: str = "."
    timeout_ms: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    fault_exit_codes: tuple[int, ...] = ()
    stdout_contains: tuple[str, ...] = ()
    stdout_matches: tuple[str, ...] = ()
    regenerates: tuple[str, ...] = ()

    @property
    def effective_timeout_ms(self) -> int:
        """``timeout_ms`` or the default."""
        return self.timeout_ms if self.timeout_ms is not None else DEFAULT_TIMEOUT_MS

    def display(self) -> str:
        """The command as a user would type it."""
        if self.shell is not None:
            return self.shell
        return shlex.join([self.exec or "", *self.args])

    def to_raw(self) -> object:
        if self.bare_string:
            return self.shell
        raw: dict[str, Any] = {"run": self.shell} if self.legacy else {"exec": self.exec}
        if not self.legacy:
            raw["args"] = list(self.args)
        optional: dict[str, Any] = {
            "repo": self.repo,
            "cwd": None if self.cwd == "." else self.cwd,
            "timeout_ms": self.timeout_ms,
            "env": dict(self.env) or None,
            "fault_exit_codes": list(self.fault_exit_codes) or None,
            "stdout_contains": list(self.stdout_contains) or None,
            "stdout_matches": list(self.stdout_matches) or None,
            "regenerates": list(self.regenerates) or None,
        }
        raw.update({k: v for k, v in optional.items() if v is not None})
        return raw

    def path_refs(self) -> tuple[tuple[str | None, str], ...]:
        refs: list[tuple[str | None, str]] = [(self.repo, p) for p in self.regenerates]
        if self.cwd != ".":
            refs.append((self.repo, self.cwd))
        if self.exec is not None:
            ref = split_repo_ref(self.exec)
            if ref is not None and ref[1] != ".":
                refs.append(ref)
        return tuple(refs)

    def repo_refs(self) -> tuple[str, ...]:
        names = [self.repo] if self.repo is not None else []
        for text in (self.exec or "", *self.args):
            names.extend(m.group(1) for m in REPO_REF.finditer(text))
        return tuple(names)


def split_repo_ref(text: str) -> tuple[str, str] | None:
    """``"@repo:NAME/a/b"`` -> ``("NAME", "a/b")``; ``None`` when ``text`` is not a repo ref."""
    m = REPO_REF.match(text)
    if m is None:
        return None
    rest = text[m.end() :].lstrip("/")
    return m.group(1), rest or "."
