"""``status --workspace --json`` says what the packet's own ``status --json``
says of the same run: a run ``runs/current.json`` still calls ``running`` after
its runner was killed was printed ``run_status: running`` (the file's word)
where ``status`` says ``last_run.status: unknown``; and a prompt whose contract
failed counted ``failed`` (progress.log's word) where ``status`` says
``verification_failed``. Real runs, a real SIGKILL, real git.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import prompt_runner
from prompt_runner.workspace.runspec import run_command
from tests.helpers.cli import cli
from tests.helpers.workspaces import default_prompts, make_workspace


def _packet_status(manifest: Path) -> dict[str, Any]:
    """The packet's own ``status --json``, with the workspace's state root."""
    ws = prompt_runner.load_workspace(manifest)
    cmd = run_command(ws)
    shown = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "status", str(ws.packet_dir), "--json"],
        env=cmd.full_env(os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    doc: dict[str, Any] = json.loads(shown.stdout)
    return doc


def _start(manifest: Path) -> subprocess.Popen[bytes]:
    cmd = run_command(prompt_runner.load_workspace(manifest))
    return subprocess.Popen(
        cmd.argv,
        cwd=cmd.cwd,
        env=cmd.full_env(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_a_killed_run_is_unknown_as_status_says_not_running(tmp_path: Path) -> None:
    prompts = default_prompts()
    prompts["01"]["simulate"] = {
        "attempts": [{"delay_ms": 20_000, "writes": [{"path": "one.txt", "text": "1\n"}]}]
    }
    manifest = make_workspace(tmp_path, prompts=prompts)
    prompt_runner.prepare_workspace(manifest)
    runner = _start(manifest)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            live = prompt_runner.workspace_status(manifest)
            if live["state"] == "running" and live["run_id"]:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the run never came up")
        assert live["run_status"] == "running" and live["run_recorded_status"] is None
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.wait()
    dead = json.loads(cli("status", "--workspace", manifest, "--json").stdout)
    packet = _packet_status(manifest)
    assert packet["last_run"]["status"] == "unknown"
    assert packet["last_run"]["recorded_status"] == "running"
    assert dead["state"] == "unhealthy"
    assert dead["run_status"] == packet["last_run"]["status"] == "unknown"
    assert dead["run_recorded_status"] == "running"


def test_a_failed_prompt_counts_under_the_word_status_shows(tmp_path: Path) -> None:
    prompts = default_prompts()
    prompts["02"]["verify"] = {"files_exist": ["never.txt"]}
    prompts["02"]["recovery"] = {"repair": {"enabled": False}}
    manifest = make_workspace(tmp_path, prompts=prompts)
    prompt_runner.prepare_workspace(manifest)
    assert _start(manifest).wait(timeout=60) == 1
    doc = prompt_runner.workspace_status(manifest)
    packet = _packet_status(manifest)
    shown = {i: r["status"] for i, r in packet["prompts"].items()}
    assert shown == {"01": "completed", "02": "verification_failed"}
    assert doc["prompts"]["by_status"] == {"completed": 1, "verification_failed": 1}
    assert doc["run_status"] == packet["last_run"]["status"] == "failed"
    assert doc["run_recorded_status"] is None and doc["state"] == "failed"
