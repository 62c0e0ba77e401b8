"""Build a fleet for tests: one packet repository, N target repositories, bare remotes on disk.

``make_fleet(tmp_path, n)`` lays out::

    tmp/author/packets/            the packet repository (git): migrations/demo
    tmp/author/t0 ... t<n-1>/      the target repositories (git)
    tmp/remotes/packets.git        bare remotes they were pushed to
    tmp/remotes/t0.git ...
    tmp/fleet/template.yml         the template workspace (packets + target)
    tmp/fleet/fleet.yml            the fleet: the template over t0..t<n-1>

The packet binds ``target: ../../../target`` (the clones sit side by side in
each member's workspace), so each member's prompts write into its own clone of
its own target repository, on its own work branch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import FAST, NOREPAIR, write_front_matter
from tests.helpers.workspaces import git


def sleepy_prompts(
    count: int = 3, *, delay_ms: int = 300, cost: float | None = None
) -> dict[str, dict[str, Any]]:
    """``count`` simulated prompts, each writing ``p<i>.txt`` after ``delay_ms`` of silence."""
    prompts: dict[str, dict[str, Any]] = {}
    for i in range(1, count + 1):
        step: dict[str, Any] = {
            "delay_ms": delay_ms,
            "writes": [{"path": f"p{i}.txt", "text": f"{i}\n"}],
        }
        if cost is not None:
            step["cost_usd"] = cost
        prompts[f"{i:02d}"] = {
            "targets": ["target"],
            "commit": f"feat: step {i}",
            "simulate": {"attempts": [step]},
            "verify": {"files_exist": [f"p{i}.txt"]},
        }
    return prompts


def write_fleet_packet(repo: Path, prompts: dict[str, dict[str, Any]]) -> Path:
    """``repo/migrations/demo``: a simulated packet over the repo ``target``."""
    packet = repo / "migrations" / "demo"
    front = {
        "name": "demo",
        "profile": "simulated-default",
        "provider": "simulated",
        "model": "simulated-demo",
        "recovery": {**FAST, **NOREPAIR},
        "repos": {"target": {"path": "../../../target", "default": True}},
    }
    write_front_matter(packet / "prompt_runner_packet.md", front, "# demo\n")
    for prompt_id, fm in prompts.items():
        data = {"id": prompt_id, "phase": 1, "name": f"Step {prompt_id}", **fm}
        write_front_matter(packet / "prompts" / f"{prompt_id}_step.prompt.md", data, "# Step\n")
    return packet


def _bare(remotes: Path, repo: Path) -> Path:
    bare = remotes / f"{repo.name}.git"
    git(remotes, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    return bare


def make_fleet(
    root: Path,
    n: int,
    *,
    prompts: dict[str, dict[str, Any]] | None = None,
    fleet: dict[str, Any] | None = None,
    push: str = "explicit",
    fleet_id: str = "mig",
) -> Path:
    """Lay out the module docstring's tree; return the fleet manifest's path.

    Args:
        n: how many target repositories (members).
        prompts: the packet's prompts (default :func:`sleepy_prompts`).
        fleet: keys merged over the default fleet manifest.
        push: the template's ``commits.push``.
    """
    remotes = root / "remotes"
    remotes.mkdir(parents=True)
    packets = make_git_repo(root / "author" / "packets", {"README.md": "# packets\n"})
    write_fleet_packet(packets, prompts if prompts is not None else sleepy_prompts())
    git(packets, "add", "-A")
    git(packets, "commit", "-q", "-m", "packet")
    _bare(remotes, packets)
    for i in range(n):
        target = make_git_repo(root / "author" / f"t{i}", {"README.md": f"# t{i}\n"})
        _bare(remotes, target)
    here = root / "fleet"
    here.mkdir()
    template = {
        "schema": "prompt_runner.workspace/v1",
        "id": "template",
        "repositories": {
            "packets": {"remote": "../remotes/packets.git", "ref": "main"},
            "target": {"remote": "../remotes/t0.git", "ref": "main"},
        },
        "packet": {"repo": "packets", "path": "migrations/demo"},
        "operator": {"containment": "process_group"},
        "commits": {"mode": "runner", "push": push},
    }
    (here / "template.yml").write_text(yaml.safe_dump(template, sort_keys=False))
    doc: dict[str, Any] = {
        "schema": "prompt_runner.fleet/v1",
        "id": fleet_id,
        "engine": "local",
        "concurrency": 4,
        "template": {
            "workspace": "template.yml",
            "repository": "target",
            "repositories": [{"name": f"t{i}", "remote": f"../remotes/t{i}.git"} for i in range(n)],
        },
    }
    doc.update(fleet or {})
    path = here / "fleet.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def commits_on(repo: Path, ref: str) -> list[str]:
    """The subjects of the commits on ``ref`` in ``repo`` (newest first)."""
    out = subprocess.run(
        ["git", "log", "--format=%s", ref], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()
