"""What ``packet lint`` returns: a :class:`LintReport` of :class:`Finding` values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .messages import ERROR, WARNING


@dataclass(frozen=True)
class Finding:
    """One lint finding.

    Attributes:
        kind: a key of :data:`~prompt_runner.packet.lint.messages.MESSAGES`.
        severity: ``"error"`` or ``"warning"`` (after ``strict`` promotion).
        message: what the construct silently does, then the fix.
        prompt_id: the prompt's id when known.
        path: the file relative to the packet root (``prompts/01_x.prompt.md``).
        line: 1-based line in that file, where known.
    """

    kind: str
    severity: str
    message: str
    prompt_id: str | None = None
    path: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{kind, severity, prompt_id, file (base name), path, line, message}``."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "prompt_id": self.prompt_id,
            "file": Path(self.path).name if self.path else None,
            "path": self.path,
            "line": self.line,
            "message": self.message,
        }


@dataclass(frozen=True)
class LintReport:
    """The findings for one packet, manifest first, then prompts in run order.

    Attributes:
        packet: the packet name (manifest ``name`` or the directory name).
        root: the packet directory.
        strict: warnings were promoted to errors.
        findings: every finding.
        no_commit: the manifest leaves commits to the sessions (``committer:
            noop``), which is how ``repos_clean`` was judged.
    """

    packet: str
    root: Path
    strict: bool
    findings: tuple[Finding, ...]
    no_commit: bool = False

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == WARNING)

    @property
    def passed(self) -> bool:
        """No error findings (warnings alone pass unless ``strict``)."""
        return self.errors == 0

    def to_dict(self) -> dict[str, Any]:
        """``{packet, root, strict, errors, warnings, pass, findings: [...]}``.

        The reference system's keys ``strict?``, ``no_commit?`` and ``pass?``
        are there too, with the same values as ``strict``, ``no_commit`` and
        ``pass``, so a script written for it reads this report unchanged.
        """
        return {
            "packet": self.packet,
            "root": str(self.root),
            "strict": self.strict,
            "strict?": self.strict,
            "no_commit": self.no_commit,
            "no_commit?": self.no_commit,
            "errors": self.errors,
            "warnings": self.warnings,
            "pass": self.passed,
            "pass?": self.passed,
            "findings": [f.to_dict() for f in self.findings],
        }
