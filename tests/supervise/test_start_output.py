"""``start`` of a run that ends at once (nothing left to do) does not tell you to
follow or stop it: it says where its output is and how to see how it ended."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_a_start_with_nothing_to_do_offers_no_follow_or_stop(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert cli("run", packet, cwd=tmp_path).returncode == 0
    started = cli("start", packet, "--remaining", cwd=tmp_path, timeout=90)
    assert started.returncode == 0, (started.stdout, started.stderr)
    assert "exit 0" in started.stdout
    assert "Follow it" not in started.stdout and "Stop it" not in started.stdout
    assert "Its output: " in started.stdout and "prompt-runner status " in started.stdout
