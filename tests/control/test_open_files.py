"""A finished run leaves none of the control plane's files open (the store keeps
its log and event stream open while the run appends)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from prompt_runner import api
from tests.helpers.packets import make_packet


def _open_under(directory: Path) -> list[str]:
    fds = Path("/proc/self/fd")
    names = []
    for fd in os.listdir(fds):
        try:
            target = os.readlink(fds / fd)
        except OSError:
            continue
        if target.startswith(str(directory)):
            names.append(target)
    return names


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_finished_run_leaves_no_control_file_open(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    for _ in range(2):
        result = api.run(
            packet, stream=io.StringIO(), default_runtime_store="file", no_commit=True, new_run=True
        )
        assert result.status == "completed"
    assert (packet / ".prompt_runner" / "control" / "events.jsonl").stat().st_size > 0
    assert _open_under(packet / ".prompt_runner") == []
