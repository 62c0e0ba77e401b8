"""Build an operator workspace for tests: author checkouts, bare remotes on disk, a manifest.

``make_workspace(tmp_path)`` lays out::

    tmp/author/app/            the author's checkout (git), holding packets/demo
    tmp/author/lib/            a second repository
    tmp/remotes/app.git        bare remotes the checkouts were pushed to
    tmp/remotes/lib.git
    tmp/ops/workspace.yml      the manifest (remote: the bare repos, source: the checkouts)

The packet binds its repos relatively (``app: ../..``, ``lib: ../../../lib``),
so inside the workspace they land in the clones ``repos/app`` and ``repos/lib``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import FAST, write_front_matter


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in ``repo`` (raises on failure); stdout."""
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def default_prompts() -> dict[str, dict[str, Any]]:
    """Two simulated prompts: 01 writes in app, 02 in lib."""
    return {
        "01": {
            "targets": ["app"],
            "commit": "feat: one",
            "simulate": {"attempts": [{"writes": [{"path": "one.txt", "text": "1\n"}]}]},
            "verify": {"files_exist": ["one.txt"]},
        },
        "02": {
            "targets": ["lib"],
            "commit": "feat: two",
            "simulate": {"attempts": [{"writes": [{"path": "two.txt", "text": "2\n"}]}]},
            "verify": {"files_exist": ["two.txt"]},
        },
    }


def write_packet(app: Path, prompts: dict[str, dict[str, Any]]) -> Path:
    """``app/packets/demo``: a simulated packet over the repos ``app`` and ``lib``."""
    packet = app / "packets" / "demo"
    front = {
        "name": "demo",
        "profile": "simulated-default",
        "provider": "simulated",
        "model": "simulated-demo",
        "recovery": FAST,
        "repos": {"app": {"path": "../..", "default": True}, "lib": {"path": "../../../lib"}},
    }
    write_front_matter(packet / "prompt_runner_packet.md", front, "# demo\n")
    for prompt_id, fm in prompts.items():
        data = {"id": prompt_id, "phase": 1, "name": f"Step {prompt_id}", **fm}
        write_front_matter(packet / "prompts" / f"{prompt_id}_step.prompt.md", data, "# Step\n")
    return packet


def make_workspace(
    root: Path,
    *,
    prompts: dict[str, dict[str, Any]] | None = None,
    manifest: dict[str, Any] | None = None,
    app_files: dict[str, str] | None = None,
) -> Path:
    """Lay out the module docstring's tree; return the manifest path.

    Args:
        prompts: the packet's prompts (default :func:`default_prompts`).
        manifest: keys merged over the default manifest (``None`` values remove one).
        app_files: more files committed in the app repository.
    """
    app = make_git_repo(
        root / "author" / "app",
        {"README.md": "# app\n", ".gitignore": "build/\n", **(app_files or {})},
    )
    write_packet(app, prompts if prompts is not None else default_prompts())
    git(app, "add", "-A")
    git(app, "commit", "-q", "-m", "packet")
    lib = make_git_repo(root / "author" / "lib", {"README.md": "# lib\n"})
    remotes = root / "remotes"
    remotes.mkdir(parents=True)
    for repo in (app, lib):
        bare = remotes / f"{repo.name}.git"
        git(remotes, "init", "-q", "--bare", "-b", "main", str(bare))
        git(repo, "remote", "add", "origin", str(bare))
        git(repo, "push", "-q", "origin", "main")
    doc: dict[str, Any] = {
        "schema": "prompt_runner.workspace/v1",
        "id": "demo-ws",
        "repositories": {
            "app": {"remote": "../remotes/app.git", "ref": "main", "source": "../author/app"},
            "lib": {"remote": "../remotes/lib.git", "ref": "main"},
        },
        "packet": {"repo": "app", "path": "packets/demo"},
        "operator": {"containment": "process_group"},
        "commits": {"mode": "runner", "push": "explicit", "branch": "prompt-runner/work"},
    }
    doc.update(manifest or {})
    doc = {k: v for k, v in doc.items() if v is not None}
    path = root / "ops" / "workspace.yml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def tree_digest(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``root`` -> (size, mtime_ns, mode): equal digests mean nothing changed."""
    out: dict[str, tuple[int, int, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (
            st.st_size if path.is_file() else 0,
            st.st_mtime_ns,
            st.st_mode,
        )
    return out
