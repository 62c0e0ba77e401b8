"""Linting one prompt file: its file name and id, front matter, targets,
placeholder markers and ``verify`` contract."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..files import Listing, prompt_names
from ..models import INERT_PROMPT_KEYS, PromptFrontMatter
from .context import PLACEHOLDER_MARKER, FileReads, Linter, LintFile, open_file, validate
from .contract import lint_contract

_PREFIX = re.compile(r"^(\d+)")


def prompt_files(directory: Path, entries: Listing) -> list[Path]:
    """The prompt files of ``directory`` in run order (numeric prefix, then name),
    from ``entries`` (its :func:`~prompt_runner.packet.files.entries_of`): the
    files the loader loads (:func:`~prompt_runner.packet.files.prompt_names`,
    hidden ones left out)."""
    files = [directory / name for name, _ in prompt_names(entries)]

    def order(f: Path) -> tuple[bool, int, str]:
        m = _PREFIX.match(f.name)
        return (m is None, int(m.group(1)) if m else 0, f.name)

    return sorted(files, key=order)


def _prompt_id(raw: dict[str, Any]) -> str | None:
    value = raw.get("id")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return f"{value:02d}"
    return str(value).strip() or None


def lint_prompt(
    lint: Linter, file: Path, seen: dict[str, str], reads: FileReads | None = None
) -> None:
    """Lint prompt ``file``; ``seen`` maps each id met so far to its file; ``reads``
    (given) receives what was read and split, under the file's name."""
    rel = lint.rel(file)
    handle, raw, body = open_file(lint, file, rel, "invalid_prompt", reads, prompt=True)
    pid = handle.prompt_id = _prompt_id(raw or {})
    prefix = _PREFIX.match(file.name)
    if prefix is None:
        handle.add("prompt_filename_without_prefix", name=file.name)
    if raw is None:
        return
    validate(handle, PromptFrontMatter, raw, "invalid_prompt")
    if prefix is not None and pid is not None and pid != prefix.group(1):
        handle.add("prompt_id_filename_mismatch", "id", id=pid, prefix=prefix.group(1))
    if pid is not None:
        if pid in seen:
            handle.add("duplicate_prompt_id", "id", id=pid, other=seen[pid], path=rel)
        seen.setdefault(pid, rel)
    _lint_targets(handle, raw.get("targets"))
    for key in INERT_PROMPT_KEYS:
        if key in raw:
            handle.add("inert_front_matter_key", key, key=key)
    if not body.strip():
        handle.add("empty_prompt_body")
    markers = list(PLACEHOLDER_MARKER.finditer(body))
    if markers:
        line = handle.body_offset + body[: markers[0].start()].count("\n") + 1
        names = ", ".join(m.group(1) for m in markers)
        handle.add("placeholder_marker", line=line, markers=names)
    lint_contract(handle, raw.get("verify"), ("verify",), prompt=True, targets=_targets(lint, raw))


def _targets(lint: Linter, raw: dict[str, Any]) -> tuple[str, ...]:
    """The prompt's target repos as the loader resolves them (default: the default repo)."""
    targets = raw.get("targets")
    items = [targets] if isinstance(targets, str) else targets
    if isinstance(items, list) and items:
        return tuple(str(t) for t in items if isinstance(t, str))
    return (lint.default_repo,) if lint.default_repo else ()


def _lint_targets(handle: LintFile, targets: Any) -> None:
    items = [targets] if isinstance(targets, str) else targets
    if not isinstance(items, list):
        return  # absent, or a shape the model validation already reported
    repos = handle.lint.repos
    if repos is None:
        return
    known = ", ".join(dict.fromkeys([*repos, "packet"]))  # a repo may be named packet
    for index, target in enumerate(items):
        if not isinstance(target, str):
            continue
        if target.startswith("@"):
            handle.add("repo_group_in_targets", "targets", index, target=target, known=known)
        elif target not in repos and target != "packet":
            handle.add("unknown_target_repo", "targets", index, target=target, known=known)
