"""Shared pieces of the supervision tests: packets, the CLI, /proc checks, cleanup."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from prompt_runner.supervise.members import MARKER_ENV
from tests.helpers.packets import make_packet


def slow_packet(
    root: Path, ids: tuple[str, ...] = ("01", "02", "03"), delay_ms: int = 1500
) -> Path:
    """A packet whose prompts each take ``delay_ms`` and write ``f<id>.txt`` (committed)."""
    prompts = {
        pid: {
            "commit": f"feat: {pid}",
            "simulate": {
                "attempts": [
                    {"delay_ms": delay_ms, "writes": [{"path": f"f{pid}.txt", "text": pid}]}
                ]
            },
            "verify": {"files_exist": [f"f{pid}.txt"]},
        }
        for pid in ids
    }
    return make_packet(root, prompts)


def cli(
    *args: str | Path, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m prompt_runner ARGS`` in a subprocess; never raises on its exit code."""
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(env) if env is not None else None,
    )


def record(packet: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (packet / ".prompt_runner" / "supervisor" / "record.json").read_text()
    )
    return doc


def state(packet: Path) -> Path:
    return packet / ".prompt_runner"


def completed_ids(packet: Path) -> list[str]:
    """The prompt ids of every ``completed`` line of ``progress.log``, in order."""
    path = state(packet) / "progress.log"
    if not path.exists():
        return []
    return [
        line.split(":")[0]
        for line in path.read_text().splitlines()
        if line.split(":")[1:2] == ["completed"]
    ]


def commit_subjects(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def wait_for(check: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def run_finished(packet: Path) -> bool:
    """The run has ended: its run.pid is gone and runs/current.json says how."""
    current = state(packet) / "runs" / "current.json"
    if (state(packet) / "run.pid").exists() or not current.exists():
        return False
    return json.loads(current.read_text()).get("status") != "running"


def marked_pids(token: str) -> list[int]:
    """Every live process whose environment carries the launch's marker (a /proc scan)."""
    wanted = f"{MARKER_ENV}={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2 :].startswith("Z"):
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat[stat.rfind(")") + 2 :].startswith(("Z", "X"))


def kill_marked(tokens: list[str]) -> None:
    """Whatever a test left running (by marker): SIGKILL."""
    for token in tokens:
        for pid in marked_pids(token):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
