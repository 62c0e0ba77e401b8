"""G: an interrupting signal exits 128 + its number (SIGINT 130, SIGTERM 143, SIGHUP 129)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)]
)
def test_signal_exit_code_is_128_plus_the_signal(tmp_path: Path, sig: int, code: int) -> None:
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 30000}]}}})
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pid_file = packet / ".prompt_runner" / "run.pid"
        deadline = time.monotonic() + 20
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists()
        time.sleep(0.3)
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert "Traceback" not in err
