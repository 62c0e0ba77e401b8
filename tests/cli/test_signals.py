"""G: an interrupting signal exits 128 + its number (SIGINT 130, SIGTERM 143, SIGHUP 129)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
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


@pytest.mark.parametrize(
    ("sig", "name", "code"), [(signal.SIGTERM, "SIGTERM", 143), (signal.SIGINT, "SIGINT", 130)]
)
def test_run_json_prints_its_one_document_when_a_signal_ends_it(
    tmp_path: Path, sig: int, name: str, code: int
) -> None:
    """``run --json`` printed nothing on Ctrl-C or SIGTERM; the one JSON document
    (naming the signal) is promised on stdout, failures included."""
    packet = make_packet(
        tmp_path,
        {
            "01": {"simulate": {"attempts": [{"messages": ["hi"]}]}},
            "02": {"simulate": {"attempts": [{"delay_ms": 30000}]}},
        },
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        log = packet / ".prompt_runner" / "progress.log"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "01:" not in (
            log.read_text() if log.exists() else ""
        ):
            time.sleep(0.05)
        time.sleep(0.3)  # 02's session is under way
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    doc = json.loads(out)  # exactly one document
    assert doc["status"] == "interrupted" and doc["signal"] == name and doc["exit_code"] == code
    assert doc["run_id"] and doc["prompts"] == {"01": "completed", "02": "interrupted"}
    assert name in doc["message"]


def test_verify_json_prints_an_error_document_on_ctrl_c(tmp_path: Path) -> None:
    """Every --json command keeps the promise: an interrupted verify prints an error document."""
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"commands": [{"exec": "sleep", "args": ["30"], "timeout_ms": 60000}]}}},
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "verify", str(packet), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(
            "sleep" in " ".join(c.cmdline()) for c in psutil.Process(proc.pid).children(True)
        ):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    doc = json.loads(out)
    assert doc == {
        "error": "interrupted by SIGINT",
        "exit_code": 130,
        "kind": "Interrupted",
        "signal": "SIGINT",
    }
