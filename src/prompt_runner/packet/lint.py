"""``packet lint``: constructs that load and run, but wrongly (SPEC 9).

Lint is static and lenient: it reads every file itself, keeps going past a bad
file, and reports each hazard as a :class:`Finding` whose message says what
the construct silently does, then the fix (:data:`MESSAGES`). Errors mean the
packet says something other than what will happen; warnings are usually wrong
and occasionally deliberate; ``strict`` promotes every warning to an error
(the CI gate). The clause list comes from the verifier's registry
(:func:`prompt_runner.verifier.contract_keys`), so lint and the verifier
cannot drift.

A packet with no error findings is also loaded with
:func:`~prompt_runner.packet.loader.load_packet`; whatever still stops it (a
``depends_on`` cycle, a symlink escape ...) becomes ``packet_load_error``, so
``pass`` implies the packet loads.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from .frontmatter import read_text, split_front_matter
from .lint_messages import ERROR, ERROR_KINDS, MESSAGES, WARNING, WARNING_KINDS
from .loader import CHECKLIST_SUFFIX, MANIFEST_NAME, PROMPT_SUFFIX, find_packet_root
from .models import INERT_PROMPT_KEYS, Manifest, PromptFrontMatter
from .validation import validate_model

__all__ = [
    "ERROR",
    "ERROR_KINDS",
    "MESSAGES",
    "WARNING",
    "WARNING_KINDS",
    "Finding",
    "LintReport",
    "lint_packet",
]

CONTENT_CLAUSES = frozenset({"contains", "matches", "doc", "yaml", "json"})
"""Clauses an empty file cannot satisfy (they assert content)."""

WEAK_EVIDENCE = frozenset({"changed_paths_only", "repos_clean"})
"""Structural clauses that say nothing specific about one prompt's work."""

PLACEHOLDER_MARKER = re.compile(r"<!--\s*prompt_runner:placeholder\s+([^\s>]+)\s*-->")
_GNU_TIMEOUT = re.compile(r"^\s*(?:exec\s+)?timeout\s+(?:-\S+\s+)*\d+(?:\.\d+)?[smhd]?\s+\S")
_PREFIX = re.compile(r"^(\d+)")


@dataclass(frozen=True)
class Finding:
    """One lint finding.

    Attributes:
        kind: a key of :data:`MESSAGES`.
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


class KeyLines:
    """1-based line numbers of the keys in a file's YAML front matter.

    ``line("verify", "commands", 0)`` is the line of that entry; a path that is
    not found falls back to its longest found prefix, then ``None``.
    """

    def __init__(self, text: str) -> None:
        import yaml

        self._lines: dict[tuple[str | int, ...], int] = {}
        lines = text.lstrip("\ufeff").splitlines()
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
        if not end or lines[0].strip() != "---":
            return
        try:
            node = yaml.compose("\n".join(lines[1:end]), Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            return
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
                self._lines.setdefault(sub, mark_node.start_mark.line + 2)
                stack.append((value, sub))

    def line(self, *path: str | int) -> int | None:
        for end in range(len(path), 0, -1):
            found = self._lines.get(path[:end])
            if found is not None:
                return found
        return None


@dataclass
class _Linter:
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


@dataclass
class _File:
    """One file being linted: where findings go and how to place them."""

    lint: _Linter
    path: str
    lines: KeyLines
    prompt_id: str | None = None
    body_offset: int = 0
    """Lines before the body (the front matter and its fences)."""

    def add(self, kind: str, *at: str | int, line: int | None = None, **fields: Any) -> None:
        severity = ERROR if kind in ERROR_KINDS or self.lint.strict else WARNING
        message = MESSAGES[kind].format(**fields)
        where = line if line is not None else (self.lines.line(*at) if at else None)
        self.lint.findings.append(
            Finding(kind, severity, message, self.prompt_id, self.path, where)
        )


def lint_packet(path: Path | str, *, strict: bool = False) -> LintReport:
    """Lint the packet at ``path``.

    Args:
        path: the packet directory (or its manifest file).
        strict: promote every warning to an error.

    Returns:
        The :class:`LintReport`; files that fail to parse become findings.

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    from ..verifier import contract_keys

    root = find_packet_root(path)
    lint = _Linter(root, strict, contract_keys())
    manifest = _lint_manifest(lint)
    seen: dict[str, str] = {}
    for file in _prompt_files(root / lint.prompt_dir):
        _lint_prompt(lint, file, seen)
    from .loader import ignored_markdown

    for stray in ignored_markdown(root / lint.prompt_dir):
        _File(lint, _rel(lint, stray), KeyLines("")).add("ignored_prompt_file")
    if not any(f.kind in ERROR_KINDS for f in lint.findings):
        # Resolve the full plan, as `run` does: merged recovery, profiles and
        # provider options must be valid too, so a passing lint means it runs.
        from ..api import plan as resolve_plan

        try:
            resolved = resolve_plan(root)
        except UserError as exc:
            where = exc.file or MANIFEST_NAME
            rel = where[len(root.name) + 1 :] if where.startswith(f"{root.name}/") else where
            _File(lint, rel, KeyLines("")).add("packet_load_error", error=str(exc))
        else:
            _lint_phase_order(lint, resolved.packet)
    name = manifest.get("name")
    return LintReport(
        packet=name if isinstance(name, str) and name else root.name,
        root=root,
        strict=strict,
        findings=tuple(lint.findings),
        no_commit=not lint.git_committer,
    )


