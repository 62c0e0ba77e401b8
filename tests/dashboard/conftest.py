"""Real dashboards and real runs for the dashboard tests.

``serve(...)`` starts ``prompt-runner dashboard`` as a subprocess on a free
port and reads the address it prints; ``start_run(...)`` starts a real
``prompt-runner run`` in the background (the simulated provider, with delays,
so the run is live while the test looks at it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.packets import FAST, NOREPAIR, make_packet

__all__ = ["FAST", "NOREPAIR", "Dashboard", "make_packet", "serve", "start_run", "wait_for"]


@dataclass
class Dashboard:
    """A running ``prompt-runner dashboard``: its address, token and process."""

    url: str
    base: str
    port: int
    token: str | None
    proc: subprocess.Popen[str]
    output: list[str]


def wait_for(check: Callable[[], Any], *, timeout: float = 20.0, every: float = 0.05) -> Any:
    """Call ``check`` until it returns something truthy (returned), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"gave up after {timeout} s (last: {last!r})")


@contextlib.contextmanager
def serve(
    *packets: Path, args: tuple[str, ...] = (), cwd: Path | None = None
) -> Iterator[Dashboard]:
    """``prompt-runner dashboard PACKET... --port 0 ARGS`` until the block ends."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prompt_runner",
            "dashboard",
            *map(str, packets),
            "--port",
            "0",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
    )
    assert proc.stdout is not None
    output: list[str] = []
    try:
        url = token = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            output.append(line)
            found = re.match(r"Dashboard: (\S+)", line)
            if found:
                url = found.group(1)
        assert url is not None, "".join(output)
        port = int(re.search(r":(\d+)/", url).group(1))  # type: ignore[union-attr]
        found_token = re.search(r"token=([^&\s]+)", url)
        token = found_token.group(1) if found_token else None
        base = f"http://127.0.0.1:{port}"
        yield Dashboard(url, base, port, token, proc, output)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def start_run(packet: Path, *args: str) -> subprocess.Popen[str]:
    """``prompt-runner run PACKET ARGS`` in the background (its output discarded)."""
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def snapshot(packet: Path) -> dict[str, Any]:
    """The packet's ``control/snapshot.json`` (``{}`` while there is none)."""
    try:
        return json.loads((packet / ".prompt_runner" / "control" / "snapshot.json").read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return {}


@pytest.fixture
def stop_later() -> Iterator[Callable[[subprocess.Popen[str]], subprocess.Popen[str]]]:
    """Register processes to be killed when the test ends (runs left going)."""
    procs: list[subprocess.Popen[str]] = []
    yield lambda p: procs.append(p) or p  # type: ignore[func-returns-value]
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGKILL)
            p.wait()
