"""The local engine on real detached runs: bare repositories on disk as remotes, the
simulated provider, real `fleet submit` processes (and a kill -9 of one)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

import prompt_runner
from prompt_runner.fleet import Fleet
from prompt_runner.fleet.queue import read_queue
from prompt_runner.state.jsonl import read_records
from prompt_runner.state.lock import identity_alive, read_pid_file
from tests.helpers.cli import cli
from tests.helpers.fleets import commits_on, make_fleet, sleepy_prompts


def live_count(fleet: Fleet) -> int:
    """How many members have a live runner now (run.pid's identity)."""
    n = 0
    for m in fleet.members:
        ident = read_pid_file(m.workspace.layout.state.run_pid)
        n += ident is not None and identity_alive(ident)
    return n


class Sampler:
    """Counts the live members every 20 ms on a thread; ``peak`` is the most seen at once."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, live_count(self.fleet))
            self.samples += 1

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def completions(fleet: Fleet) -> dict[str, Counter[str]]:
    """Member -> prompt id -> how many ``completed`` lines its progress.log holds."""
    out: dict[str, Counter[str]] = {}
    for m in fleet.members:
        log = m.workspace.layout.state.progress_log
        lines = log.read_text().splitlines() if log.exists() else []
        out[m.id] = Counter(line.split(":")[0] for line in lines if ":completed" in line)
    return out


def work_commits(fleet: Fleet) -> dict[str, list[str]]:
    """Member -> the subjects of its target clone's work-branch commits after main."""
    out = {}
    for m in fleet.members:
        clone = m.workspace.clone("target")
        out[m.id] = commits_on(clone, f"main..{m.workspace.commits.branch}")
    return out


def submit_process(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "fleet", "submit", str(path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finished(fleet: Fleet) -> int:
    return sum(
        1 for r in read_records(fleet.layout.queue, strict=False) if r.get("event") == "finished"
    )


def test_twelve_members_four_at_a_time_survive_a_killed_submit(tmp_path: Path) -> None:
    """12 workspaces x 3 simulated prompts, concurrency 4: never more than 4 run at once;
    kill -9 of `fleet submit` halfway, then submit again: every member completes, no
    prompt is completed twice, each work branch holds exactly its 3 commits."""
    path = make_fleet(tmp_path, 12, prompts=sleepy_prompts(3, delay_ms=250))
    fleet = prompt_runner.load_fleet(path)
    with Sampler(fleet) as sampler:
        first = submit_process(path)
        deadline = time.monotonic() + 120
        # halfway: some members finished, a wave of others live mid-packet
        while not (finished(fleet) >= 4 and live_count(fleet) >= 3):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        alive_after_kill = {
            m.id
            for m in fleet.members
            if (i := read_pid_file(m.workspace.layout.state.run_pid)) and identity_alive(i)
        }
        assert alive_after_kill  # the detached runs outlive the killed submit
        queue = read_queue(fleet.layout.queue)
        assert not queue.closed and queue.submission == 1  # the killed submission is open
        second = cli("fleet", "submit", path, "--json", timeout=180)
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout)
    assert result["outcome"] == "completed" and result["resumed"] is True
    assert result["submission"] == 1
    assert sampler.samples > 50 and sampler.peak <= 4, sampler.peak
    assert sampler.peak == 4  # the pool was used, not run one by one
    # the runs the killed submit had launched were followed (or had ended by then), never
    # started again -- one it was launching as it died went live after it: followed too
    records = read_records(fleet.layout.queue, strict=False)
    resumed_at = next(i for i, r in enumerate(records) if r.get("event") == "resumed")
    started_again = {r["member"] for r in records[resumed_at:] if r.get("event") == "started"}
    adopted = {m["workspace"] for m in result["members"] if m["action"] == "adopted"}
    assert alive_after_kill.isdisjoint(started_again) and adopted.isdisjoint(started_again)
    starts = Counter(r["member"] for r in records if r.get("event") == "started")
    assert set(starts) <= {m.id for m in fleet.members} and max(starts.values()) == 1
    for member, counts in completions(fleet).items():
        assert counts == Counter({"01": 1, "02": 1, "03": 1}), (member, counts)
    for member, subjects in work_commits(fleet).items():
        assert subjects == ["feat: step 3", "feat: step 2", "feat: step 1"], member
    status = prompt_runner.fleet_status(fleet)
    assert {r.state for r in status.rows} == {"completed"}
    assert all((r.completed, r.total, r.attempts) == (3, 3, 3) for r in status.rows)
    assert all(r.host for r in status.rows)
    # a third submit: nothing is left to run
    again = prompt_runner.submit_fleet(fleet)
    assert again.outcome == "completed" and again.submission == 2
    assert {m.action for m in again.members} == {"none"}


def test_a_second_submit_while_one_drives_starts_nothing(tmp_path: Path) -> None:
    path = make_fleet(
        tmp_path, 3, prompts=sleepy_prompts(2, delay_ms=400), fleet={"concurrency": 2}
    )
    fleet = prompt_runner.load_fleet(path)
    first = submit_process(path)
    try:
        deadline = time.monotonic() + 60
        while live_count(fleet) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        before = [r for r in read_records(fleet.layout.queue, strict=False)]
        second = prompt_runner.submit_fleet(fleet)
        assert second.outcome == "driving" and second.driver == first.pid
        assert second.exit_code == 0 and second.members == ()
        done = cli("fleet", "submit", path)
        assert done.returncode == 0 and f"pid {first.pid}" in done.stdout, done.stdout
        after = read_records(fleet.layout.queue, strict=False)
        assert after[: len(before)] == before
        assert [r for r in after[len(before) :] if r["event"] == "submission"] == []
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 0, err
    assert json.loads(out)["outcome"] == "completed"
    starts = Counter(
        r["member"]
        for r in read_records(fleet.layout.queue, strict=False)
        if r["event"] == "started"
    )
    assert starts == Counter({m.id: 1 for m in fleet.members})


def test_fleet_stop_ends_the_members_and_the_next_submit_resumes(tmp_path: Path) -> None:
    path = make_fleet(
        tmp_path, 4, prompts=sleepy_prompts(3, delay_ms=700), fleet={"concurrency": 2}
    )
    fleet = prompt_runner.load_fleet(path)
    driver = submit_process(path)
    try:
        deadline = time.monotonic() + 60
        while live_count(fleet) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live_count(fleet) == 2
        stopped = cli("fleet", "stop", path, "--json", "--grace", "5")
        assert stopped.returncode == 0, stopped.stderr
        doc = json.loads(stopped.stdout)
        assert doc["ok"] is True and doc["submission"] == 1 and len(doc["members"]) == 2
        out, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 1, err
    result = json.loads(out)
    assert result["outcome"] == "stopped"
    states = Counter(m["state"] for m in result["members"])
    assert states == Counter({"stopped": 2, "skipped": 2}), states
    assert live_count(fleet) == 0
    rows = {r.workspace: r.state for r in prompt_runner.fleet_status(fleet).rows}
    assert sorted(rows.values()) == ["skipped", "skipped", "stopped", "stopped"]
    again = prompt_runner.submit_fleet(fleet, poll_s=0.05)
    assert again.outcome == "completed" and again.submission == 2 and not again.resumed
    for member, counts in completions(fleet).items():
        assert counts == Counter({"01": 1, "02": 1, "03": 1}), (member, counts)


def _failing_fleet(tmp_path: Path, policy: str) -> Path:
    """Three listed members (concurrency 1): the first one's packet fails."""
    from tests.helpers.workspaces import make_workspace

    never = {"verify": {"files_exist": ["never.txt"]}, "recovery": {"repair": {"enabled": False}}}
    manifests = []
    for i in range(3):
        prompts = {"01": {"targets": ["app"], "commit": "feat: x", **never}} if i == 0 else None
        manifests.append(
            make_workspace(tmp_path / f"w{i}", prompts=prompts, manifest={"id": f"w{i}"})
        )
    doc = {
        "schema": "prompt_runner.fleet/v1",
        "id": f"fail-{policy}",
        "concurrency": 1,
        "failure_policy": policy,
        "workspaces": [str(m) for m in manifests],
    }
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_continue_runs_the_others_after_a_failed_member(tmp_path: Path) -> None:
    result = prompt_runner.submit_fleet(_failing_fleet(tmp_path, "continue"), poll_s=0.05)
    assert result.outcome == "failed" and result.exit_code == 1
    assert [(m.workspace, m.state) for m in result.members] == [
        ("w0", "failed"),
        ("w1", "completed"),
        ("w2", "completed"),
    ]
    assert result.members[0].reason == "its run ended failed"


def test_stop_starts_no_member_after_a_failed_one(tmp_path: Path) -> None:
    path = _failing_fleet(tmp_path, "stop")
    result = prompt_runner.submit_fleet(path, poll_s=0.05)
    assert [(m.workspace, m.state, m.reason) for m in result.members] == [
        ("w0", "failed", "its run ended failed"),
        ("w1", "skipped", "failure_policy"),
        ("w2", "skipped", "failure_policy"),
    ]
    status = prompt_runner.fleet_status(path)
    assert [r.state for r in status.rows] == ["failed", "skipped", "skipped"]


def test_plan_status_and_watch_of_a_fleet(tmp_path: Path) -> None:
    path = make_fleet(tmp_path, 2, prompts=sleepy_prompts(2, delay_ms=0, cost=0.25))
    fleet = prompt_runner.load_fleet(path)
    plan = prompt_runner.plan_fleet(fleet)
    assert [(m.workspace, m.action, m.state) for m in plan.members] == [
        ("mig-t0", "start", "queued"),
        ("mig-t1", "start", "queued"),
    ]
    assert plan.ok and plan.to_dict()["schema"] == "prompt_runner.fleet.plan/v1"
    before = prompt_runner.fleet_status(fleet)
    assert [(r.state, r.progress, r.host) for r in before.rows] == [("queued", "0/0", None)] * 2
    assert prompt_runner.submit_fleet(fleet, poll_s=0.05).outcome == "completed"
    assert [m.action for m in prompt_runner.plan_fleet(fleet).members] == ["none", "none"]
    status = prompt_runner.fleet_status(fleet)
    row = status.rows[0]
    assert (row.state, row.progress, row.attempts, row.starts, row.cost_usd) == (
        "completed",
        "2/2",
        2,
        1,
        0.5,
    )
    assert row.last_progress_at and row.run_id
    shown = cli("fleet", "status", path, "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["rows"] == [r.to_dict() for r in status.rows] and doc["counts"] == {"completed": 2}
    text = cli("fleet", "status", path).stdout
    assert "mig-t0" in text and "2/2" in text and "$0.50" in text
    watched = cli("fleet", "watch", path, "--for", "1s", "--every", "0.5s")
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.startswith("FLEET ") and "fleet watch passed" in watched.stdout
    report = prompt_runner.watch_fleet(fleet, for_s=0.3, every_s=0.1)
    assert report["passed"] and report["members"] == {"mig-t0": "completed", "mig-t1": "completed"}
    assert Path(report["report"]).parent == fleet.layout.acceptance_dir
    lines = Path(report["evidence"]).read_text().splitlines()
    assert len(lines) == report["sample_count"] >= 2
    assert json.loads(lines[0])["schema"] == "prompt_runner.fleet.watch.sample/v1"


def test_watch_fails_on_a_failed_member_and_requires_a_running_one(tmp_path: Path) -> None:
    path = _failing_fleet(tmp_path, "stop")
    prompt_runner.submit_fleet(path, poll_s=0.05)
    report = prompt_runner.watch_fleet(path, for_s=1, every_s=0.2)
    assert not report["passed"] and report["ended"] == "unhealthy" and report["failed_sample"] == 1
    assert report["violations"][0]["workspace"] == "w0"
    assert report["violations"][0]["reason"] == "run_failed"
    done = cli("fleet", "watch", path, "--for", "1s", "--require-running")
    assert done.returncode == 1 and "w0:" in done.stdout, done.stdout
    assert "no member is running" in done.stdout


@pytest.mark.parametrize("args", [["--every", "1s"], ["--for", "1s", "--progress-timeout", "1m"]])
def test_watch_usage_mistakes_are_exit_2(tmp_path: Path, args: list[str]) -> None:
    path = make_fleet(tmp_path, 1)
    done = cli("fleet", "watch", path, *args)
    assert done.returncode == 2 and done.stderr.startswith("error: "), done.stderr


def test_a_steer_reaches_a_running_member(tmp_path: Path) -> None:
    path = make_fleet(tmp_path, 1, prompts=sleepy_prompts(1, delay_ms=4000))
    fleet = prompt_runner.load_fleet(path)
    driver = submit_process(path)
    try:
        deadline = time.monotonic() + 60
        while prompt_runner.fleet_status(fleet).rows[0].prompt != "01":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        done = cli(
            "control", "steer", "--fleet", path, "--workspace", "mig-t0", "use tabs", "--json"
        )
        assert done.returncode == 0, done.stderr
        receipt = json.loads(done.stdout)
        assert receipt["outcome"] == "applied" and receipt["workspace"] == "mig-t0"
        assert receipt["host"]
        log = fleet.members[0].workspace.layout.state.control_log
        steers = [e for e in read_records(log, strict=False) if e.get("command") == "steer"]
        assert steers and steers[-1]["params"]["text"] == "use tabs"
        out, _ = driver.communicate(timeout=60)
        assert json.loads(out)["outcome"] == "completed"
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.communicate()
    nobody = cli("control", "steer", "--fleet", path, "--workspace", "nope", "x")
    assert nobody.returncode == 2 and "has no workspace 'nope'" in nobody.stderr
    alone = cli("control", "steer", "--fleet", path, "x")
    assert alone.returncode == 2 and "--fleet F needs --workspace W" in alone.stderr


def test_each_fleet_call_works_twice_in_one_process(tmp_path: Path) -> None:
    path = make_fleet(tmp_path, 2, prompts=sleepy_prompts(1, delay_ms=0))
    for i in range(2):
        fleet = prompt_runner.load_fleet(path) if i else path
        assert prompt_runner.plan_fleet(fleet).fleet == "mig"
        assert prompt_runner.submit_fleet(fleet, poll_s=0.05).outcome == "completed"
        assert prompt_runner.fleet_status(fleet).counts() == {"completed": 2}
        assert prompt_runner.stop_fleet(fleet).to_dict()["members"] == {}
        assert prompt_runner.watch_fleet(fleet, for_s=0.1, every_s=0.1)["passed"]
