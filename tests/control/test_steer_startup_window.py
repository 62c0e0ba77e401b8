"""A run that holds the packet (``run.pid``) but has not recorded itself yet.

``prompt-runner run`` takes ``.prompt_runner/run.pid`` and its work trees'
locks first, and only then writes ``runs/current.json`` and its control
snapshot. A ``control steer`` or ``control status`` in that window used to be
refused ("no live or unfinished run to steer", even "keeps its state
elsewhere"; "this packet has no recorded run"): they now wait, bounded, for
the run to record itself, and say truthfully that a run (pid N) is starting
when the bound passes.

Real runs, real CLI processes, real git. The window is widened with a ``git``
on ``PATH`` that, once, sleeps before running the real git while the run
holds both locks and has recorded nothing (the runner's ``git status`` of its
repos); a holder that never records is a child process holding the lock
through the library's :class:`RunLock`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.helpers.packets import make_packet

STARTING = "is starting and has not recorded itself yet"
ELSEWHERE = "keeps its state elsewhere"


def _packet(tmp_path: Path, delay_ms: int = 1500) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: one",
                "simulate": {
                    "attempts": [
                        {
                            "messages": ["working"],
                            "delay_ms": delay_ms,
                            "writes": [{"path": "f.txt", "text": "x\n"}],
                        }
                    ]
                },
                "verify": {"files_exist": ["f.txt"]},
            }
        },
    )


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _slow_git(tmp_path: Path, state: Path, repo_lock: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` sleeps 3 s once, while ``state/run.pid`` and
    ``repo_lock`` exist and ``state/runs/current.json`` does not; and the file it
    touches as it starts sleeping."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    window = tmp_path / "window"
    slept = tmp_path / "slept"
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f"if [ -e '{state}/run.pid' ] && [ -e '{repo_lock}' ] "
        f"&& [ ! -e '{state}/runs/current.json' ] && [ ! -e '{slept}' ]; then\n"
        f"  touch '{slept}'; touch '{window}'; sleep 3\n"
        "fi\n"
        f"exec '{real}' \"$@\"\n"
    )
    script.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env, window


def _wait_for(path: Path, runner: subprocess.Popen[Any], what: str) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert runner.poll() is None, f"{what}: the runner exited"
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def _stop(*procs: subprocess.Popen[Any]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_a_steer_and_a_status_sent_before_the_run_recorded_itself_reach_it(
    tmp_path: Path,
) -> None:
    packet = _packet(tmp_path)
    state = packet / ".prompt_runner"
    env, window = _slow_git(tmp_path, state, tmp_path / "repo" / ".git" / "prompt-runner.pid")
    runner = _cli("run", str(packet), env=env)
    steer = status = None
    try:
        _wait_for(window, runner, "the run never held the packet before recording itself")
        assert not (state / "runs" / "current.json").exists()  # the window: nothing recorded
        steer = _cli("control", "steer", str(packet), "look at f.txt", "--json")
        status = _cli("control", "status", str(packet), "--json")
        s_out, s_err = steer.communicate(timeout=60)
        t_out, t_err = status.communicate(timeout=60)
        r_out, _ = runner.communicate(timeout=120)
    finally:
        _stop(runner, *(p for p in (steer, status) if p is not None))
    assert steer.returncode == 0, s_err
    assert ELSEWHERE not in s_err
    receipt = json.loads(s_out)
    assert (receipt["outcome"], receipt["live"]) == ("queued", True)
    assert status.returncode == 0, t_err
    run_id = json.loads((state / "runs" / "current.json").read_text())["run_id"]
    assert json.loads(t_out)["run_id"] == run_id
    assert runner.returncode == 0, r_out
    assert "Starting run" in r_out
    log = [json.loads(line) for line in (state / "control" / "log.jsonl").read_text().splitlines()]
    entry = next(e for e in log if e.get("request") == receipt["request"])
    assert (entry["command"], entry["outcome"], entry["run_id"]) == ("steer", "applied", run_id)


HOLDER = """\
import sys, time
from pathlib import Path
from prompt_runner.state.lock import RunLock

locks = [RunLock(Path(p)) for p in sys.argv[2:]]
for lock in locks:
    lock.acquire()
if sys.argv[1]:  # a run that recorded itself and ended: current.json after run.pid
    Path(sys.argv[1]).parent.mkdir(parents=True, exist_ok=True)
    Path(sys.argv[1]).write_text(
        '{"run_id": "r1", "status": "completed", "packet": "demo", "targets": ["01"]}'
    )
print("held", flush=True)
time.sleep(120)
"""


def _holder(tmp_path: Path, current: str, *locks: Path) -> subprocess.Popen[str]:
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    proc = subprocess.Popen(
        [sys.executable, str(script), current, *map(str, locks)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "held\n"
    return proc


def test_a_runner_that_never_records_itself_is_said_to_be_starting(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    state = packet / ".prompt_runner"
    holder = _holder(
        tmp_path, "", state / "run.pid", tmp_path / "repo" / ".git" / "prompt-runner.pid"
    )
    steer = status = amend = None
    try:
        started = time.monotonic()
        steer = _cli("control", "steer", str(packet), "hello")
        status = _cli("control", "status", str(packet), "--json")
        amend = _cli("control", "amend", str(packet), "01", "--add-file", "g.txt", "--reason", "r")
        s_out, s_err = steer.communicate(timeout=60)
        t_out, t_err = status.communicate(timeout=60)
        a_out, a_err = amend.communicate(timeout=60)
        waited = time.monotonic() - started
    finally:
        _stop(holder, *(p for p in (steer, status, amend) if p is not None))
    sentence = f"a run (pid {holder.pid}) {STARTING}"
    assert steer.returncode == 2, (s_out, s_err)
    assert sentence in s_err and "try `control steer` again" in s_err
    assert ELSEWHERE not in s_err
    assert status.returncode == 2, (t_out, t_err)
    assert sentence in t_err and "no recorded run" not in t_err
    assert amend.returncode == 2, (a_out, a_err)
    assert sentence in a_err and "try `control amend` again" in a_err
    assert waited >= 9  # the bound (10 s) was waited, not refused at once
    log = [json.loads(line) for line in (state / "control" / "log.jsonl").read_text().splitlines()]
    assert sorted((e["command"], e["outcome"]) for e in log) == [
        ("amend", "rejected"),
        ("steer", "rejected"),
    ]
    assert all(sentence in e["reason"] for e in log)
    assert not list((state / "control" / "requests").glob("*.json"))
    assert not (state / "amendments").exists() or not any((state / "amendments").iterdir())


def test_the_packets_own_runner_holding_its_repo_is_never_elsewhere(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    state = packet / ".prompt_runner"
    holder = _holder(
        tmp_path,
        str(state / "runs" / "current.json"),
        state / "run.pid",
        tmp_path / "repo" / ".git" / "prompt-runner.pid",
    )
    try:
        steer = subprocess.run(
            [sys.executable, "-m", "prompt_runner", "control", "steer", str(packet), "hi"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        _stop(holder)
    assert steer.returncode == 2, steer.stdout
    assert "there is no live or unfinished run to steer" in steer.stderr
    assert ELSEWHERE not in steer.stderr
    assert STARTING not in steer.stderr
