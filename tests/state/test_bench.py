"""The state-writes benchmark runs and shows the store beating the naive rewrite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "state_writes.py"


def test_bench_runs_small_and_reports_a_ratio() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--prompts", "12", "--attempts", "3"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    match = re.search(r"bytes ([0-9.]+)x", done.stdout)
    assert match is not None, done.stdout
    assert float(match.group(1)) > 3.0  # even at 12 prompts the naive rewrite is far worse
