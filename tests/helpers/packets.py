"""Build packets for tests from plain dicts: ``make_packet(tmp_path, {...})``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.helpers.gitrepo import make_git_repo

FAST = {"retry": {"base_delay_ms": 0, "max_delay_ms": 0, "jitter": False}}
NOREPAIR = {"repair": {"enabled": False}}


def write_front_matter(path: Path, front: dict[str, Any], body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + body
    path.write_text(text, encoding="utf-8")
    return path


def make_packet(
    root: Path,
    prompts: dict[str, dict[str, Any]],
    *,
    manifest: dict[str, Any] | None = None,
    repo: bool = True,
    name: str = "demo",
    bodies: dict[str, str] | None = None,
) -> Path:
    """Create packet ``root/name`` with a git repo ``app`` and the given prompts.

    Args:
        prompts: prompt id -> front matter (``id``, ``name``, ``targets`` default in).
        manifest: manifest keys merged over a simulated-provider default with FAST recovery.
        repo: create ``root/repo`` as a real git repo (one commit, README.md).
        bodies: prompt id -> markdown body.

    Returns:
        The packet directory.
    """
    packet = root / name
    packet.mkdir(parents=True)
    repo_path = root / "repo"
    if repo and not repo_path.exists():
        make_git_repo(repo_path)
    front: dict[str, Any] = {
        "name": name,
        "profile": "simulated-default",
        "provider": "simulated",
        "model": "simulated-demo",
        "recovery": FAST,
        "repos": {"app": {"path": "../repo", "default": True}},
    }
    front.update(manifest or {})
    front = {k: v for k, v in front.items() if v is not None}  # None removes a default
    write_front_matter(packet / "prompt_runner_packet.md", front, f"# {name}\n")
    for prompt_id, fm in prompts.items():
        data = {"id": prompt_id, "phase": 1, "name": f"Step {prompt_id}", "targets": ["app"]}
        data.update(fm)
        body = (bodies or {}).get(prompt_id, f"# Step {prompt_id}\n")
        write_front_matter(packet / "prompts" / f"{prompt_id}_step.prompt.md", data, body)
    return packet
