"""A bounded watch ended by SIGTERM or SIGHUP writes its report as Ctrl-C does
(``ended: interrupted``, naming the signal) and exits ``128 + signum``: a real
``watch --for`` subprocess, a real signal."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.state.layout import StateLayout
from tests.helpers.packets import make_packet


def _wait_for_samples(acceptance: Path, proc: subprocess.Popen[str]) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [p for p in acceptance.glob("watch-*.jsonl") if p.read_text().strip()]
        if found:
            return found[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the watch took no sample")


@pytest.mark.parametrize(
    ("signum", "name"),
    [(signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP"), (signal.SIGINT, "SIGINT")],
)
def test_a_signal_ends_the_watch_with_its_report(
    tmp_path: Path, signum: signal.Signals, name: str
) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    acceptance = StateLayout.of_packet(packet).acceptance_dir
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "watch", str(packet), "--for", "10m"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("WATCH ")  # the first sample is reported
        samples = _wait_for_samples(acceptance, proc)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signum, (out, err)
    assert "Traceback" not in err
    report = json.loads(
        samples.with_name(samples.name[: -len(".jsonl")] + ".report.json").read_text()
    )
    assert report["ended"] == "interrupted" and report["passed"] is False
    assert report["signal"] == name and report["finished_at"]
    assert report["sample_count"] == 1 and report["last_sample"]["seq"] == 1
