"""A bounded watch that ends unhealthy tells the packet's ``notify:`` (``watch_unhealthy``).

``watch`` is its own process, so it opens a notifier of its own (H-notify's
``open_notifier``) over the packet's resolved ``notify:`` -- profile, manifest
and, for a workspace, the workspace manifest's, as a run merges them. The
notification goes out after the report is on disk and never changes the
verdict: a notifier that fails or hangs is recorded in ``notifications.jsonl``
like a run's, and leaving waits at most ``notify.timeout``. A packet with no
``notify:`` sends nothing and loads nothing heavy.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..state.layout import StateLayout
from .health import describe

Level = tuple[str, Mapping[str, Any] | None]
"""``(file, raw notify)`` of a workspace manifest: the most specific level."""


def notify_unhealthy(
    root: Path, state: StateLayout, report: Mapping[str, Any], *, workspace: Level | None = None
) -> str | None:
    """Emit ``watch_unhealthy`` for ``report`` (an unhealthy watch's) through the
    packet's ``notify:``.

    Args:
        root: the packet directory.
        state: the run's state root (``notifications.jsonl`` is recorded there).
        report: the watch report as written.
        workspace: the workspace manifest's level, when watching a workspace.

    Returns:
        ``None`` when it was handed to the notifier or nothing is configured;
        else why it could not be (a bad ``notify:``: its one sentence).
    """
    # lazy: the packet model and the notifier load only when a watch ends unhealthy
    from ..notify import open_notifier
    from ..packet.loader import load_packet
    from ..packet.notify_config import packet_notify

    try:
        packet = load_packet(root)
        config = packet_notify(packet, workspace=workspace)
    except UserError as exc:
        return str(exc)
    if config is None:
        return None
    last: Mapping[str, Any] = report.get("last_sample") or {}
    why = "; ".join(describe(v) for v in report.get("violations", []))
    with open_notifier(
        config,
        state_root=state.root,
        packet=packet.name,
        packet_root=root,
        run_id=last.get("run_id"),
    ) as notifier:
        notifier.emit(
            "watch_unhealthy",
            prompt=last.get("prompt"),
            reason=f"watch sample {report.get('failed_sample')}: {why}",
            next_step=(
                "look at `prompt-runner status` and the run's logs; a stopped run resumes "
                "with `run --remaining` (or `start --remaining`); the evidence is "
                f"{report.get('evidence')}"
            ),
            details={
                "violations": list(report.get("violations", [])),
                "state": last.get("state"),
                "evidence": report.get("evidence"),
                "report": report.get("report"),
            },
        )
    return None
