"""Steering a fleet member on the machine that runs it: the local control plane.

The local engine steers a member here; a Temporal worker does the same for
the members it runs, when the member's workflow is signalled
(``fleet/temporal/``). Either way it is ``control steer --workspace`` on the
member's workspace (a child process: the control command finds the state by
the workspace's own rule), then a wait for the runner's decision in the
control plane's outcome receipts.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from .. import proc
from ..control.runs import run_is_live
from ..control.store import ControlStore
from ..errors import InfrastructureError, UserError
from ..workspace import Workspace
from ..workspace.runspec import run_command


@dataclass(frozen=True)
class FleetSteerReceipt:
    """A steer sent to a fleet member and how its runner decided it.

    Attributes:
        fleet, workspace: the member.
        request: the request's name in the member's control plane.
        host: the machine that applied it (local: this one; Temporal: the worker).
        outcome: ``applied``, ``rejected`` (see ``reason``), ``queued`` (no
            session was running: the next one gets it) or ``pending`` (not
            decided within the call's ``wait_s``; ``control log`` will say).
        reason: why it was rejected, else ``None``.
    """

    fleet: str
    workspace: str
    request: str | None
    host: str | None
    outcome: str
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"command": "steer", **self.__dict__}


def steer_member(
    ws: Workspace, text: str, *, author: str | None, wait_s: float
) -> tuple[str, str, str | None]:
    """Send ``control steer`` to workspace ``ws`` here and wait for its decision.

    Returns:
        ``(request name, outcome, reason)``.

    Raises:
        UserError: the control command refused it (its sentence).
        InfrastructureError: it could not be run.
    """
    cmd = run_command(ws)
    argv = [cmd.argv[0], "-m", "prompt_runner", "control", "steer", "--workspace"]
    argv += [str(ws.manifest_path), "--json", *(["--author", author] if author else []), text]
    result = proc.run(argv, cwd=ws.state_dir, env=cmd.full_env(os.environ), timeout_ms=60_000)
    if result.returncode != 0:
        said = (result.stderr or result.stdout or "").strip().splitlines()
        message = said[-1] if said else f"control steer exited {result.returncode}"
        if result.returncode == 2:
            raise UserError(message.removeprefix("error: "), fix="see the member's control log")
        raise InfrastructureError(message)
    name = json.loads(result.stdout)["request"]
    store = ControlStore(ws.state_dir)
    deadline = time.monotonic() + wait_s
    while True:
        receipt = store.read_outcome(name)
        if receipt is not None:
            return name, str(receipt.get("outcome", "applied")), receipt.get("reason")
        if time.monotonic() >= deadline:
            return name, "pending", None
        if not run_is_live(ws.state_dir) and store.read_outcome(name) is None:
            return name, "pending", "the run ended before deciding it (a resume delivers it)"
        time.sleep(0.1)
