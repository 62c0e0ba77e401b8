"""A timed wait blocks on the child's exit instead of polling ``waitpid`` with sleeps.

``proc.run`` with a deadline ends in ``communicate(timeout=...)``, whose wait
after the pipes closed used to sleep 1, 2, 4... ms while the child was a
moment from exiting (about a millisecond per git call).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from prompt_runner import proc

# Closes its pipes at once, then lives on a little: the wait, not the reading, ends the run.
LINGER = "import os, time; os.close(1); os.close(2); time.sleep({})"

needs_pidfd = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open")


@needs_pidfd
def test_the_wait_after_the_pipes_close_does_not_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    naps: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)  # what subprocess's polling wait sleeps with
    res = proc.run([sys.executable, "-c", LINGER.format(0.3)], cwd=tmp_path, timeout_ms=30_000)
    assert res.ok, res
    assert naps == []


@needs_pidfd
def test_a_child_past_its_deadline_after_closing_its_pipes_is_still_ended(tmp_path: Path) -> None:
    res = proc.run(
        [sys.executable, "-c", LINGER.format(60)], cwd=tmp_path, timeout_ms=500, grace_s=0.5
    )
    assert res.timeout == "deadline"
    assert res.duration_ms < 30_000


def test_without_a_pidfd_the_standard_wait_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pidfd(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    res = proc.run([sys.executable, "-c", LINGER.format(0.2)], cwd=tmp_path, timeout_ms=30_000)
    assert res.ok, res
    late = proc.run(
        [sys.executable, "-c", LINGER.format(60)], cwd=tmp_path, timeout_ms=500, grace_s=0.5
    )
    assert late.timeout == "deadline"
