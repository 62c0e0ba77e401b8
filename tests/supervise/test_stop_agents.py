"""``stop`` while a real agent process tree is mid-session.

The agent is a fake ``claude`` CLI (tests/helpers/fake_cli.py) that hangs,
ignores SIGTERM and forks a grandchild that ignores SIGTERM too; its shell
tool also leaves a process that calls ``setsid`` (out of every process group
of the run) and ignores TERM, INT and HUP. ``stop`` must end them all and
say so; the prompt reads ``interrupted`` and ``start`` resumes it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import NOREPAIR, make_packet
from tests.supervise._helpers import (
    alive,
    cli,
    completed_ids,
    marked_pids,
    record,
    run_finished,
    wait_for,
)

INIT = json.dumps({"type": "system", "subtype": "init", "session_id": "s-1", "model": "m"})
RESULT = json.dumps(
    {"type": "result", "subtype": "success", "is_error": False, "session_id": "s-1"}
)
ESCAPER = """
import os, signal, sys, time
os.setsid()
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
with open(sys.argv[1], "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(300)
"""


def _setup(tmp_path: Path) -> tuple[Path, dict[str, str], Path, Path]:
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    escaper = tmp_path / "escaper.py"
    escaper.write_text(ESCAPER)
    escaped_pid = tmp_path / "escaped.pid"
    hang: dict[str, Any] = {
        "stdout": INIT + "\n",
        "hang": True,
        "ignore_sigterm": True,
        "grandchild": True,
        "shell": f"'{sys.executable}' '{escaper}' '{escaped_pid}' </dev/null >/dev/null 2>&1 &",
    }
    done = {"stdout": f"{INIT}\n{RESULT}\n", "writes": {"done.txt": "done"}}
    record_file = tmp_path / "record.jsonl"
    config = write_config(tmp_path / "fake.json", record_file, [hang, done])
    packet = make_packet(
        tmp_path,
        {"01": {"commit": "feat: 01", "verify": {"files_exist": ["done.txt"]}}},
        manifest={"profile": None, "provider": "claude", "model": None, "recovery": NOREPAIR},
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    return packet, env, record_file, escaped_pid


def test_stop_ends_the_agent_its_grandchild_and_an_escaped_process_then_start_resumes(
    tmp_path: Path,
) -> None:
    packet, env, record_file, escaped_pid = _setup(tmp_path)
    started = cli("start", packet, env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    agent = wait_for(
        lambda: (r := read_records(record_file)) and "grandchild_pid" in r[0] and r[0],
        30,
        "the agent",
    )
    escaped = int(wait_for(lambda: escaped_pid.exists() and escaped_pid.read_text(), 30, "setsid"))
    runner = record(packet)["pid"]
    tree = [runner, agent["pid"], agent["grandchild_pid"], escaped]
    assert all(alive(pid) for pid in tree)
    assert os.getsid(escaped) == escaped  # out of the runner's and the agent's sessions
    marker = record(packet)["marker"]
    assert set(tree) <= set(marked_pids(marker))

    stopped = cli("stop", packet, "--grace", "10", "--json", env=env)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert marked_pids(marker) == []  # /proc shows no process of the run
    assert not any(alive(pid) for pid in tree)
    doc = json.loads(stopped.stdout)
    assert doc["ok"] is True and doc["left"] == []
    assert doc["request_outcome"] == "applied"
    how = {e["pid"]: e["how"] for e in doc["ended"]}
    assert how[runner] == "exited"  # it stopped on the request
    assert how[escaped] == "SIGKILL"  # ignores TERM: had to be killed
    assert doc["stopped_by"] == "SIGKILL"
    assert set(tree) <= set(how)
    status = json.loads(cli("status", packet, "--json", env=env).stdout)
    assert status["prompts"]["01"]["status"] == "interrupted"
    saved = json.loads(Path(packet / ".prompt_runner/supervisor/record.json").read_text())
    assert saved["stop"]["stopped_by"] == "SIGKILL" and saved["stopped_at"]

    again = cli("start", packet, "--remaining", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    wait_for(lambda: run_finished(packet), 60, "the resumed run")
    assert completed_ids(packet) == ["01"]
    assert (packet.parent / "repo" / "done.txt").read_text() == "done"
    human = cli("stop", packet, env=env)
    assert human.returncode == 0 and "Nothing to stop" in human.stdout
