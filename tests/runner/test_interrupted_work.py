"""Work a killed runner left uncommitted is committed with its prompt by the next run.

A runner killed after the session wrote its files but before the commit (here:
while a slow verify command runs) leaves them dirty. The next run must not take
them for the user's own changes: the prompt recorded which paths were dirty
when it started, so what is dirty now and was not then is its work, and the
resumed prompt commits it -- including files its contract does not name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import make_packet

SID = "crash-1"
INIT = json.dumps({"type": "system", "subtype": "init", "session_id": SID, "model": "m"})
RESULT = json.dumps(
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "done",
        "session_id": SID,
        "total_cost_usd": 0.0,
    }
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_a_killed_runner_s_uncommitted_work_is_committed_with_its_prompt(tmp_path: Path) -> None:
    flag = tmp_path / "verify-seconds"
    flag.write_text("60")
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "verify": {
                    "files_exist": ["a.txt"],
                    "commands": [{"run": f"sleep $(cat {flag})", "timeout_ms": 120_000}],
                },
            }
        },
        manifest={"profile": None, "provider": "claude", "model": None},
    )
    repo = tmp_path / "repo"
    (repo / "notes.txt").write_text("the user's own\n")
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    record = tmp_path / "record.jsonl"
    out = INIT + "\n" + RESULT + "\n"
    config = write_config(
        tmp_path / "fake.json",
        record,
        [{"stdout": out, "writes": {"a.txt": "A\n", "helper.py": "x = 1\n"}}, {"stdout": out}],
    )
    env = {**os.environ, CONFIG_ENV: str(config)}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet)]
    runner = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (repo / "helper.py").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the session is over; the runner sits in the slow verify command
    assert runner.poll() is None
    runner.kill()
    runner.wait(timeout=30)
    subprocess.run(["pkill", "-f", "sleep 60"], check=False)

    flag.write_text("0")
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "its interrupted run left uncommitted work (a.txt, helper.py)" in again.stdout
    assert len(read_records(record)) == 2  # the resumed prompt ran a session of its own
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == ["a.txt", "helper.py"]
    assert git(repo, "status", "--porcelain").splitlines() == ["?? notes.txt"]
