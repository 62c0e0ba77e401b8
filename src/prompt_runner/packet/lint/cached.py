"""Lint's prompt findings kept in the parsed-packet cache
(:mod:`prompt_runner.packet.cache`, sections ``lint-prompts`` and
``lint-prompts-strict``).

The prompt step (:func:`~prompt_runner.packet.lint.prompts.lint_prompt` over
every prompt file) is most of ``packet lint``; its findings are a function of
the prompt files' bytes and names and of what the manifest step told the
linter (:func:`linter_state`: the repos and where they resolve, the default
repo, the committer, agent-owned completion, the prompt directory, the clause
list, ``strict``). The manifest step runs afresh every time (one file, and it
looks at the machine: repo paths, profiles), so its state goes into the
digest as it is today; the findings are used again only while that digest is
the one they were kept under. The steps after (ignored files, the whole
packet's plan check, phase order) run every time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import cache
from .context import Linter
from .report import Finding


def _section(lint: Linter) -> str:
    return "lint-prompts-strict" if lint.strict else "lint-prompts"


def linter_state(lint: Linter) -> bytes:
    """What the prompt step reads from the linter besides the files, as bytes."""
    state = {
        "strict": lint.strict,
        "clauses": list(lint.clauses),
        "repos": lint.repos,
        "default_repo": lint.default_repo,
        "repo_paths": {name: str(path) for name, path in lint.repo_paths.items()},
        "git_committer": lint.git_committer,
        "agent_owned": lint.agent_owned,
        "prompt_dir": lint.prompt_dir,
    }
    return json.dumps(state, sort_keys=True).encode()


def _digest(lint: Linter, files: list[Path], data: dict[str, bytes]) -> str:
    directory = lint.root / lint.prompt_dir
    entries = tuple(sorted((f.name, "f") for f in files))
    return cache.inputs_digest(directory, lint.prompt_dir, linter_state(lint), entries, data)


def kept_findings(lint: Linter, files: list[Path]) -> list[Finding] | None:
    """The prompt findings kept for today's ``files`` (all in the prompt directory)
    and linter, or ``None`` (none kept, or kept for other files or another linter)."""
    section = cache.read_section(lint.root, _section(lint))
    if section is None or not isinstance(section.data, list):
        return None
    data = cache.read_prompt_bytes(lint.root / lint.prompt_dir, [f.name for f in files])
    if data is None or _digest(lint, files, data) != section.digest:
        return None
    try:
        return [_finding(item) for item in section.data]
    except (TypeError, ValueError):
        return None


def keep_findings(
    lint: Linter, files: list[Path], data: dict[str, bytes], findings: list[Finding]
) -> None:
    """Keep the prompt step's ``findings`` over ``files``, whose bytes it read are
    ``data`` (by name); nothing when a file was not read whole."""
    if set(data) != {f.name for f in files}:
        return  # a file that could not be read (a finding of its own): parse it each time
    items = [[f.kind, f.severity, f.message, f.prompt_id, f.path, f.line] for f in findings]
    cache.write_section(lint.root, _section(lint), cache.Section(_digest(lint, files, data), items))


def _finding(item: Any) -> Finding:
    kind, severity, message, prompt_id, path, line = item
    for text in (kind, severity, message):
        if not isinstance(text, str):
            raise TypeError("not a finding")
    for optional, kinds in ((prompt_id, str), (path, str), (line, int)):
        if optional is not None and not isinstance(optional, kinds):
            raise TypeError("not a finding")
    return Finding(kind, severity, message, prompt_id, path, line)
