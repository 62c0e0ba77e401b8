"""Contract artifacts: executables ``prepare`` builds from a clone and installs in the workspace.

An artifact (``contracts.artifacts``) is built by running its ``build`` argv
(no shell) in ``<clone>/<project>``; the build must write ``<project>/<output>``,
a regular file, and leave the clone clean (its outputs ignored by the
repository's ``.gitignore``, so the clone stays resumable). The file is
copied, executable, to ``<workspace_root>/artifacts/<id>``, which is what
``@artifact:ID`` in a verifier argv names.

A build is skipped when its key -- the clone's HEAD, the project's tree, the
argv and the output path -- matches the last prepare's (``workspace.lock.json``)
and the installed file still has the recorded digest, so a second ``prepare``
changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import git, proc
from ..errors import InfrastructureError
from ..state.atomic import write_bytes_atomic
from .clones import run as git_run
from .model import Artifact, Workspace

BUILD_TIMEOUT_MS = 1_800_000
"""An artifact's build may take this long (30 minutes)."""


def sha256_file(path: Path) -> str | None:
    """The file's sha256 (hex), or ``None`` when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def build_key(ws: Workspace, artifact: Artifact) -> str | None:
    """What decides a rebuild (``None`` when the clone cannot say)."""
    clone = ws.clone(artifact.repo)
    head = git.head_sha(clone)
    spec = "HEAD^{tree}" if artifact.project == "." else f"HEAD:{artifact.project}"
    tree = git_run(clone, "rev-parse", "--verify", "-q", spec, timeout_ms=60_000)
    if head is None or not tree.ok:
        return None
    data = [head, tree.stdout.strip(), list(artifact.build), artifact.output]
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()


def is_current(ws: Workspace, artifact: Artifact, previous: Mapping[str, Any] | None) -> bool:
    """True when the installed artifact is the one the last prepare built from this key."""
    if not previous or not artifact.installed.is_file():
        return False
    return previous.get("key") == build_key(ws, artifact) and previous.get("sha256") == sha256_file(
        artifact.installed
    )


def build_artifact(ws: Workspace, artifact: Artifact) -> dict[str, Any]:
    """Build and install ``artifact``; its lock record ``{"path", "sha256", "key"}``.

    Raises:
        InfrastructureError: the build did not start, failed, timed out, wrote no
            regular file at ``output``, or left the clone dirty (exit 3, one sentence).
    """
    clone = ws.clone(artifact.repo)
    project = clone / artifact.project
    what = f"artifact {artifact.id!r}"
    res = proc.run(
        list(artifact.build), cwd=project, env=dict(os.environ), timeout_ms=BUILD_TIMEOUT_MS
    )
    if not res.ok:
        tail = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or [""]
        reason = res.start_error or ("timed out" if res.timed_out else f"exit {res.returncode}")
        raise InfrastructureError(
            f"{what}: the build `{' '.join(artifact.build)}` in {project} failed ({reason}) "
            f"{tail[0]}".rstrip()
        )
    built = project / artifact.output
    if built.is_symlink() or not built.is_file():
        raise InfrastructureError(
            f"{what}: the build succeeded but wrote no file at {built}; fix `output` in the "
            "manifest or the build"
        )
    dirty = [e.path for e in git.porcelain_status(clone)]
    if dirty:
        raise InfrastructureError(
            f"{what}: the build left the clone {clone} dirty ({', '.join(dirty[:5])}); ignore "
            "its outputs in the repository's .gitignore"
        )
    data = built.read_bytes()
    write_bytes_atomic(artifact.installed, data)
    os.chmod(artifact.installed, 0o755)
    return {
        "path": str(artifact.installed),
        "sha256": hashlib.sha256(data).hexdigest(),
        "key": build_key(ws, artifact),
    }
