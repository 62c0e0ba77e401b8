"""Runtime readiness of a packet (SPEC 3.1, 9): repos exist and are git repos.

Returns a JSON-safe report; ``run`` refuses to start when ``runtime_ready`` is
false (unless ``--skip-preflight``). Besides the repos' own readiness, a
contract path that reaches into a git submodule of its repo is refused: the
runner commits the superproject's work tree, and work inside a submodule
would stay uncommitted (README "Submodules"). Warnings (a detached HEAD;
with ``check_ignored`` a contract output git ignores) do not stop a run. The
provider CLIs' check is ``run``'s own (``planning.launch_problems``), added to
this report by ``api_packet`` (this layer resolves no plan).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import git, proc
from ..verifier.registry import output_clauses
from .loader import Packet, Prompt, load_packet

_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase or am"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def _operation_in_progress(git_dir: Path) -> str | None:
    """The unfinished git operation in a work tree (merge, rebase...), if any:
    the runner's partial commits would fail in the middle of one."""
    for marker, what in _IN_PROGRESS:
        if (git_dir / marker).exists():
            return what
    return None


def _detached_head(git_dir: Path) -> str | None:
    """The commit a detached ``HEAD`` points at (from ``<git dir>/HEAD``), else ``None``."""
    try:
        text = (git_dir / "HEAD").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return None if text.startswith("ref: ") else text


def submodule_paths(root: Path) -> tuple[str, ...]:
    """The submodule paths (relative to the work-tree root ``root``) its
    ``.gitmodules`` declares; no git process when there is no such file."""
    if not (root / ".gitmodules").is_file():
        return ()
    res = git.run_git(
        root, "config", "-z", "--file", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$"
    )
    found = [item.partition("\n")[2] for item in res.stdout.split("\0")] if res.ok else []
    return tuple(sorted(p.strip("/") for p in found if p.strip("/")))


def _into_submodule(
    packet: Packet, prompt: Prompt, repo: str, prefix: str, submodules: tuple[str, ...]
) -> dict[str, Any] | None:
    """The first output path of ``prompt``'s contract, in ``repo``, that lies in
    one of ``submodules`` (a readiness error), else ``None``. ``prefix``: the
    repo directory relative to its work-tree root (``''`` or ``sub/``)."""
    default = prompt.targets[0] if prompt.targets else None
    for clause, entries in prompt.contract.entries.items():
        if clause == "commands":
            continue  # a command's cwd only runs there; it names no output
        for index, entry in enumerate(entries):
            for ref_repo, path in entry.path_refs():
                if (ref_repo or default) != repo:
                    continue
                full = (prefix + path).strip("/")
                inside = next(
                    (m for m in submodules if full == m or full.startswith(m + "/")), None
                )
                if inside is None:
                    continue
                return {
                    "scope": "prompt",
                    "name": prompt.id,
                    "kind": "contract_in_submodule",
                    "path": path,
                    "file": packet.display(prompt.file),
                    "key": f"verify.{clause}[{index}]",
                    "reason": (
                        f"{path} is inside git submodule {inside!r} of repo {repo!r}; the "
                        "runner commits the superproject, so work inside the submodule "
                        "would stay uncommitted"
                    ),
                    "fix": (
                        f"declare the submodule as a repo of its own in the manifest (path "
                        f"to {inside}) and name it with `repo:` -- its commits then land in "
                        "the submodule, and recording the new pointer in the superproject "
                        "is yours -- or use --no-commit"
                    ),
                }
    return None


