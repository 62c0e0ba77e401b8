"""Shared helpers for the control-plane tests (packets, requests, log reads)."""

from __future__ import annotations

import io
import json
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
