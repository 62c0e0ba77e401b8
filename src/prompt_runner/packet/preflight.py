"""Runtime readiness of a packet (SPEC 3.1, 9): repos exist and are git repos.

Returns a JSON-safe report; ``run`` refuses to start when ``runtime_ready`` is
false (unless ``--skip-preflight``), with :func:`not_ready_error`'s sentence.
The defaults check what a default ``run`` (committer ``git``) checks, so
``packet preflight``, ``packet doctor`` and ``run`` agree: a work tree git can
use (where git sees none, the error's ``cause`` and ``fix`` follow git's own
refusal: no repository, dubious ownership, a linked worktree whose main
repository is gone), an identity to commit with, commits git can sign when
``commit.gpgsign`` is on, no unfinished merge or rebase, no held
``index.lock``. A repo path that is
a git directory or inside one (``.git``, a bare repository) is refused
outright, whatever the flags (:func:`refuse_git_dir`): the agent's writes
would land in git's own data.

Besides the repos' own readiness, a contract path that reaches into a git
submodule of its repo is refused: the runner commits the superproject's work
tree, and work inside a submodule would stay uncommitted (README
"Submodules"). Warnings (a detached HEAD; with ``check_ignored`` a contract
output git ignores) do not stop a run. The provider CLIs' check is ``run``'s
own (``planning.launch_problems``), added to this report by ``api_packet``
(this layer resolves no plan).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import git, proc
from ..commit_errors import lock_holders, still_running
from ..errors import UserError
from ..verifier.contract import PACKET_REPO
from ..verifier.registry import output_clauses
from .loader import Packet, Prompt, load_packet

_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge", "`git merge --continue` or `git merge --abort`"),
    ("rebase-merge", "a rebase", "`git rebase --continue` or `git rebase --abort`"),
    (
        "rebase-apply",
        "a rebase or am",
        "`git rebase --continue`/`git rebase --abort` (or `git am --continue`/`git am --abort`)",
    ),
    (
        "CHERRY_PICK_HEAD",
        "a cherry-pick",
        "`git cherry-pick --continue` or `git cherry-pick --abort`",
    ),
    ("REVERT_HEAD", "a revert", "`git revert --continue` or `git revert --abort`"),
)


def _operation_in_progress(git_dir: Path) -> tuple[str, str] | None:
    """The unfinished git operation in a work tree (merge, rebase...), if any, as
    ``(what, its own commands to finish or abort it)``: the runner's partial
    commits would fail in the middle of one."""
    for marker, what, commands in _IN_PROGRESS:
        if (git_dir / marker).exists():
            return what, commands
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
    needs_identity: bool | None = None,
    prompts: Collection[str] | None = None,
    check_ignored: bool = False,
) -> dict[str, Any]:
    """Check every declared repo, and the contracts of ``prompts``.

    The defaults check what ``run`` checks with its default committer (``git``):
    ``packet preflight``, ``packet doctor`` and ``run`` agree on one check.

    Args:
        packet: the packet directory, or the loaded packet.
        needs_git: repos must be git work trees (committer ``git`` or git
            clauses); contract paths must not reach into a git submodule.
        needs_identity: the runner commits there (default: ``needs_git``), so
            git must know who commits (``user.name``/``user.email``) and no
            merge, rebase, cherry-pick or revert may be unfinished, nor the
            index locked (``index.lock``) -- checked
            before any session so a run cannot fail at its first commit.
        prompts: the prompt ids whose contracts are checked (``None`` = all).
        check_ignored: also warn (``output_ignored``) about each output path of
            those contracts that its repo's git ignores (:func:`ignored_outputs`,
            one ``git check-ignore`` a repo); ``packet preflight`` does.
            Whenever the runner commits (``needs_identity``), each output path
            in a repo its prompt does not target is warned about too
            (``output_not_targeted``, :func:`untargeted_outputs`).

    Returns:
        ``{"schema", "packet", "runtime_ready", "repos": [{name, path, exists,
        git, ready, errors: [{kind, reason, fix}]}], "readiness_errors": [{scope,
        name, kind, path, file, key, reason, fix}], "warnings": [{scope, name,
        kind, path, message}]}``. ``reason`` is what the repo is (a clause after
        its name and path), ``fix`` what to do; ``file``/``key`` where it is
        declared (a ``scope: "prompt"`` error, ``contract_in_submodule``: the
        prompt file and its clause). Repo kinds: ``path_not_found``,
        ``not_a_directory``, ``not_git_repo``, ``no_git_identity``,
        ``cannot_sign`` (``commit.gpgsign`` on, signing fails),
        ``git_operation_in_progress`` (its ``operation``; the fix names that
        operation's own ``--continue``/``--abort``), ``index_locked`` (a
        ``<git dir>/index.lock`` exists, its ``lock`` path: another git is
        running or one crashed; every commit would fail on it). A
        ``not_git_repo`` error's ``cause`` says why git sees no work tree
        (``no_repo``, ``dubious_ownership``, ``gitfile_broken``, ``git_refused``).

    Raises:
        UserError: ``packet`` is a path to an invalid packet, or a repo's path
            is a git directory or inside one, whatever ``needs_git`` says
            (:func:`refuse_git_dir`).
    """
    if not isinstance(packet, Packet):
        packet = load_packet(packet)
    commits = needs_git if needs_identity is None else needs_identity
    checked = [p for p in packet.prompts if prompts is None or p.id in prompts]
    repos: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    prompt_errors: list[dict[str, Any]] = []
    for name, path in packet.repos.items():
        if name == "packet":
            continue
        check = _check_repo(packet, name, path, needs_git=needs_git, needs_identity=commits)
        warnings.extend(check.warnings)
        if needs_git and check.root_dir is not None:
            prompt_errors.extend(_submodule_errors(packet, checked, name, path, check.root_dir))
        repos.append(check.entry)
        for err in check.entry["errors"]:
            errors.append(
                {
                    "scope": "repo",
                    "name": name,
                    **err,
                    "path": str(path),
                    "file": packet.display(packet.manifest_file),
                    "key": f"repos.{name}.path",
                }
            )
    errors.extend(prompt_errors)
    if commits:
        errors.extend(_packet_target_errors(packet, checked))
    if needs_git and check_ignored:
        found_ignored = ignored_outputs(packet, checked)
        warnings.extend(_output_warnings(packet, "output_ignored", found_ignored, ignored_message))
    if commits:
        found_untargeted = untargeted_outputs(checked)
        warnings.extend(
            _output_warnings(packet, "output_not_targeted", found_untargeted, untargeted_message)
        )
    return {
        "schema": "prompt_runner.preflight/v1",
        "packet": packet.name,
        "root": str(packet.root),
        "runtime_ready": not errors,
        "repos": repos,
        "readiness_errors": errors,
        "warnings": warnings,
    }


def _packet_target_errors(packet: Packet, checked: list[Prompt]) -> list[dict[str, Any]]:
    """Readiness errors for the packet directory itself, when a prompt of
    ``checked`` targets it (``targets: [packet]``) and the runner commits there:
    it must then be a git work tree, like any declared repo, or the run would
    fail at that prompt's first commit, after its session. One error per
    problem, naming the first such prompt (``scope: "prompt"``, its file and
    ``targets``) and listing them all in ``prompts``."""
    targeting = [p for p in checked if PACKET_REPO in p.targets]
    if not targeting:
        return []
    check = _check_repo(packet, PACKET_REPO, packet.root, needs_git=True, needs_identity=True)
    first = targeting[0]
    return [
        {
            "scope": "prompt",
            "name": first.id,
            "kind": err["kind"],
            "path": str(packet.root),
            "file": packet.display(first.file),
            "key": "targets",
            "reason": (
                f"the packet directory ({packet.root}), a target of this prompt, "
                f"{err['reason']}; the runner commits the prompt's work there"
            ),
            "fix": f"{err['fix']}, or take `packet` out of the prompt's targets",
            "prompts": [p.id for p in targeting],
        }
        for err in check.entry["errors"]
    ]


def not_ready_error(report: dict[str, Any], manifest_file: Path) -> UserError | None:
    """The error ``run`` stops with when ``report`` (:func:`preflight_report`'s)
    is not ready: its first readiness error as one sentence naming the file,
    the key (``repos.<name>.path``, or the prompt's clause) and the fix; ``None``
    when ready. ``manifest_file``: the file a repo error names."""
    if report["runtime_ready"] or not report["readiness_errors"]:
        return None
    first = report["readiness_errors"][0]
    if first["scope"] == "prompt":  # a contract that reaches into a submodule
        return UserError(
            f"preflight failed: {first['reason']}",
            file=first["file"],
            key=first["key"],
            fix=f"{first['fix']}; or pass --skip-preflight",
        )
    return UserError(
        f"preflight failed: repo {first['name']!r} ({first['path']}) {first['reason']}",
        file=manifest_file,
        key=f"repos.{first['name']}.path",
        fix=f"{first['fix']}; or pass --skip-preflight",
    )


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
    wanted: dict[str, list[tuple[Prompt, str, int, str]]] = {}
    for prompt, clause, index, repo, path in _output_refs(prompts):
        clean = path.strip("/")
        if repo in packet.repos and repo != PACKET_REPO and clean not in ("", "."):
            wanted.setdefault(repo, []).append((prompt, clause, index, clean))
    found: list[IgnoredOutput] = []
    for repo, refs in wanted.items():
        ignored = _check_ignore(packet.repos[repo], sorted({ref[3] for ref in refs}))
        for prompt, clause, index, path in refs:
            if path in ignored:
                found.append(IgnoredOutput(prompt, clause, index, repo, path, ignored[path]))
    return found


@dataclass(frozen=True)
class UntargetedOutput:
    """A path a prompt's contract names as an output in a repo it does not target."""

    prompt: Prompt
    clause: str
    index: int
    repo: str
    path: str


def untargeted_outputs(prompts: Collection[Prompt]) -> list[UntargetedOutput]:
    """Every output path of ``prompts``' contracts (the clauses that name outputs,
    as the committer reads them) whose entry's ``repo:`` is not one of its
    prompt's ``targets``. The runner commits only in a prompt's target repos, so
    if the prompt writes such a path it passes its contract and stays
    uncommitted. Read from the contracts alone (no git): a contract may mean to
    check a file of another repo the prompt does not change, so this is a
    warning, never a refusal. The packet directory (``repo: packet``) is left
    out: it is often in no git repository, and its files are the author's."""
    return [
        UntargetedOutput(prompt, clause, index, repo, path)
        for prompt, clause, index, repo, path in _output_refs(prompts, written=True)
        if repo not in prompt.targets and repo != PACKET_REPO
    ]


def _output_refs(
    prompts: Collection[Prompt], *, written: bool = False
) -> Iterator[tuple[Prompt, str, int, str, str]]:
    """``(prompt, clause, entry index, repo, path)`` for every path the output
    clauses of ``prompts``' contracts name (as the committer reads them: a
    glob's literal prefix; ``written``: as the contract writes them, a glob
    whole), the repo an entry without ``repo:`` checks being its prompt's
    first target."""
    outputs = output_clauses() - NOT_OUTPUTS
    for prompt in prompts:
        default = prompt.targets[0] if prompt.targets else None
        for clause, entries in prompt.contract.entries.items():
            if clause not in outputs:
                continue
            for index, entry in enumerate(entries):
                refs = (
                    [(entry.repo, path) for path in entry.written_paths()]
                    if written
                    else entry.path_refs()
                )
                for ref_repo, path in refs:
                    repo = ref_repo or default
                    if repo is not None:
                        yield prompt, clause, index, repo, path


def untargeted_message(item: UntargetedOutput) -> str:
    """What an untargeted output means and the fix, as one sentence's tail."""
    return (
        f"prompt {item.prompt.id}: verify.{item.clause}[{item.index}] names {item.path} in repo "
        f"{item.repo!r}, which is not one of the prompt's targets: the runner commits only in "
        "its targets, so if the prompt writes that file it completes with it uncommitted; "
        f"add {item.repo!r} to the prompt's `targets` if the prompt writes it"
    )


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


def _output_warnings(
    packet: Packet,
    kind: str,
    found: Sequence[IgnoredOutput | UntargetedOutput],
    message: Callable[[Any], str],
) -> list[dict[str, Any]]:
    """``found`` as preflight ``warnings`` of ``kind``, each its prompt's, with
    the entry's key and ``message(item)``."""
    return [
        {
            "scope": "prompt",
            "name": item.prompt.id,
            "kind": kind,
            "path": item.path,
            "repo": item.repo,
            "file": packet.display(item.prompt.file),
            "key": f"verify.{item.clause}[{item.index}]",
            "message": message(item),
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


@dataclass(frozen=True)
class GitView:
    """What git makes of a repo directory (one ``git rev-parse``).

    Attributes:
        root: the work tree's top directory, ``None`` when git sees none there.
        git_dir: the absolute git directory, ``None`` when git cannot read one.
        in_git_dir: the directory is a git directory or inside one (``.git``,
            a bare repository).
        bare: that git directory is a bare repository.
        refusal: git's own first ``fatal:`` line when it sees no work tree.
    """

    root: Path | None
    git_dir: Path | None
    in_git_dir: bool
    bare: bool
    refusal: str


def git_view(path: Path) -> GitView:
    """Ask git what ``path`` (an existing directory) is; never raises."""
    res = git.run_git(
        path,
        "rev-parse",
        "--is-inside-work-tree",
        "--is-inside-git-dir",
        "--is-bare-repository",
        "--absolute-git-dir",
        "--show-toplevel",
    )
    # rev-parse answers in order and stops at the first it cannot (--show-toplevel
    # in a git directory), so the lines before the failure still hold.
    lines = [*res.stdout.splitlines(), "", "", "", "", ""]
    fatal = next(
        (ln.strip() for ln in res.stderr.splitlines() if ln.startswith("fatal:")),
        (res.stderr.strip().splitlines() or [res.start_error or ""])[0],
    )
    in_work_tree = res.ok and lines[0] == "true" and bool(lines[4])
    return GitView(
        root=Path(lines[4]) if in_work_tree else None,
        git_dir=Path(lines[3]) if lines[3].startswith("/") else None,
        in_git_dir=lines[1] == "true",
        bare=lines[2] == "true",
        refusal="" if in_work_tree else fatal,
    )


def refuse_git_dir(packet: Packet, name: str, path: Path, view: GitView | None = None) -> None:
    """Refuse repo ``name`` whose ``path`` is a git directory or inside one (a
    ``.git``, a bare repository): the agent's writes would land in git's own
    data. Whatever the run's flags (``--no-commit``, ``--skip-preflight``).

    Raises:
        UserError: naming the manifest, ``repos.<name>.path`` and the work tree
            to point it at (a bare repository has none: a clone of it).
    """
    if not path.is_dir():
        return
    view = view or git_view(path)
    if not view.in_git_dir:
        return
    key = f"repos.{name}.path"
    if view.bare:
        raise UserError(
            f"repo {name!r} ({path}) is a bare git repository, which has no work tree for "
            "the agent to write in",
            file=packet.manifest_file,
            key=key,
            fix=f"point it at a clone of it (git clone {view.git_dir or path} DIR)",
        )
    tree = _work_tree_of(view.git_dir) if view.git_dir is not None else None
    where = (
        "is a git directory"
        if view.git_dir == path.resolve()
        else f"is inside the git directory {view.git_dir}"
    )
    if tree is None:
        fix = "point it at the work tree that uses this git directory"
    else:
        rel = os.path.relpath(tree, packet.root)
        fix = f"point it at the work tree instead: path: {rel!r} ({tree})"
    raise UserError(
        f"repo {name!r} ({path}) {where}: git's own data, where the agent's writes "
        "would break the repository",
        file=packet.manifest_file,
        key=key,
        fix=fix,
    )


def refuse_git_dirs(packet: Packet) -> None:
    """:func:`refuse_git_dir` for every repo of ``packet`` (one ``git rev-parse``
    each): what ``run`` checks even under ``--skip-preflight``.

    Raises:
        UserError: the first repo whose path is a git directory or inside one.
    """
    for name, path in packet.repos.items():
        if name != "packet":
            refuse_git_dir(packet, name, path)


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree, which every repository knows without storing it."""

SIGN_TIMEOUT_MS = 20_000
"""Deadline of the signing check's ``git commit-tree -S``, in milliseconds."""


def _signing_error(path: Path) -> dict[str, str] | None:
    """With ``commit.gpgsign`` on, whether git can sign a commit in ``path``:
    ``git commit-tree -S`` of the empty tree, exactly as the runner's commit
    would sign (``gpg.format``, ``gpg.program``, ``user.signingkey``, the
    agent), its object written to a temporary object directory so the repo
    gets nothing. One ``git config`` call when signing is off."""
    res = git.run_git(path, "config", "--bool", "--get", "commit.gpgsign")
    if not res.ok or res.stdout.strip() != "true":
        return None
    import tempfile  # lazy: only a repo that signs pays for it

    with tempfile.TemporaryDirectory(prefix="prompt-runner-sign-") as objects:
        env = git.git_env()
        env["GIT_OBJECT_DIRECTORY"] = objects
        signed = proc.run(
            [
                "git",
                "commit-tree",
                "-S",
                "-m",
                "prompt-runner preflight: can git sign?",
                EMPTY_TREE,
            ],
            cwd=path,
            env=env,
            timeout_ms=SIGN_TIMEOUT_MS,
        )
    if signed.ok:
        return None
    if signed.timed_out:
        why = (
            f"signing did not finish within {SIGN_TIMEOUT_MS // 1000} s (waiting for a passphrase?)"
        )
    else:
        lines = [ln.strip() for ln in signed.stderr.splitlines() if ln.strip()]
        why = next((ln for ln in lines if ln.startswith("error:")), None) or next(
            (ln for ln in lines if ln.startswith("fatal:")),
            signed.start_error or f"git commit-tree -S exited {signed.returncode}",
        )
    return {
        "kind": "cannot_sign",
        "reason": f"has commit.gpgsign on, but git cannot sign a commit there ({why})",
        "fix": (
            "make the signing key usable by the user that runs prompt-runner "
            "(user.signingkey, gpg.format, a gpg-agent or ssh-agent holding it unlocked), "
            "or turn signing off for this repo (`git config commit.gpgsign false`), or use "
            "--no-commit"
        ),
    }


def _work_tree_of(git_dir: Path) -> Path | None:
    """The work tree a non-bare git directory belongs to: ``<tree>/.git``'s
    parent, a linked worktree's (its ``gitdir`` file names ``<tree>/.git``), or
    ``core.worktree``; ``None`` when none of these says."""
    if git_dir.name == ".git":
        return git_dir.parent
    try:
        gitfile = (git_dir / "gitdir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        gitfile = ""
    if gitfile:
        return Path(gitfile).parent
    res = git.run_git(git_dir, "config", "--get", "core.worktree")
    value = res.stdout.strip() if res.ok else ""
    return (git_dir / value).resolve() if value else None


def _not_git_repo(path: Path, refusal: str) -> dict[str, str]:
    """The ``not_git_repo`` error for ``path``, with ``cause``, ``reason`` and the
    ``fix`` git's refusal calls for (``git init`` only where there is no repo)."""
    if "dubious ownership" in refusal:
        quoted = re.search(r"repository at '([^']*)'", refusal)
        at = quoted.group(1) if quoted else str(path)
        return {
            "kind": "not_git_repo",
            "cause": "dubious_ownership",
            "reason": (
                f"is a git repository git refuses to use: {at} is owned by another user "
                "(git's 'dubious ownership' check)"
            ),
            "fix": (
                f"if you trust it, run `git config --global --add safe.directory {at}` as "
                "the user that runs prompt-runner, or run as the repository's owner"
            ),
        }
    missing = re.match(r"fatal: not a git repository: (.+)$", refusal)
    if missing and "(or any of the parent directories)" not in refusal:
        return {
            "kind": "not_git_repo",
            "cause": "gitfile_broken",
            "reason": (
                f"has a .git file pointing at {missing.group(1).strip()}, a git directory "
                "that is gone (a linked worktree whose main repository moved or was deleted)"
            ),
            "fix": (
                f"run `git worktree repair {path}` in the main repository where it is now "
                "(or point the path at a clone)"
            ),
        }
    if refusal and "not a git repository" not in refusal:
        return {
            "kind": "not_git_repo",
            "cause": "git_refused",
            "reason": f"is not a git work tree git can use ({refusal})",
            "fix": "fix what git says, or use --no-commit",
        }
    return {
        "kind": "not_git_repo",
        "cause": "no_repo",
        "reason": "is not a git repository",
        "fix": (
            "run `git init` in it (or point the path at an existing work tree), or use --no-commit"
        ),
    }


def _check_repo(
    packet: Packet, name: str, path: Path, *, needs_git: bool, needs_identity: bool
) -> _RepoCheck:
    """Whether repo ``name`` at ``path`` is ready (see :func:`preflight_report`).

    Raises:
        UserError: ``path`` is a git directory or inside one (:func:`refuse_git_dir`).
    """
    exists = path.is_dir()
    view = git_view(path) if exists else None
    if view is not None:
        refuse_git_dir(packet, name, path, view)
    is_git = view is not None and view.root is not None
    root_dir = view.root if view is not None else None
    git_dir = view.git_dir if is_git and view is not None else None
    entry_errors: list[dict[str, str]] = []
    if not exists:
        # A file where the repo's directory should be is not a missing path.
        if path.exists():
            entry_errors.append(
                {
                    "kind": "not_a_directory",
                    "reason": "is a file, not a directory",
                    "fix": "point the repo's path at its work tree directory",
                }
            )
        else:
            entry_errors.append(
                {
                    "kind": "path_not_found",
                    "reason": "does not exist",
                    "fix": "create it (git init) or fix its path",
                }
            )
    elif needs_git and not is_git:
        entry_errors.append(_not_git_repo(path, view.refusal if view is not None else ""))
    elif needs_identity:
        entry_errors.extend(_commit_errors(path, git_dir))
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


def _commit_errors(path: Path, git_dir: Path | None) -> list[dict[str, str]]:
    """What stops the git committer committing in the work tree at ``path``: no
    identity, commits git cannot sign, an unfinished merge (rebase...), a held
    ``index.lock``. Every one found, not the first."""
    found: list[dict[str, str]] = []
    if not git.run_git(path, "var", "GIT_COMMITTER_IDENT").ok:
        found.append(
            {
                "kind": "no_git_identity",
                "reason": "has no git identity to commit with",
                "fix": (
                    "set `git config user.name` and `git config user.email`, or use --no-commit"
                ),
            }
        )
    elif (unsigned := _signing_error(path)) is not None:
        found.append(unsigned)
    if git_dir is not None and (busy := _operation_in_progress(git_dir)) is not None:
        what, commands = busy
        found.append(
            {
                "kind": "git_operation_in_progress",
                "operation": what,
                "reason": f"is in the middle of {what}",
                "fix": f"finish or abort it ({commands}), or use --no-commit",
            }
        )
    if git_dir is not None and (git_dir / "index.lock").exists():
        lock = git_dir / "index.lock"
        holders = lock_holders(lock)
        if holders:
            found.append(
                {
                    "kind": "index_locked",
                    "lock": str(lock),
                    "reason": (
                        f"has {lock}, held by a live git process, and the runner's "
                        "commits would fail on it"
                    ),
                    "fix": f"{still_running(holders)}; or use --no-commit",
                }
            )
            return found
        found.append(
            {
                "kind": "index_locked",
                "lock": str(lock),
                "reason": (
                    f"has {lock}: another git process is working in this repository, or "
                    "one that crashed left the lock behind, and the runner's commits "
                    "would fail on it"
                ),
                "fix": (
                    f"let that git process finish; if none is running, remove {lock}; "
                    "or use --no-commit"
                ),
            }
        )
    return found


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