def preflight_report(
    packet: Packet | Path | str,
    *,
    needs_git: bool = True,
    needs_identity: bool = False,
    prompts: Collection[str] | None = None,
    check_ignored: bool = False,
) -> dict[str, Any]:
    """Check every declared repo, and the contracts of ``prompts``.

    Args:
        packet: the packet directory, or the loaded packet.
        needs_git: repos must be git work trees (committer ``git`` or git
            clauses); contract paths must not reach into a git submodule.
        needs_identity: git must know who commits (``user.name``/``user.email``),
            checked before any session so a run cannot fail at its first commit.
        prompts: the prompt ids whose contracts are checked (``None`` = all).
        check_ignored: also warn (``output_ignored``) about each output path of
            those contracts that its repo's git ignores (:func:`ignored_outputs`,
            one ``git check-ignore`` a repo); ``packet preflight`` does.

    Returns:
        ``{"schema", "packet", "runtime_ready", "repos": [{name, path, exists,
        git, ready, errors: [{kind}]}], "readiness_errors": [{scope, name, kind,
        path}], "warnings": [{scope, name, kind, path, message}]}``. A
        ``scope: "prompt"`` error (``contract_in_submodule``) also carries
        ``file``, ``key``, ``reason`` and ``fix``.

    Raises:
        UserError: ``packet`` is a path to an invalid packet.
    """
    if not isinstance(packet, Packet):
        packet = load_packet(packet)
    checked = [p for p in packet.prompts if prompts is None or p.id in prompts]
    repos: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    prompt_errors: list[dict[str, Any]] = []
    for name, path in packet.repos.items():
        if name == "packet":
            continue
        check = _check_repo(name, path, needs_git=needs_git, needs_identity=needs_identity)
        warnings.extend(check.warnings)
        if needs_git and check.root_dir is not None:
            prompt_errors.extend(_submodule_errors(packet, checked, name, path, check.root_dir))
        repos.append(check.entry)
        for err in check.entry["errors"]:
            errors.append({"scope": "repo", "name": name, "kind": err["kind"], "path": str(path)})
    errors.extend(prompt_errors)
    if needs_git and check_ignored:
        warnings.extend(_ignored_warnings(packet, ignored_outputs(packet, checked)))
    return {
        "schema": "prompt_runner.preflight/v1",
        "packet": packet.name,
        "root": str(packet.root),
        "runtime_ready": not errors,
        "repos": repos,
        "readiness_errors": errors,
        "warnings": warnings,
    }


NOT_OUTPUTS = frozenset({"files_absent", "changed_paths_only"})
"""Clauses whose paths the committer may commit but that name no file the prompt
makes: a path that must be gone, the bounds of what may change."""


@dataclass(frozen=True)
class IgnoredOutput:
    """A path a prompt's contract names as an output that its repo's git ignores."""

    prompt: Prompt
    clause: str
    index: int
    repo: str
    path: str
    source: str
    """Where the pattern is and what it says: ``.gitignore:1: out.txt``."""


def ignored_outputs(packet: Packet, prompts: Collection[Prompt]) -> list[IgnoredOutput]:
    """Every output path of ``prompts``' contracts (the clauses that name outputs,
    as the committer reads them) that its repo's git ignores: ``git check-ignore``,
    one call per repo with every path on stdin. The runner commits only what git
    does not ignore, so such a prompt completes with nothing committed. A tracked
    file is never reported (git commits its changes); a repo git cannot read is
    skipped (preflight reports it)."""
    outputs = output_clauses() - NOT_OUTPUTS
    wanted: dict[str, list[tuple[Prompt, str, int, str]]] = {}
    for prompt in prompts:
        default = prompt.targets[0] if prompt.targets else None
        for clause, entries in prompt.contract.entries.items():
            if clause not in outputs:
                continue
            for index, entry in enumerate(entries):
                for ref_repo, path in entry.path_refs():
                    repo = ref_repo or default
                    clean = path.strip("/")
                    if repo in packet.repos and repo != "packet" and clean not in ("", "."):
                        wanted.setdefault(repo, []).append((prompt, clause, index, clean))
    found: list[IgnoredOutput] = []
    for repo, refs in wanted.items():
        ignored = _check_ignore(packet.repos[repo], sorted({ref[3] for ref in refs}))
        for prompt, clause, index, path in refs:
            if path in ignored:
                found.append(IgnoredOutput(prompt, clause, index, repo, path, ignored[path]))
    return found


