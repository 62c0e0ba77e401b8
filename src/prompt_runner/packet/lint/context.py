"""What every lint step shares: the packet-wide :class:`Linter` state, the
:class:`LintFile` a finding is added to, and :class:`KeyLines`, which places
a finding on the line of its key."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...errors import UserError
from ..files import relative_file
from ..frontmatter import check_written_ids, decode_text, read_bytes, split_front_matter_node
from ..source import directory_prompt_error
from ..validation import validate_model
from .messages import ERROR, ERROR_KINDS, MESSAGES, WARNING
from .report import Finding

PLACEHOLDER_MARKER = re.compile(r"<!--\s*prompt_runner:placeholder\s+([^\s>]+)\s*-->")
"""The marker ``packet new`` leaves in a placeholder prompt's body."""

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""PyYAML's C loader when it is built: the same marks as SafeLoader, far faster."""


class KeyLines:
    """1-based line numbers of the keys in a file's YAML front matter.

    ``line("verify", "commands", 0)`` is the line of that entry; a path that is
    not found falls back to its longest found prefix, then ``None``.

    The front matter is composed the first time a line is asked for (a file
    without findings never is). ``parsed``: ``(yaml_text, node)`` from
    :func:`~prompt_runner.packet.frontmatter.split_front_matter_node`, whose
    node is used when ``yaml_text`` is the text this class would compose (a
    final newline aside), as it is unless the file has ``\r\n`` line ends or
    other line breaks, or a fence line with leading blanks.
    """

    def __init__(self, text: str, parsed: tuple[str, Any] | None = None) -> None:
        self._text = text
        self._parsed = parsed
        self._found: dict[tuple[str | int, ...], int] | None = None

    @property
    def _lines(self) -> dict[tuple[str | int, ...], int]:
        if self._found is None:
            self._found = self._compose()
        return self._found

    def _compose(self) -> dict[tuple[str | int, ...], int]:
        found: dict[tuple[str | int, ...], int] = {}
        lines = self._text.lstrip("\ufeff").splitlines()
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
        if not end or lines[0].strip() != "---":
            return found
        text = "\n".join(lines[1:end])
        parsed, self._parsed, self._text = self._parsed, None, ""
        if parsed is not None and parsed[0] in (text, text + "\n"):
            node = parsed[1]
        else:
            try:
                node = yaml.compose(text, Loader=_LOADER)
            except yaml.YAMLError:
                return found
        stack: list[tuple[Any, tuple[str | int, ...]]] = [(node, ())]
        while stack:
            node, path = stack.pop()
            if isinstance(node, yaml.MappingNode):
                pairs = [((*path, str(k.value)), k, v) for k, v in node.value]
            elif isinstance(node, yaml.SequenceNode):
                pairs = [((*path, i), v, v) for i, v in enumerate(node.value)]
            else:
                continue
            for sub, mark_node, value in pairs:
                found.setdefault(sub, mark_node.start_mark.line + 2)
                stack.append((value, sub))
        return found

    def line(self, *path: str | int) -> int | None:
        for end in range(len(path), 0, -1):
            found = self._lines.get(path[:end])
            if found is not None:
                return found
        return None


@dataclass
class Linter:
    """The packet being linted: what the manifest said, and the findings so far."""

    root: Path
    strict: bool
    clauses: tuple[str, ...]
    repos: list[str] | None = None
    """The manifest's repo names; ``None`` when unknown (repo checks are skipped)."""
    default_repo: str | None = None
    """The manifest's default repo (``default: true``, or the only repo)."""
    repo_paths: dict[str, Path] = field(default_factory=dict)
    """Repo name -> resolved path (``packet`` included), for repos sharing a work tree."""
    git_committer: bool = True
    """The manifest leaves the runner's git committer on (``committer`` not ``noop``)."""
    agent_owned: bool = False
    prompt_dir: str = "prompts"
    """The manifest's ``prompt_dir`` (relative to the packet), default ``prompts``."""
    findings: list[Finding] = field(default_factory=list)

    def rel(self, file: Path) -> str:
        """``file`` as findings name it: relative to the packet (``prompts/01_x.prompt.md``)."""
        return relative_file(file, self.root)


@dataclass
class LintFile:
    """One file being linted: where findings go and how to place them."""

    lint: Linter
    path: str
    lines: KeyLines
    prompt_id: str | None = None
    body_offset: int = 0
    """Lines before the body (the front matter and its fences)."""

    def add(self, kind: str, *at: str | int, line: int | None = None, **fields: Any) -> None:
        """Add finding ``kind`` (its message filled from ``fields``) on the line of key ``at``."""
        severity = ERROR if kind in ERROR_KINDS or self.lint.strict else WARNING
        message = MESSAGES[kind].format(**fields)
        where = line if line is not None else (self.lines.line(*at) if at else None)
        self.lint.findings.append(
            Finding(kind, severity, message, self.prompt_id, self.path, where)
        )


@dataclass
class FileReads:
    """What lint read of a directory's files, by name: each file's bytes, and the
    front matter and body of each that split (for the parsed-packet cache)."""

    data: dict[str, bytes] = field(default_factory=dict)
    parsed: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)


def open_file(
    lint: Linter,
    file: Path,
    rel: str,
    kind: str,
    reads: FileReads | None = None,
    *,
    prompt: bool = False,
) -> tuple[LintFile, dict[str, Any] | None, str]:
    """Read and split ``file``; a failure is reported as ``kind`` and yields ``None``.

    ``reads``: given, it receives what was read and split, under the file's name.
    ``prompt``: a prompt file, whose ``id`` and ``depends_on`` are also read as
    written (:func:`~prompt_runner.packet.frontmatter.check_written_ids`).
    """
    try:
        if prompt and file.is_dir():
            raise directory_prompt_error(rel)  # what `run` and `plan` say
        data = read_bytes(file, display=rel)
        if reads is not None:
            reads.data[file.name] = data
        text = decode_text(data, display=rel)
        raw, body, parsed = split_front_matter_node(text, file=rel)
        if prompt:
            check_written_ids(parsed, file=rel)
    except UserError as exc:
        handle = LintFile(lint, rel, KeyLines(""))
        handle.add(kind, error=str(exc))
        return handle, None, ""
    if reads is not None:
        reads.parsed[file.name] = (raw, body)
    offset = text[: len(text) - len(body)].count("\n")
    return LintFile(lint, rel, KeyLines(text, parsed), body_offset=offset), raw, body


def validate(handle: LintFile, model: Any, raw: dict[str, Any], kind: str) -> None:
    """Validate ``raw`` as ``model``; an error is finding ``kind`` on its top key."""
    try:
        validate_model(model, raw, file=handle.path)
    except UserError as exc:
        top = re.split(r"[.\[]", exc.key)[0] if exc.key else None
        handle.add(kind, *((top,) if top else ()), error=str(exc))
