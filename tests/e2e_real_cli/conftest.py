"""Fixtures of the real-binary end-to-end tests (marker ``real_cli``).

``agent_clis`` installs the pinned Claude Code and Codex CLI with
``scripts/install_agent_clis.sh`` (cached under
``~/.cache/prompt-runner-agent-clis``, or ``$PROMPT_RUNNER_AGENT_CLI_CACHE``)
and returns their bin directory; ``netns`` proves that a private network
namespace can be made. Each skips the test with the reason when it cannot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "scripts" / "install_agent_clis.sh"
INSTALL_TIMEOUT_S = 900
# Read at import, before the autouse fixture points HOME at a scratch directory.
CACHE = Path(
    os.environ.get("PROMPT_RUNNER_AGENT_CLI_CACHE")
    or Path.home() / ".cache" / "prompt-runner-agent-clis"
)


@pytest.fixture(scope="session")
def agent_clis() -> Path:
    """The bin directory holding the real ``claude`` and ``codex`` (installed if needed)."""
    if shutil.which("npm") is None and not (CACHE / "node_modules" / ".bin" / "claude").exists():
        pytest.skip("npm is not on PATH, so the real agent CLIs cannot be installed")
    env = dict(os.environ, PROMPT_RUNNER_AGENT_CLI_CACHE=str(CACHE))
    try:
        proc = subprocess.run(
            ["bash", str(INSTALL)],
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"installing the agent CLIs took over {INSTALL_TIMEOUT_S} s (no registry?)")
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        pytest.skip(f"could not install the real agent CLIs: {' | '.join(tail)}")
    bin_dir = CACHE / "node_modules" / ".bin"
    for name in ("claude", "codex"):
        if not (bin_dir / name).exists():
            pytest.skip(f"the `{name}` binary is missing from {bin_dir} after install")
    return bin_dir


@pytest.fixture(scope="session")
def netns() -> list[str]:
    """The ``unshare`` argv prefix that makes a private network namespace.

    ``unshare -n`` when permitted (root), else ``unshare -rn`` (an unprivileged
    user namespace mapping the caller to root); skips unless one of them can
    bring loopback up with ``ip``.
    """
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            pytest.skip(f"`{tool}` is not on PATH: cannot build a private network namespace")
    reasons = []
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        probe = subprocess.run(
            [*prefix, "sh", "-c", "ip link set lo up"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if probe.returncode == 0:
            return prefix
        reasons.append(f"{' '.join(prefix)}: {(probe.stderr.strip() or 'failed')[-200:]}")
    pytest.skip("cannot make a private network namespace (" + "; ".join(reasons) + ")")
