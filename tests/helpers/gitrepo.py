"""Real git repositories for tests (never a mocked git)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_git_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """Create a git repo at ``path`` with one commit of ``files``.

    Args:
        path: directory to create (parents included).
        files: relative path -> text; defaults to ``{"README.md": "# Repo\\n"}``.

    Returns:
        ``path``.
    """
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for rel, text in (files or {"README.md": "# Repo\n"}).items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=path, check=True)
    return path
