"""Build small packets on disk from dicts (real files, real YAML)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml


def front_matter_file(front: dict[str, Any] | str, body: str = "# Body\n") -> str:
    """A markdown file: ``---``, the YAML of ``front`` (or the literal text), ``---``, body."""
    text = front if isinstance(front, str) else yaml.safe_dump(front, sort_keys=False)
    return f"---\n{text}---\n{body}"


def make_packet(
    root: Path,
    *,
    manifest: dict[str, Any] | None = None,
    prompts: dict[str, dict[str, Any] | str] | None = None,
    bodies: dict[str, str] | None = None,
) -> Path:
    """Write a packet at ``root``.

    Args:
        root: the packet directory (created).
        manifest: manifest front matter; default: name ``demo``, repos ``app``
            (default) and ``docs``, both pointing at directories that exist.
        prompts: file name under ``prompts/`` -> front matter (dict or YAML text).
        bodies: file name -> body (default ``# Body``).
    """
    root.mkdir(parents=True, exist_ok=True)
    if manifest is None:
        (root / "app").mkdir(exist_ok=True)
        (root / "docs").mkdir(exist_ok=True)
        manifest = {
            "name": "demo",
            "repos": {"app": {"path": "app", "default": True}, "docs": {"path": "docs"}},
        }
    (root / "prompt_runner_packet.md").write_text(
        front_matter_file(manifest, "# Demo\n"), encoding="utf-8"
    )
    (root / "prompts").mkdir(exist_ok=True)
    for name, front in (prompts or {}).items():
        body = (bodies or {}).get(name, "# Body\n")
        (root / "prompts" / name).write_text(front_matter_file(front, body), encoding="utf-8")
    return root


GOOD_VERIFY: dict[str, Any] = {
    "files_exist": ["NOTES.md"],
    "contains": [{"path": "NOTES.md", "text": "done"}],
    "commands": [{"exec": "test", "args": ["-f", "NOTES.md"], "timeout_ms": 60000}],
}


def prompt(pid: str = "01", **extra: Any) -> dict[str, Any]:
    """Prompt front matter with a clean contract unless ``verify`` is given."""
    front: dict[str, Any] = {"id": pid, "phase": 1, "name": f"Step {pid}", "targets": ["app"]}
    front["verify"] = GOOD_VERIFY
    front.update(extra)
    if front["verify"] is None:
        del front["verify"]
    return front


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m prompt_runner ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
