"""A live run in a child process for tests that act on it while it runs.

``start_run(packet)`` starts ``python -m prompt_runner run PACKET --no-commit``
with its output discarded; ``wait_for_snapshot(packet)`` polls the run's control
snapshot until it exists (or until ``ready(snapshot)`` holds) for up to 30 s and
then returns either way, so the test's own assertions say what went wrong.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_runner.control.store import ControlStore


def start_run(packet: Path) -> subprocess.Popen[bytes]:
    """Start ``prompt-runner run PACKET --no-commit`` in a child; stdout and stderr discarded."""
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_for_snapshot(
    packet: Path,
    ready: Callable[[dict[str, Any]], bool] | None = None,
    *,
    timeout: float = 30,
    poll_s: float = 0.02,
) -> None:
    """Poll every ``poll_s`` s, for up to ``timeout`` s, until the control snapshot exists.

    With ``ready``, until the snapshot parses and ``ready(snapshot)`` is true (an
    unreadable or torn snapshot is polled again). Returns silently on timeout.
    """
    path = ControlStore(packet / ".prompt_runner").snapshot_path
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready is None:
            if path.exists():
                return
        else:
            try:
                if ready(json.loads(path.read_text())):
                    return
            except (OSError, ValueError):
                pass
        time.sleep(poll_s)