def _lint_phase_order(lint: _Linter, packet: Any) -> None:
    """``depends_on_later_phase``: a dependency that pulls a later phase's prompt ahead."""
    from ..runner.selection import later_phase_dependencies

    for prompt, dep in later_phase_dependencies(packet):
        handle = _File(lint, _rel(lint, prompt.file), KeyLines(read_text(prompt.file)))
        handle.prompt_id = prompt.id
        index = list(prompt.front.depends_on).index(dep.id)
        handle.add(
            "depends_on_later_phase",
            "depends_on",
            index,
            id=prompt.id,
            phase=prompt.phase,
            dep=dep.id,
            dep_phase=dep.phase,
        )


def _rel(lint: _Linter, file: Path) -> str:
    """``file`` as findings name it: relative to the packet (``prompts/01_x.prompt.md``)."""
    from .loader import relative_file

    return relative_file(file, lint.root)


def _prompt_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    files = [
        f for f in directory.glob(f"*{PROMPT_SUFFIX}") if not f.name.endswith(CHECKLIST_SUFFIX)
    ]

    def order(f: Path) -> tuple[bool, int, str]:
        m = _PREFIX.match(f.name)
        return (m is None, int(m.group(1)) if m else 0, f.name)

    return sorted(files, key=order)


def _open(
    lint: _Linter, file: Path, rel: str, kind: str
) -> tuple[_File, dict[str, Any] | None, str]:
    """Read and split ``file``; a failure is reported as ``kind`` and yields ``None``."""
    try:
        text = read_text(file, display=rel)
        raw, body = split_front_matter(text, file=rel)
    except UserError as exc:
        handle = _File(lint, rel, KeyLines(""))
        handle.add(kind, error=str(exc))
        return handle, None, ""
    offset = text[: len(text) - len(body)].count("\n")
    return _File(lint, rel, KeyLines(text), body_offset=offset), raw, body


def _validate(handle: _File, model: Any, raw: dict[str, Any], kind: str) -> None:
    try:
        validate_model(model, raw, file=handle.path)
    except UserError as exc:
        top = re.split(r"[.\[]", exc.key)[0] if exc.key else None
        handle.add(kind, *((top,) if top else ()), error=str(exc))


