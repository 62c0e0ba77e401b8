"""After kill -9 of a runner mid-verification, the next run stops the verify
command's descendants that left its process group (``setsid``), found by the
same /proc member scan ``stop`` uses."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PROC = Path("/proc")


def _sleepers(marker: str) -> list[int]:
    """Live ``sleep <marker>`` processes, by /proc."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if argv[:2] == [b"sleep", marker.encode()] and state != "Z":
                found.append(int(entry.name))
    return found


def _wait(predicate: object, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_resume_stops_a_setsid_grandchild_of_a_verify_command(tmp_path: Path) -> None:
    escaped, waits = "307", "41"  # unusual durations name this test's sleeps
    once = tmp_path / "verified-once"  # the resumed run's verification passes at once
    script = f"[ -e {once} ] && exit 0; touch {once}; setsid sleep {escaped} & sleep {waits}"
    command = {"exec": "sh", "args": ["-c", script]}
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"commands": [{**command, "timeout_ms": 120_000}]}}},
    )
    state_dir = packet / ".prompt_runner"
    try:
        assert cli("start", packet).returncode == 0
        record = json.loads((state_dir / "supervisor" / "record.json").read_text())
        assert _wait(lambda: _sleepers(escaped) and _sleepers(waits))
        assert _wait(lambda: any((state_dir / "agents").glob("*.json")))
        grandchild = _sleepers(escaped)[0]
        stat = (PROC / str(grandchild) / "stat").read_text().rsplit(")", 1)[1].split()
        assert int(stat[3]) == grandchild  # its own session: out of the command's group
        os.kill(record["pid"], signal.SIGKILL)
        resumed = cli("run", packet, "--remaining")
        assert "stopped verify command pid" in resumed.stdout, resumed.stdout + resumed.stderr
        assert _wait(lambda: not _sleepers(escaped), 10), "the setsid grandchild survived"
        assert not _sleepers(waits)
    finally:
        for pid in _sleepers(escaped) + _sleepers(waits):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
