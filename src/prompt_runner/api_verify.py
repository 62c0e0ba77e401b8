"""``prompt_runner.verify``: check contracts only -- no session, no state or progress change."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .api_calls import public
from .api_options import packet_arg, prompt_ids
from .packet.loader import Packet
from .planning.selection import normalize_id
from .runner import orphans
from .state.layout import StateLayout
from .state.usable import GITIGNORE
from .verifier import VerifyContext
from .verifier import verify as run_contract


@public
def verify(
    packet: Packet | str | Path, *, ids: str | int | tuple[str, ...] | list[str] = ()
) -> dict[str, Any]:
    """Check contracts only: no session, no state or progress change.

    Args:
        ids: one prompt id (``"01"``) or several (``["01", "03"]``); empty = all.

    Returns:
        ``{"schema": "prompt_runner.verify/v1", "pass", "prompts", "failures",
        "faults", "reports": [{prompt_id, name, pass, items: [...]}]}``.

    Raises:
        ArgumentError: ``ids`` is not an id or a list of ids.
        UserError: unknown prompt id.
    """
    loaded = packet_arg("verify", packet)
    wanted = prompt_ids("verify", ids)
    known = loaded.ids()
    chosen = [loaded.prompt(normalize_id(i, known)).id for i in wanted] if wanted else known
    reports = []
    failures = faults = 0
    for prompt_id in chosen:
        prompt = loaded.prompt(prompt_id)
        default = prompt.targets[0] if prompt.targets else None
        report = run_contract(
            prompt.contract,
            VerifyContext(
                repos=loaded.repos,
                default_repo=default,
                on_process_start=_verify_registrar(loaded.root, prompt_id),
            ),
        )
        doc = report.to_dict()
        failures += len(report.failures())
        faults += 1 if report.fault is not None else 0
        reports.append({"prompt_id": prompt_id, "name": prompt.name, **doc})
    return {
        "schema": "prompt_runner.verify/v1",
        "pass": failures == 0 and faults == 0,
        "prompts": len(chosen),
        "failures": failures,
        "faults": faults,
        "reports": reports,
    }


def _verify_registrar(root: Path, prompt_id: str) -> Callable[[int], Any]:
    """``verify`` registers each command in the packet's orphan registry while it
    runs, as a run does (runner/orphans.py), so one left by a ``verify`` killed
    with -9 is stopped by the next run. A ``.prompt_runner/`` it had to create
    for that is removed again once empty: ``verify`` leaves no state behind.
    A packet where it cannot be made still verifies, unregistered."""
    layout = StateLayout.of_packet(root)
    state = layout.root
    agents = layout.agents_dir

    def on_start(pid: int) -> Callable[[], None] | None:
        created = not state.exists()
        try:
            if created:
                state.mkdir()
                layout.gitignore.write_bytes(GITIGNORE)
        except OSError:
            return None
        undo = orphans.registrar(
            agents, run_id="verify", prompt_id=prompt_id, kind=orphans.VERIFY_COMMAND
        )(pid)

        def forget() -> None:
            if undo is not None:
                undo()
            if created:
                with contextlib.suppress(OSError):
                    agents.rmdir()
                    if [p.name for p in state.iterdir()] == [".gitignore"]:
                        (state / ".gitignore").unlink()
                        state.rmdir()

        return forget

    return on_start