def _lint_manifest(lint: _Linter) -> dict[str, Any]:
    handle, raw, _ = _open(lint, lint.root / MANIFEST_NAME, MANIFEST_NAME, "invalid_manifest")
    if raw is None:
        return {}
    bad_execution = _lint_execution(handle, raw.get("execution"))
    _validate(
        handle,
        Manifest,
        {k: v for k, v in raw.items() if not (bad_execution and k == "execution")},
        "invalid_manifest",
    )
    repos = raw.get("repos")
    lint.repos = [str(k) for k in repos] if isinstance(repos, dict) else None
    if repos is None:
        lint.repos = []
    _note_repos(lint, repos)
    lint.git_committer = raw.get("committer") != "noop"
    _lint_profile(handle, raw.get("profile"))
    prompt_dir = raw.get("prompt_dir")
    if isinstance(prompt_dir, str) and prompt_dir.strip():
        parts = Path(prompt_dir).parts
        if not Path(prompt_dir).is_absolute() and ".." not in parts:
            lint.prompt_dir = prompt_dir  # an escaping one is an invalid_manifest finding
    execution = raw.get("execution")
    lint.agent_owned = isinstance(execution, dict) and execution.get("completion") == "agent_owned"
    control = raw.get("agent_control")
    if isinstance(control, dict) and isinstance(control.get("completion_verify"), dict):
        _lint_contract(handle, control["completion_verify"], ("agent_control", "completion_verify"))
    return raw


def _lint_profile(handle: _File, name: Any) -> None:
    """``profile_not_found`` for a manifest ``profile`` that exists nowhere on this machine."""
    from .profiles import BUILTIN_PROFILES, profile_path

    if not isinstance(name, str) or not name.strip() or name in BUILTIN_PROFILES:
        return
    try:
        exists = profile_path(name).is_file()
    except (OSError, ValueError):
        return
    if not exists:
        handle.add("profile_not_found", "profile", name=name)


def _note_repos(lint: _Linter, repos: Any) -> None:
    """The default repo and each repo's resolved path, as the loader resolves them."""
    lint.repo_paths = {"packet": lint.root.resolve()}
    if not isinstance(repos, dict):
        return
    for name, spec in repos.items():
        if not isinstance(spec, dict):
            continue
        if spec.get("default") is True:
            lint.default_repo = str(name)
        if isinstance(spec.get("path"), str):
            path = Path(spec["path"]).expanduser()
            path = path if path.is_absolute() else lint.root / path
            lint.repo_paths[str(name)] = path.resolve()
    if lint.default_repo is None and len(repos) == 1:
        lint.default_repo = str(next(iter(repos)))


def _lint_execution(handle: _File, execution: Any) -> bool:
    """Report an invalid ``execution`` block; True when one was reported."""
    if execution is None:
        return False
    problem = None
    if not isinstance(execution, dict):
        problem = "`execution` must be a mapping"
    else:
        completion = execution.get("completion", "verifier_owned")
        incomplete = execution.get("incomplete")
        extra = sorted(str(k) for k in set(execution) - {"completion", "incomplete"})
        if extra:
            problem = f"`execution` has unknown key(s) {', '.join(extra)}"
        elif completion not in ("verifier_owned", "agent_owned"):
            problem = f"`execution.completion: {completion}` is not a completion mode"
        elif incomplete not in (None, "fail", "repeat"):
            problem = f"`execution.incomplete: {incomplete}` is not an incomplete policy"
        elif completion == "agent_owned" and incomplete != "repeat":
            problem = "agent-owned completion without `incomplete: repeat` never asks again"
        elif completion == "verifier_owned" and incomplete == "repeat":
            problem = "`incomplete: repeat` only applies to agent-owned completion"
    if problem is not None:
        handle.add("invalid_execution_policy", "execution", problem=problem)
    return problem is not None


def _prompt_id(raw: dict[str, Any]) -> str | None:
    value = raw.get("id")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return f"{value:02d}"
    return str(value).strip() or None


