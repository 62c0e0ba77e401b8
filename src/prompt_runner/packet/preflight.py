"""Runtime readiness of a packet (SPEC 3.1, 9): repos exist and are git repos.

Returns a JSON-safe report; ``run`` refuses to start when ``runtime_ready`` is
false (unless ``--skip-preflight``).
"""

from __future__ import annotations

from typing import Any

from .loader import Packet


def preflight_report(
    packet: Packet, *, needs_git: bool = True, needs_identity: bool = False
) -> dict[str, Any]:
    """Check every declared repo.

    Args:
        packet: the loaded packet.
        needs_git: repos must be git work trees (committer ``git`` or git clauses).
        needs_identity: git must know who commits (``user.name``/``user.email``),
            checked before any session so a run cannot fail at its first commit.

    Returns:
        ``{"schema", "packet", "runtime_ready", "repos": [{name, path, exists,
        git, ready, errors: [{kind}]}], "readiness_errors": [{scope, name, kind,
        path}]}``.
    """
    from .. import git

    repos: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for name, path in packet.repos.items():
        if name == "packet":
            continue
        exists = path.is_dir()
        is_git = exists and git.is_git_repo(path)
        entry_errors: list[dict[str, str]] = []
        if not exists:
            entry_errors.append({"kind": "path_not_found"})
        elif needs_git and not is_git:
            entry_errors.append({"kind": "not_git_repo"})
        elif needs_identity and not git.run_git(path, "var", "GIT_COMMITTER_IDENT").ok:
            entry_errors.append({"kind": "no_git_identity"})
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
