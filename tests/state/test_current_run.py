"""runs/current.json: a damaged file is the same error for every reader."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.control import client
from prompt_runner.errors import StateError
from prompt_runner.state.current_run import current_run_id, read_current_run, write_current_run
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.store import FileStore, read_state
from tests.helpers.packets import make_packet


def test_round_trip_and_absence(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path)
    assert read_current_run(layout.current_run) is None
    assert current_run_id(layout.current_run) is None
    write_current_run(layout.current_run, {"run_id": "R1", "status": "running"})
    assert read_current_run(layout.current_run) == {
        "schema_version": 1,
        "run_id": "R1",
        "status": "running",
    }
    assert current_run_id(layout.current_run) == "R1"


@pytest.mark.parametrize("content", ["{not json", "[1]", ""])
def test_every_reader_raises_the_same_error(tmp_path: Path, content: str) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    layout = StateLayout.of_packet(packet)
    FileStore(layout.root).write_current_run({"run_id": "R1", "status": "failed"})
    layout.current_run.write_text(content, encoding="utf-8")
    readers: dict[str, Callable[[], Any]] = {
        "read_current_run": lambda: read_current_run(layout.current_run),
        "FileStore.read_current_run": FileStore(layout.root).read_current_run,
        "read_state": lambda: read_state(layout.root),
        "client.current_run_id": lambda: client.current_run_id(layout.root),
        "client.unfinished_run_id": lambda: client.unfinished_run_id(layout.root),
    }
    messages = {}
    for name, read in readers.items():
        with pytest.raises(StateError) as info:
            read()
        messages[name] = str(info.value)
    assert len(set(messages.values())) == 1, messages
    sentence = messages["read_current_run"]
    assert str(layout.current_run) in sentence and "delete it" in sentence
    for argv in (
        ["status", str(packet), "--json"],
        ["control", "steer", "hi", "--packet", str(packet)],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "prompt_runner", *argv], capture_output=True, text=True
        )
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert sentence in proc.stderr and "Traceback" not in proc.stderr