def _lint_prompt(lint: _Linter, file: Path, seen: dict[str, str]) -> None:
    rel = _rel(lint, file)
    handle, raw, body = _open(lint, file, rel, "invalid_prompt")
    pid = handle.prompt_id = _prompt_id(raw or {})
    prefix = _PREFIX.match(file.name)
    if prefix is None:
        handle.add("prompt_filename_without_prefix", name=file.name)
    if raw is None:
        return
    _validate(handle, PromptFrontMatter, raw, "invalid_prompt")
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
    markers = list(PLACEHOLDER_MARKER.finditer(body))
    if markers:
        line = handle.body_offset + body[: markers[0].start()].count("\n") + 1
        names = ", ".join(m.group(1) for m in markers)
        handle.add("placeholder_marker", line=line, markers=names)
    _lint_contract(handle, raw.get("verify"), ("verify",), prompt=True, targets=_targets(lint, raw))


def _targets(lint: _Linter, raw: dict[str, Any]) -> tuple[str, ...]:
    """The prompt's target repos as the loader resolves them (default: the default repo)."""
    targets = raw.get("targets")
    items = [targets] if isinstance(targets, str) else targets
    if isinstance(items, list) and items:
        return tuple(str(t) for t in items if isinstance(t, str))
    return (lint.default_repo,) if lint.default_repo else ()


def _lint_targets(handle: _File, targets: Any) -> None:
    items = [targets] if isinstance(targets, str) else targets
    if not isinstance(items, list):
        return  # absent, or a shape the model validation already reported
    repos = handle.lint.repos
    if repos is None:
        return
    known = ", ".join([*repos, "packet"])
    for index, target in enumerate(items):
        if not isinstance(target, str):
            continue
        if target.startswith("@"):
            handle.add("repo_group_in_targets", "targets", index, target=target, known=known)
        elif target not in repos and target != "packet":
            handle.add("unknown_target_repo", "targets", index, target=target, known=known)


