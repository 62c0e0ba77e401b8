"""``watch`` without ``--once`` (the one an unattended run is left with) outlives
a sample that fails -- a manifest caught half-way through an editor's save --
with a line on stderr, and samples on once the manifest is back; its first
sample's error is still the command's (exit 2). A new user's finding: it
exited 2 the moment the manifest was unparseable (cli/watching.py).

Real ``prompt-runner watch`` subprocesses on a real packet and repo."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_a_failed_sample_is_a_line_and_the_watch_goes_on(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    manifest = packet / "prompt_runner_packet.md"
    good = manifest.read_text()
    watch = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "watch", str(packet), "--interval", "1s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().startswith("WATCH ")
        manifest.write_text("garbage: [\n")
        time.sleep(2.5)  # at least one sample while it is broken
        manifest.write_text(good)
        assert watch.stdout.readline().startswith("WATCH ")  # samples again
        assert watch.poll() is None
    finally:
        watch.send_signal(signal.SIGINT)
        _, err = watch.communicate(timeout=30)
    assert watch.returncode == 130, err
    assert "this sample failed" in err and "Traceback" not in err


def test_the_first_sample_s_error_is_the_command_s(tmp_path: Path) -> None:
    proc = cli("watch", tmp_path / "nothing-here", "--interval", "1s", timeout=30)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
