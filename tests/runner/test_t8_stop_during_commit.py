"""``stop --after-prompt`` sent while a commit hook runs ends the run after that
prompt, not after the next one (new user t8 #4).

No session ticks while a prompt is committed, so the request waited until the
next prompt's first look at the requests and was applied to it: prompt 02 ran,
was committed (and would have been pushed), and the run stopped after it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.packets import make_packet
from tests.runner.test_records2_stages import _blocking, _wait_for, hook


def _prompt(name: str) -> dict[str, object]:
    return {
        "commit": f"feat: {name}",
        "simulate": {"attempts": [{"writes": [{"path": f"{name}.txt", "text": "Hello\n"}]}]},
        "verify": {"contains": [{"path": f"{name}.txt", "text": "Hello"}]},
    }


def test_a_stop_after_prompt_sent_during_a_commit_hook_applies_to_that_prompt(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": _prompt("a"), "02": _prompt("b"), "03": _prompt("c")})
    repo = tmp_path / "repo"
    started, release = tmp_path / "hook-started", tmp_path / "release"
    hook(repo, _blocking(started, release))  # every commit waits for release (01's first)
    cli = [sys.executable, "-m", "prompt_runner"]
    runner = subprocess.Popen(
        [*cli, "run", str(packet)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    stopper = None
    try:
        _wait_for(started, runner)  # 01's commit hook is running
        stopper = subprocess.Popen(
            [*cli, "stop", str(packet), "--after-prompt", "--grace", "60"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        requests = packet / ".prompt_runner" / "control" / "requests"
        deadline = time.monotonic() + 30
        while not any(requests.glob("*.json")):
            assert time.monotonic() < deadline, "stop wrote no request"
            time.sleep(0.05)
        release.touch()
        out, _ = runner.communicate(timeout=60)
        assert stopper.wait(timeout=60) == 0
    finally:
        release.touch()
        for proc in (runner, stopper):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "✓ 01 completed" in out, out
    assert "▶ 02" not in out and "02 completed" not in out, out
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert "feat: a" in log and "feat: b" not in log, log