def _lint_contract(
    handle: _File,
    verify: Any,
    key: tuple[str, ...],
    *,
    prompt: bool = False,
    targets: tuple[str, ...] = (),
) -> None:
    """Clause names, entry shapes, repo names, commands and contract strength.

    ``targets``: the prompt's resolved target repos (the repos its commit goes to).
    """
    from ..verifier import Contract, parse_contract

    dotted = ".".join(key)
    known = handle.lint.clauses
    if verify is not None and not isinstance(verify, dict):
        fix = f"write a mapping of clauses from: {', '.join(known)}"
        handle.add("invalid_contract", *key, error=f"{handle.path}: {dotted}: {fix}.")
        return
    troubled = False
    entries: dict[str, Any] = {}
    for name, value in (verify or {}).items():
        if name not in known:
            troubled = True
            close = difflib.get_close_matches(str(name), known, n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            handle.add(
                "unknown_verify_clause",
                *key,
                str(name),
                key=f"{dotted}.{name}",
                hint=hint,
                known=", ".join(known),
            )
            continue
        try:
            entries.update(parse_contract({name: value}, file=handle.path, key=dotted).entries)
        except UserError as exc:
            troubled = True
            handle.add("invalid_contract", *key, str(name), error=str(exc))
    contract = Contract(entries)

    repos = sorted({*(handle.lint.repos or ()), "packet"})
    for clause, clause_entries in contract.entries.items():
        if handle.lint.repos is None:
            break
        for index, entry in enumerate(clause_entries):
            for repo in entry.repo_refs():
                if repo not in repos:
                    handle.add(
                        "unknown_verify_repo",
                        *key,
                        clause,
                        index,
                        key=f"{dotted}.{clause}[{index}]",
                        repo=repo,
                        clause=clause,
                        known=", ".join(repos),
                    )
    _lint_commands(handle, contract, key)
    _lint_regexes(handle, contract, key)
    if not prompt:
        return
    present = set(contract.clauses())
    if not present and not troubled:
        handle.add("prompt_without_verify", *key)
    uncommitted = _repos_clean_before_commit(handle, contract, targets)
    # One warning per weak contract: when changed_paths_only or a repos_clean
    # that cannot pass is present, its own, more specific warning is the one
    # reported, so the reference packets lint with exactly that warning (issue 7).
    if (
        present
        and "commands" not in present
        and not present & CONTENT_CLAUSES
        and "changed_paths_only" not in present
        and uncommitted is None
    ):
        handle.add("contract_without_commands", *key, clauses=", ".join(sorted(present)))
    if "changed_paths_only" in present:
        handle.add("changed_paths_only_vacuous", *key, "changed_paths_only")
    if uncommitted is not None:
        index, names = uncommitted
        repos_text = ", ".join(f"`{name}`" for name in names)
        handle.add("repos_clean_before_commit", *key, "repos_clean", index, repos=repos_text)
    if handle.lint.agent_owned:
        from ..verifier import STRUCTURAL_CLAUSES

        if "commands" in present:
            handle.add("agent_owned_verify_commands", *key, "commands")
        if not (present & STRUCTURAL_CLAUSES) - WEAK_EVIDENCE:
            handle.add("agent_owned_structural_evidence_required", *key)


def _repos_clean_before_commit(
    handle: _File, contract: Any, targets: tuple[str, ...]
) -> tuple[int, list[str]] | None:
    """``repos_clean`` entries on repos the runner's git committer commits to.

    The git committer commits the prompt's target repos only after its
    contract passed, so ``repos_clean`` on one of them sees this prompt's own
    uncommitted work. A repo that shares a target's work tree counts too.

    Returns:
        ``(index of the first such entry, repo names)``, or ``None`` when the
        manifest sets ``committer: noop`` or no entry names a target.
    """
    lint = handle.lint
    if not lint.git_committer or not targets:
        return None
    paths = lint.repo_paths
    committed = {paths[t] for t in targets if t in paths}
    first: int | None = None
    names: list[str] = []
    for index, entry in enumerate(contract.entries.get("repos_clean", ())):
        repo = entry.repo if entry.repo is not None else targets[0]
        if repo in targets or (repo in paths and paths[repo] in committed):
            first = index if first is None else first
            if repo not in names:
                names.append(repo)
    return (first, names) if first is not None else None


def _lint_regexes(handle: _File, contract: Any, key: tuple[str, ...]) -> None:
    """``regex_nested_quantifier`` for each regex of ``matches``, ``stdout_matches``
    and ``source_absent`` shaped like ``(a+)+`` (verifier/regexes.py)."""
    from ..verifier.clauses.commands import CommandEntry
    from ..verifier.clauses.files import PatternEntry
    from ..verifier.clauses.source import SourceEntry
    from ..verifier.regexes import nested_quantifier

    dotted = ".".join(key)
    for clause, entries in contract.entries.items():
        for index, entry in enumerate(entries):
            found: list[tuple[str, str]] = []  # (key suffix, pattern)
            if isinstance(entry, PatternEntry):
                found.append(("pattern", entry.pattern))
            elif isinstance(entry, CommandEntry):
                found += [(f"stdout_matches[{i}]", p) for i, p in enumerate(entry.stdout_matches)]
            elif isinstance(entry, SourceEntry):
                found += [(f"patterns[{i}]", p) for i, p in enumerate(entry.patterns)]
            for suffix, pattern in found:
                if nested_quantifier(pattern):
                    handle.add(
                        "regex_nested_quantifier",
                        *key,
                        clause,
                        index,
                        key=f"{dotted}.{clause}[{index}].{suffix}",
                        pattern=pattern,
                    )


def _lint_commands(handle: _File, contract: Any, key: tuple[str, ...]) -> None:
    from ..verifier.clauses.commands import DEFAULT_TIMEOUT_MS, CommandEntry

    for index, entry in enumerate(contract.entries.get("commands", ())):
        if not isinstance(entry, CommandEntry):
            continue
        at: tuple[str | int, ...] = (*key, "commands", index)
        label = f"{'.'.join(key)}.commands[{index}]"
        if entry.legacy:
            handle.add("legacy_shell_command", *at, key=label, command=entry.display())
        wrapped = entry.legacy and _GNU_TIMEOUT.match(entry.shell or "") is not None
        if entry.timeout_ms is None and not wrapped:
            handle.add(
                "verify_command_without_timeout",
                *at,
                key=label,
                command=entry.display(),
                default=DEFAULT_TIMEOUT_MS,
            )
