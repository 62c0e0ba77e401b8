"""A duration over its key's limit is refused with that key's own limit, written
as a duration -- never another key's limit, never raw milliseconds (real CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.cli import cli
from tests.helpers.packets import FAST, make_packet


def _planned(tmp_path: Path, manifest: dict[str, Any]) -> str:
    packet = make_packet(tmp_path, {"01": {}}, manifest=manifest)
    done = cli("plan", packet, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: demo/prompt_runner_packet.md: "), lines[0]
    return lines[0]


def test_a_notify_timeout_of_days_is_told_its_own_limit(tmp_path: Path) -> None:
    line = _planned(tmp_path, {"notify": {"command": ["true"], "timeout": "100000d"}})
    assert "notify.timeout: '100000d' is not a duration between 0 and 300 s" in line, line
    assert "30 days" not in line and "30d" not in line, line


def test_a_usage_limit_max_wait_over_a_week_is_said_as_durations(tmp_path: Path) -> None:
    recovery = {**FAST, "usage_limit": {"max_wait": "400d"}}
    line = _planned(tmp_path, {"recovery": recovery})
    assert "recovery.usage_limit.max_wait: must be at most 7d (got 400d); give 7d or less" in line
    assert "604800000" not in line and "34560000000" not in line, line


def test_a_usage_limit_margin_in_ms_over_an_hour_is_said_as_durations(tmp_path: Path) -> None:
    recovery = {**FAST, "usage_limit": {"margin": 7_200_000}}
    line = _planned(tmp_path, {"recovery": recovery})
    assert "usage_limit.margin: must be at most 1h (got 7200000 ms, 2h); give 1h or less" in line
