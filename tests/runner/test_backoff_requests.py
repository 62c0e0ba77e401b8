"""Control requests that arrive while the runner waits out a retry's backoff are
decided then, not when the retry's session starts; a ``stop`` ends the run at
once (runner/next_session.wait_before_retry; a new user's finding: with a 30 s
backoff a view and a stop sat in ``requests/`` until the retry began).

Real ``prompt-runner run`` and ``control`` subprocesses on a real packet."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

BACKOFF_MS = 60_000


def backing_off(tmp_path: Path) -> tuple[Path, subprocess.Popen[str]]:
    prompt = {
        "verify": {"files_exist": ["a.txt"]},
        "simulate": {
            "attempts": [
                {"error": {"kind": "provider_capacity", "message": "529 overloaded"}},
                {"writes": [{"path": "a.txt", "text": "a\n"}]},
            ]
        },
    }
    retry = {"base_delay_ms": BACKOFF_MS, "max_delay_ms": BACKOFF_MS, "jitter": False}
    packet = make_packet(tmp_path, {"01": prompt}, manifest={"recovery": {"retry": retry}})
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = ""
    assert runner.stdout is not None
    for line in runner.stdout:  # wait until the backoff has begun
        seen += line
        if "before retrying" in line:
            return packet, runner
    raise AssertionError(f"no backoff began: {seen}")


def outcomes(packet: Path) -> list[dict[str, object]]:
    proc = cli("control", "log", packet, "--json")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_a_view_request_during_a_backoff_is_decided_at_once(tmp_path: Path) -> None:
    packet, runner = backing_off(tmp_path)
    try:
        sent = cli("control", "view", packet, "--log-mode", "verbose")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        deadline = time.monotonic() + 5  # the backoff is 60 s
        while time.monotonic() < deadline and not list(
            (packet / ".prompt_runner" / "control" / "outcomes").glob("*")
        ):
            time.sleep(0.05)
        requests = packet / ".prompt_runner" / "control" / "requests"
        assert not [p for p in requests.iterdir() if not p.name.startswith(".")], "undecided"
        assert runner.poll() is None  # still backing off
    finally:
        runner.kill()
        runner.communicate()


def test_a_stop_during_a_backoff_ends_the_run_at_once(tmp_path: Path) -> None:
    packet, runner = backing_off(tmp_path)
    started = time.monotonic()
    stop = cli("stop", packet, "--grace", "20")
    took = time.monotonic() - started
    out, _ = runner.communicate(timeout=30)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    assert "not read" not in stop.stdout + stop.stderr
    assert runner.returncode == 143, out  # stopped on the request
    assert took < 10, f"stop took {took:.1f} s of a {BACKOFF_MS / 1000:.0f} s backoff"
    status = json.loads(cli("status", packet, "--json").stdout)
    assert status["prompts"]["01"]["status"] == "interrupted"
