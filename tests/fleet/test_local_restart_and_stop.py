"""The local engine's continued and stopped submissions, on real detached runs:

* a submit continuing a killed one starts again (``run --remaining``) a member
  whose runner died meanwhile, instead of recording it ``unhealthy``;
* a member ``fleet stop`` ended before its run was live is ``stopped`` (not
  ``error``), and ``fleet status`` uses the submit's words for the members it
  never started (``skipped``, not ``queued``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import prompt_runner
from prompt_runner.fleet import Fleet
from prompt_runner.fleet.queue import read_queue
from prompt_runner.state.jsonl import read_records
from prompt_runner.state.lock import identity_alive, read_pid_file
from tests.helpers.cli import cli
from tests.helpers.fleets import make_fleet, sleepy_prompts


def submit_process(path: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "fleet", "submit", str(path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )


def wait_for(what: Callable[[], object], proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def runner_pid(fleet: Fleet, index: int) -> int | None:
    ident = read_pid_file(fleet.members[index].workspace.layout.state.run_pid)
    return ident.pid if ident is not None and identity_alive(ident) else None


def completed_prompts(fleet: Fleet, index: int) -> Counter[str]:
    log = fleet.members[index].workspace.layout.state.progress_log
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(line.split(":")[0] for line in lines if ":completed" in line)


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie of a detached run is reaped by init; /proc says whether it is one
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_a_continued_submit_starts_again_a_member_whose_runner_died(tmp_path: Path) -> None:
    """kill -9 of the submit, then of one member's runner mid-packet: the next submit
    follows the live member and starts the dead one again (``--remaining``), so the
    fleet completes, and no prompt is completed twice."""
    path = make_fleet(
        tmp_path, 2, prompts=sleepy_prompts(3, delay_ms=900), fleet={"concurrency": 2}
    )
    fleet = prompt_runner.load_fleet(path)
    first = submit_process(path)
    try:
        wait_for(
            lambda: runner_pid(fleet, 0) and runner_pid(fleet, 1) and completed_prompts(fleet, 1),
            first,
        )
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        dead = runner_pid(fleet, 1)
        assert dead is not None and runner_pid(fleet, 0) is not None
        os.kill(dead, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not pid_gone(dead):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert not read_queue(fleet.layout.queue).closed  # the killed submission is open
    assert completed_prompts(fleet, 1)["03"] == 0  # it died unfinished
    second = cli("fleet", "submit", path, "--json", timeout=180)
    assert second.returncode == 0, (second.stdout, second.stderr)
    result = json.loads(second.stdout)
    assert result["outcome"] == "completed" and result["resumed"] is True, result
    actions = {m["workspace"]: (m["action"], m["state"]) for m in result["members"]}
    one, two = (m.id for m in fleet.members)
    assert actions[two] == ("started", "completed"), actions
    assert actions[one][1] == "completed", actions
    records = read_records(fleet.layout.queue, strict=False)
    resumed_at = next(i for i, r in enumerate(records) if r.get("event") == "resumed")
    after = records[resumed_at:]
    assert [r["member"] for r in after if r.get("event") == "started"] == [two]
    assert not [r for r in after if r.get("event") == "finished" and r["state"] == "unhealthy"]
    for index in (0, 1):
        assert completed_prompts(fleet, index) == Counter({"01": 1, "02": 1, "03": 1})
    assert {r.state for r in prompt_runner.fleet_status(fleet).rows} == {"completed"}


def test_a_continued_submit_does_not_restart_a_member_it_finished(tmp_path: Path) -> None:
    """The other half: a member the killed submission recorded finished (failed here)
    is not started again when it is continued."""
    never = {"verify": {"files_exist": ["never.txt"]}, "recovery": {"repair": {"enabled": False}}}
    prompts = {"01": {"targets": ["target"], "commit": "feat: x", **never}}
    path = make_fleet(tmp_path, 1, prompts=prompts)
    fleet = prompt_runner.load_fleet(path)
    first = prompt_runner.submit_fleet(fleet, poll_s=0.05)
    assert [m.state for m in first.members] == ["failed"]
    # as if that submit had been killed before its last line: the submission is open
    lines = fleet.layout.queue.read_text().splitlines()
    assert json.loads(lines[-1])["event"] == "ended"
    fleet.layout.queue.write_text("\n".join(lines[:-1]) + "\n")
    again = prompt_runner.submit_fleet(fleet, poll_s=0.05)
    assert again.resumed and [(m.state, m.action) for m in again.members] == [("failed", "none")]
    starts = [r for r in read_records(fleet.layout.queue, strict=False) if r["event"] == "started"]
    assert len(starts) == 1


SLOW_START = """\
import os, time
if os.environ.get("SLOW_RUNNER_S"):
    try:
        _argv = open("/proc/self/cmdline", "rb").read().split(b"\\0")
    except OSError:
        _argv = []
    if b"prompt_runner" in _argv and b"run" in _argv:
        time.sleep(float(os.environ["SLOW_RUNNER_S"]))
"""


def test_a_member_stopped_before_it_was_live_is_stopped_in_submit_and_status(
    tmp_path: Path,
) -> None:
    """concurrency 1; each runner takes 30 s to start (a sitecustomize sleeps before
    prompt_runner is imported): ``fleet stop`` while the first one is launched, not live."""
    path = make_fleet(tmp_path, 2, prompts=sleepy_prompts(1), fleet={"concurrency": 1})
    fleet = prompt_runner.load_fleet(path)
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(SLOW_START)
    env = {
        **os.environ,
        "SLOW_RUNNER_S": "30",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(slow), os.environ.get("PYTHONPATH")])),
    }
    first = fleet.members[0].workspace
    driver = submit_process(path, env)
    try:
        wait_for(lambda: first.layout.supervisor.record.exists(), driver)
        assert runner_pid(fleet, 0) is None  # launched, not live
        stopped = cli("fleet", "stop", path, "--json", "--grace", "5", timeout=60)
        assert stopped.returncode == 0, (stopped.stdout, stopped.stderr)
        out, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 1, err
    result = json.loads(out)
    assert result["outcome"] == "stopped", result
    submitted = [(m["workspace"], m["state"]) for m in result["members"]]
    one, two = (m.id for m in fleet.members)
    assert submitted == [(one, "stopped"), (two, "skipped")], result["members"]
    rows = prompt_runner.fleet_status(fleet).rows
    assert [(r.workspace, r.state) for r in rows] == submitted
    assert rows[1].reason == "stopped" and rows[1].host is None
    shown = cli("fleet", "status", path)
    assert "error" not in shown.stdout and "queued" not in shown.stdout, shown.stdout
    # the next submit resumes both
    again = prompt_runner.submit_fleet(fleet, poll_s=0.05)
    assert again.outcome == "completed" and [m.state for m in again.members] == ["completed"] * 2