def _check_ignore(repo_dir: Path, paths: list[str]) -> dict[str, str]:
    """``path -> "source:line: pattern"`` for each of ``paths`` (relative to
    ``repo_dir``) that git ignores there."""
    if not paths or not repo_dir.is_dir():
        return {}
    res = proc.run(
        ["git", "check-ignore", "--stdin", "-z", "-v"],
        cwd=repo_dir,
        env=git.without_pathspec_env(git.git_env()),  # check-ignore refuses :(literal)
        timeout_ms=git.DEFAULT_GIT_TIMEOUT_MS,
        stdin_text="\0".join(paths) + "\0",
    )
    if res.returncode not in (0, 1):  # 1: none ignored; 128: not a repo, a path outside it
        return {}
    fields = res.stdout.split("\0")
    out: dict[str, str] = {}
    for at in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[at : at + 4]
        if pattern.startswith("!"):
            continue  # a negated pattern matched: the path is not ignored
        out[path] = f"{source}:{line}: {pattern}"
    return out


def _ignored_warnings(packet: Packet, found: list[IgnoredOutput]) -> list[dict[str, Any]]:
    return [
        {
            "scope": "prompt",
            "name": item.prompt.id,
            "kind": "output_ignored",
            "path": item.path,
            "repo": item.repo,
            "file": packet.display(item.prompt.file),
            "key": f"verify.{item.clause}[{item.index}]",
            "message": ignored_message(item),
        }
        for item in found
    ]


def ignored_message(item: IgnoredOutput) -> str:
    """What an ignored output means and the fix, as one sentence's tail."""
    return (
        f"prompt {item.prompt.id}: verify.{item.clause}[{item.index}] names {item.path}, which "
        f"repo {item.repo!r} ignores ({item.source}): the runner never commits it, so the "
        "prompt completes with its output uncommitted; remove the pattern from the ignore "
        "file (or add a `!` exception), or name a path git tracks"
    )


@dataclass
class _RepoCheck:
    """One repo's readiness: its report entry, its warnings, its work-tree root."""

    entry: dict[str, Any]
    warnings: list[dict[str, Any]] = field(default_factory=list)
    root_dir: Path | None = None


def _check_repo(name: str, path: Path, *, needs_git: bool, needs_identity: bool) -> _RepoCheck:
    """Whether repo ``name`` at ``path`` is ready (see :func:`preflight_report`)."""
    exists = path.is_dir()
    is_git = exists and git.is_git_repo(path)
    root_dir = git_dir = None
    if is_git:
        where = git.run_git(path, "rev-parse", "--show-toplevel", "--absolute-git-dir")
        lines = where.stdout.splitlines()
        if where.ok and len(lines) == 2:
            root_dir, git_dir = Path(lines[0]), Path(lines[1])
    entry_errors: list[dict[str, str]] = []
    if not exists:
        # A file where the repo's directory should be is not a missing path.
        entry_errors.append({"kind": "not_a_directory" if path.exists() else "path_not_found"})
    elif needs_git and not is_git:
        entry_errors.append({"kind": "not_git_repo"})
    elif needs_identity and not git.run_git(path, "var", "GIT_COMMITTER_IDENT").ok:
        entry_errors.append({"kind": "no_git_identity"})
    elif (
        needs_identity
        and git_dir is not None
        and (busy := _operation_in_progress(git_dir)) is not None
    ):
        entry_errors.append({"kind": "git_operation_in_progress", "operation": busy})
    entry = {
        "name": name,
        "path": str(path),
        "exists": exists,
        "git": is_git,
        "ready": not entry_errors,
        "errors": entry_errors,
    }
    check = _RepoCheck(entry, root_dir=root_dir)
    if git_dir is not None and (sha := _detached_head(git_dir)) is not None:
        check.warnings.append(
            {
                "scope": "repo",
                "name": name,
                "kind": "detached_head",
                "path": str(path),
                "message": (
                    f"repo {name!r} ({path}) is on a detached HEAD ({sha[:12]}): its "
                    "prompts' commits land on no branch; check out a branch first if "
                    "the work should land on one"
                ),
            }
        )
    return check


def _submodule_errors(
    packet: Packet, checked: list[Prompt], name: str, path: Path, root_dir: Path
) -> list[dict[str, Any]]:
    """A ``contract_in_submodule`` error for each prompt of ``checked`` whose
    contract names an output inside a submodule of repo ``name``."""
    subs = submodule_paths(root_dir)
    if not subs:
        return []
    prefix = path.resolve().relative_to(root_dir.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    found = [_into_submodule(packet, prompt, name, prefix, subs) for prompt in checked]
    return [refused for refused in found if refused is not None]
