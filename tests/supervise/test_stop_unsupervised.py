"""``stop`` on a run that was not started by ``start``: a ``run`` that a script
or a harness started shares its parent's process group and session, so the
runner leads neither. ``stop`` must still find the runner itself (its
``run.pid``) and its children, end them and report the truth -- it once said
"no process of the run is left" with the runner and its verify command alive
(supervise/members.py, supervise/stop.py).

Real processes: ``prompt-runner run`` as a child of this test (same group), a
verify command that hangs in its own group with a grandchild, ``prompt-runner
stop`` as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.procs import alive, wait_for
from tests.runner.test_verify_command_orphans import Hanging


def test_stop_ends_a_runner_that_shares_its_parent_s_group(
    tmp_path: Path, started: list[int]
) -> None:
    setup = Hanging(tmp_path, started)
    runner = setup.start("run")  # this process's group and session
    started.append(runner.pid)
    pids = setup.pids()
    assert os.getpgid(runner.pid) == os.getpgid(0) != runner.pid
    stop = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "stop", str(setup.packet), "--grace", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stop.returncode == 0, stop.stdout + stop.stderr
    out, err = runner.communicate(timeout=30)
    # SIGTERM, with the grace a group gets: the runner ended the verify command
    # and recorded the prompt itself, it was not SIGKILLed at once
    assert runner.returncode == 128 + 15, out + err
    assert wait_for(lambda: not any(alive(p) for p in pids), 10), f"survivors: {pids}"
    assert f"pid {runner.pid} killed with SIGTERM" in stop.stdout, stop.stdout
    assert "no process of the run is left" in stop.stdout
    status = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "status", str(setup.packet), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(status.stdout)["prompts"]["01"]["status"] == "interrupted"


def test_stop_with_json_lists_the_runner_among_what_it_ended(
    tmp_path: Path, started: list[int]
) -> None:
    setup = Hanging(tmp_path, started)
    runner = setup.start("run")
    started.append(runner.pid)
    setup.pids()
    stop = subprocess.run(
        [
            sys.executable,
            "-m",
            "prompt_runner",
            "stop",
            str(setup.packet),
            "--grace",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    runner.communicate(timeout=30)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    report = json.loads(stop.stdout)
    runner_entry = [e for e in report["ended"] if e["pid"] == runner.pid]
    assert runner_entry and runner_entry[0]["why"] == "runner", report
    assert report["ok"] is True and report["left"] == [], report
    assert report["stopped_by"] in ("SIGTERM", "SIGKILL"), report
