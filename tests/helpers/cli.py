"""Run the real CLI in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def cli(
    *args: str | Path, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m prompt_runner ARGS`` with the test's environment; never raises on exit code."""
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
