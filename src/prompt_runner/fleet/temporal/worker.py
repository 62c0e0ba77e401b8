"""``fleet worker``: poll a task queue and run the fleet's workflows and members here.

One process per machine (or container): a Temporal worker for both
workflows (``workflows.py``) and the ``run-member`` activity, at most
``slots`` members at once (``max_concurrent_activities``, one thread each).
SIGINT or SIGTERM shuts it down: after :data:`SHUTDOWN_GRACE_S` the running
members' activities are cancelled (their runners stop, their prompts are
recorded interrupted, their state is pushed) and retried by another worker.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from temporalio.worker import Worker

from ...state.fleet_layout import WorkerLayout
from ...workspace.model import xdg_home
from ..model import TemporalSettings
from .activities import MemberActivities
from .connect import connect, describe_connection
from .member import TICK_S, default_identity
from .workflows import FleetWorkflow, WorkspaceWorkflow

SHUTDOWN_GRACE_S = 2.0
"""Seconds a shutting-down worker gives its members before it cancels them (each
then stops its runner and pushes its state; another worker goes on)."""


def default_root() -> Path:
    """``$XDG_DATA_HOME/prompt_runner/fleet-worker``."""
    return xdg_home("XDG_DATA_HOME", ".local/share") / "prompt_runner" / "fleet-worker"


def run_worker(
    *,
    service: TemporalSettings,
    task_queue: str,
    slots: int,
    identity: str | None,
    root: str | os.PathLike[str] | None,
    say: Callable[[str], None] | None,
    tick_s: float = TICK_S,
) -> int:
    """Run the worker until SIGINT/SIGTERM (see the module docstring); 0 once it is down.

    ``service`` is where and how to connect (the ``fleet worker`` flags: relative
    PEM paths start from the working directory).
    """
    return asyncio.run(_serve(service, task_queue, slots, identity, root, say, tick_s))


async def _serve(
    service: TemporalSettings,
    task_queue: str,
    slots: int,
    identity: str | None,
    root: str | os.PathLike[str] | None,
    say: Callable[[str], None] | None,
    tick_s: float,
) -> int:
    speak = say or (lambda _line: None)
    name = identity or default_identity()
    layout = WorkerLayout(Path(root).expanduser().absolute() if root else default_root())
    client = await connect(service, base=Path.cwd(), file=None, flags=True)
    loop = asyncio.get_running_loop()
    acts = MemberActivities(name, layout, client, loop, tick_s=tick_s, say=speak)
    done = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    with ThreadPoolExecutor(max_workers=slots, thread_name_prefix="member") as pool:
        worker = Worker(
            client,
            task_queue=task_queue,
            workflows=[FleetWorkflow, WorkspaceWorkflow],
            activities=[acts.run_member],
            activity_executor=pool,
            max_concurrent_activities=slots,
            identity=name,
            graceful_shutdown_timeout=timedelta(seconds=SHUTDOWN_GRACE_S),
        )
        speak(
            f"fleet worker {name}: {service.address} ({describe_connection(service)}) namespace "
            f"{service.namespace} task queue {task_queue}, "
            f"{slots} slot(s), members under {layout.root}"
        )
        async with worker:
            await done.wait()
            speak(f"fleet worker {name}: shutting down")
    return 0
