"""Shared helpers for the control-plane tests (packets, requests, log reads)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_runner import api
from prompt_runner.control.store import ControlStore
from tests.helpers.packets import FAST, NOREPAIR, make_packet

__all__ = ["FAST", "NOREPAIR", "make_packet"]


def control(packet: Path) -> ControlStore:
    return ControlStore(packet / ".prompt_runner")


def run_file(packet: Path, **options: Any) -> tuple[api.RunResult, str]:
    """Run through the API with the file store and no commits; return the result and output."""
    out = io.StringIO()
    options.setdefault("no_commit", True)
    result = api.run(packet, stream=out, default_runtime_store="file", **options)
    return result, out.getvalue()


def prompt_record(packet: Path, prompt_id: str = "01") -> dict[str, Any]:
    record: dict[str, Any] = api.status(packet)["prompts"][prompt_id]
    return record


def log(packet: Path) -> list[dict[str, Any]]:
    return control(packet).read_log()


def current_run_id(packet: Path) -> str:
    doc = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())
    return str(doc["run_id"])


def when_session_runs(
    packet: Path, action: Callable[[], None], *, timeout: float = 20
) -> threading.Thread:
    """Call ``action`` on a thread once the run's snapshot shows a live session."""

    def wait_then_act() -> None:
        path = packet / ".prompt_runner" / "control" / "snapshot.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                snap = json.loads(path.read_text())
            except (OSError, ValueError):
                snap = {}
            if snap.get("status") == "running" and snap.get("event_count", 0) > 0:
                break
            time.sleep(0.01)
        action()

    thread = threading.Thread(target=wait_then_act, daemon=True)
    thread.start()
    return thread


class Gate:
    """A verify command that says when verification starts and waits for the test."""

    def __init__(self, root: Path) -> None:
        self.started = root / "verifying.flag"
        self.go = root / "go.flag"

    def command(self) -> dict[str, Any]:
        code = (
            "import pathlib, time\n"
            f"pathlib.Path({str(self.started)!r}).write_text('x')\n"
            f"go = pathlib.Path({str(self.go)!r})\n"
            "deadline = time.time() + 60\n"
            "while not go.exists() and time.time() < deadline:\n"
            "    time.sleep(0.02)\n"
        )
        return {"exec": sys.executable, "args": ["-c", code], "timeout_ms": 90_000}

    def wait_started(self, runner: subprocess.Popen[str], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not self.started.exists():
            if runner.poll() is not None:
                raise AssertionError(f"the run ended before verifying: {runner.communicate()[0]}")
            assert time.monotonic() < deadline, "verification never started"
            time.sleep(0.02)

    def open(self) -> None:
        self.go.write_text("go")
