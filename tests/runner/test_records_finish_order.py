"""The run's end is recorded in ``state.json``, then the control snapshot, and
last in ``runs/current.json`` (runner/finishing.finish_run): whoever reads
``current.json`` saying the run ended finds the snapshot saying so too, never a
stale ``running`` one. A real run on the simulated provider with a file store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.state import store as store_module
from tests.helpers.packets import make_packet


@pytest.mark.parametrize(
    ("script", "status", "shown"),
    [
        ({"writes": [{"path": "a.txt", "text": "a"}]}, "completed", "completed"),
        ({"error": {"kind": "approval_denied", "message": "denied"}}, "failed", "failed"),
    ],
)
def test_the_snapshot_records_the_end_before_current_json_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: dict[str, Any], status: str, shown: str
) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"simulate": {"attempts": [script]}, "verify": {"files_exist": ["a.txt"]}}},
    )
    state = packet / ".prompt_runner"
    seen: list[tuple[Any, Any, Any]] = []
    original = store_module.FileStore.write_current_run

    def spy(self: store_module.FileStore, doc: dict[str, Any]) -> None:
        if doc.get("finished_at"):
            snap = json.loads((state / "control" / "snapshot.json").read_text())
            summary = json.loads(self.state_path.read_text())
            seen.append((snap["status"], snap["run_id"], summary["prompts"]["01"]["status"]))
        original(self, doc)

    monkeypatch.setattr(store_module.FileStore, "write_current_run", spy)
    result = api.run(packet, runtime_store="file", committer="noop")
    assert result.status == status
    current = json.loads((state / "runs" / "current.json").read_text())
    assert current["status"] == status
    assert seen == [(shown, result.run_id, status)]
