"""Runtime readiness of a packet (SPEC 3.1, 9): repos exist and are git repos.

Returns a JSON-safe report; ``run`` refuses to start when ``runtime_ready`` is
false (unless ``--skip-preflight``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .loader import Packet, load_packet

_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase or am"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def _operation_in_progress(git: Any, path: Any) -> str | None:
    """The unfinished git operation in ``path``'s work tree (merge, rebase...), if any:
    the runner's partial commits would fail in the middle of one."""
    from pathlib import Path

    res = git.run_git(path, "rev-parse", "--absolute-git-dir")
    if not res.ok:
        return None
    git_dir = Path(res.stdout.strip())
    for marker, what in _IN_PROGRESS:
        if (git_dir / marker).exists():
            return what
    return None


def preflight_report(
    packet: Packet | Path | str, *, needs_git: bool = True, needs_identity: bool = False
) -> dict[str, Any]:
    """Check every declared repo.

    Args:
        packet: the packet directory, or the loaded packet.
        needs_git: repos must be git work trees (committer ``git`` or git clauses).
        needs_identity: git must know who commits (``user.name``/``user.email``),
            checked before any session so a run cannot fail at its first commit.

    Returns:
        ``{"schema", "packet", "runtime_ready", "repos": [{name, path, exists,
        git, ready, errors: [{kind}]}], "readiness_errors": [{scope, name, kind,
        path}]}``.

    Raises:
        UserError: ``packet`` is a path to an invalid packet.
    """
    from .. import git

    if not isinstance(packet, Packet):
        packet = load_packet(packet)

    repos: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for name, path in packet.repos.items():
        if name == "packet":
            continue
        exists = path.is_dir()
        is_git = exists and git.is_git_repo(path)
        entry_errors: list[dict[str, str]] = []
        if not exists:
            # A file where the repo's directory should be is not a missing path.
            entry_errors.append({"kind": "not_a_directory" if path.exists() else "path_not_found"})
        elif needs_git and not is_git:
            entry_errors.append({"kind": "not_git_repo"})
        elif needs_identity and not git.run_git(path, "var", "GIT_COMMITTER_IDENT").ok:
            entry_errors.append({"kind": "no_git_identity"})
        elif needs_identity and (busy := _operation_in_progress(git, path)) is not None:
            entry_errors.append({"kind": "git_operation_in_progress", "operation": busy})
        repos.append(
            {
                "name": name,
                "path": str(path),
                "exists": exists,
                "git": is_git,
                "ready": not entry_errors,
                "errors": entry_errors,
            }
        )
        for err in entry_errors:
            errors.append({"scope": "repo", "name": name, "kind": err["kind"], "path": str(path)})
    return {
        "schema": "prompt_runner.preflight/v1",
        "packet": packet.name,
        "root": str(packet.root),
        "runtime_ready": not errors,
        "repos": repos,
        "readiness_errors": errors,
    }
