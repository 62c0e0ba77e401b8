"""A prompt name holding a newline stays on its line in ``list`` (new user t7 #13)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.packets import make_packet


def test_a_newline_in_a_prompt_name_stays_on_its_list_line(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"name": "first\nsecond", "verify": {}}})
    res = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "list", str(packet)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines() if line.startswith("  ")]
    assert len(rows) == 1, res.stdout
    assert "first\\x0asecond" in rows[0]
