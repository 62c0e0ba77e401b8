"""The example packets shipped in the package, and setting one up to run.

``recovery_demo`` is the project's own packet covering the recovery matrix
(capacity, rate limit, auth and config claims, repair of incomplete work,
resume after a disconnect and a timeout, verifier override, repair after the
prompt's own retry budget is spent). It runs on the built-in simulated
provider, so it needs no agent CLI and no network. ``terminal_classes`` shows
the three failures that fail honestly even when the files exist (approval
denied, guardrail, user cancelled) next to an independent prompt that
completes; it exits 1 by design.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from .errors import UserError

EXAMPLES = ("recovery_demo", "terminal_classes")


def example_source(name: str) -> Path:
    """The packaged directory of example ``name``."""
    if name not in EXAMPLES:
        raise UserError(f"unknown example {name!r}", fix=f"use one of {', '.join(EXAMPLES)}")
    return Path(str(resources.files("prompt_runner") / "data" / "examples" / name))


def setup_example(name: str = "recovery_demo", dest: Path | None = None) -> Path:
    """Copy example ``name`` to ``dest`` and create its ``workspace`` git repo.

    Args:
        name: the example name.
        dest: the packet directory to create (must not exist); default: a new
            temporary directory.

    Returns:
        The packet directory.

    Raises:
        UserError: ``dest`` exists, or git is missing.
    """
    if dest is None:
        dest = Path(tempfile.mkdtemp(prefix="prompt-runner-demo-")) / name
    if dest.exists():
        raise UserError("already exists", file=dest, fix="choose a new --dir or remove it")
    shutil.copytree(example_source(name), dest)
    workspace = dest / "workspace"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Demo workspace\n", encoding="utf-8")
    env_args = ["-c", "user.name=Prompt Runner Demo", "-c", "user.email=demo@prompt-runner.invalid"]
    try:
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
        subprocess.run(
            ["git", *env_args, "commit", "-q", "-m", "initial"], cwd=workspace, check=True
        )
        subprocess.run(
            ["git", "config", "user.name", "Prompt Runner Demo"], cwd=workspace, check=True
        )
        subprocess.run(
            ["git", "config", "user.email", "demo@prompt-runner.invalid"],
            cwd=workspace,
            check=True,
        )
    except FileNotFoundError:
        raise UserError("git is not installed", fix="install git and run again") from None
    return dest
