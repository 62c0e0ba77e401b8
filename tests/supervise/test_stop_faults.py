"""``stop``'s faults a new user found, one test each, with real processes.

* after ``kill -9`` of a ``run`` a script started, the verify command it left
  (registered under ``agents/``) is found, ended and its registration removed;
* ``stop --state-dir DIR`` finds a ``run --state-dir DIR``; without it ``stop``
  says where it looked and how to point it elsewhere; ``start --state-dir``
  launches the runner with it;
* a process that ignores SIGTERM is reported ended by SIGKILL, not SIGTERM;
* several ``stop``s at once: none signals the runner that ends on the first
  one's request (its own refused as "the run ended" waits instead).

Set-ups as tests/supervise/test_stop_unsupervised.py: ``prompt-runner run`` a
child of this test (its group and session), ``prompt-runner stop`` subprocesses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner import stop
from prompt_runner.errors import ArgumentError
from prompt_runner.state.layout import StateLayout
from prompt_runner.supervise.stop import stop_run
from prompt_runner.supervise.target import Supervised
from tests.helpers.packets import make_packet
from tests.helpers.procs import alive, wait_for
from tests.runner.test_verify_command_orphans import Hanging
from tests.supervise._helpers import cli, slow_packet

DEAF = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(str(os.getpid()))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
"""

ENDING = """
import signal, sys, time
from pathlib import Path
from prompt_runner.control.decisions import open_entry, refuse
from prompt_runner.control.plane_requests import RUN_ENDED
from prompt_runner.control.store import ControlStore
from prompt_runner.state.lock import current_identity

root, log = Path(sys.argv[1]), Path(sys.argv[2])
def term(*_):
    log.write_text("SIGTERM")
    sys.exit(143)
signal.signal(signal.SIGTERM, term)
store = ControlStore(root)
store.init()
(root / "run.pid").write_text(current_identity().render())
while not store.pending_names():
    time.sleep(0.05)
for item in store.pending_requests():  # what the plane does at a run's end (_refuse_left)
    entry = open_entry(item.name, item.payload, run_id="R", prompt_id=None, attempt=None)
    refuse(entry, RUN_ENDED)
    store.append_log(entry)
    store.complete_request(item.name, entry)
time.sleep(2)  # still shutting down: closing its store, its notifier
(root / "run.pid").unlink()
"""


def test_after_kill_9_of_a_script_s_run_stop_ends_the_registered_verify_command(
    tmp_path: Path, started: list[int]
) -> None:
    setup = Hanging(tmp_path, started)
    runner = setup.start("run")
    started.append(runner.pid)
    pids = setup.pids()
    [registration] = list(setup.agents.glob("*.json"))
    runner.kill()
    runner.communicate(timeout=30)
    assert (setup.packet / ".prompt_runner" / "run.pid").exists()  # stale, as after any kill -9
    assert all(alive(p) for p in pids)

    done = cli("stop", setup.packet, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    whys = {e["pid"]: e["why"] for e in report["ended"]}
    assert whys.get(pids[0]) == "registered", report
    assert pids[1] in whys, report  # its child, in its group
    assert report["stopped_by"] != "nothing" and report["left"] == [], report
    assert wait_for(lambda: not any(alive(p) for p in pids), 10), f"survivors: {pids}"
    assert not registration.exists()  # removed, as the next run's reap would


def test_stop_with_state_dir_finds_a_run_with_state_dir(tmp_path: Path, started: list[int]) -> None:
    packet = slow_packet(tmp_path, ("01", "02"), delay_ms=20_000)
    elsewhere = tmp_path / "state"
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--state-dir", str(elsewhere)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(runner.pid)
    assert wait_for(lambda: (elsewhere / "run.pid").exists(), 30), "the run never held run.pid"

    missed = cli("stop", packet)
    assert missed.returncode == 0, missed.stdout + missed.stderr
    assert f"state root looked in ({packet / '.prompt_runner'})" in missed.stdout, missed.stdout
    assert "pass the same --state-dir DIR to stop" in missed.stdout, missed.stdout
    assert runner.poll() is None  # untouched

    done = cli("stop", packet, "--state-dir", elsewhere, "--grace", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pid {runner.pid} exited" in done.stdout, done.stdout
    runner.communicate(timeout=30)
    assert runner.returncode is not None


def test_start_with_state_dir_launches_the_runner_with_it(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ("01", "02"), delay_ms=20_000)
    elsewhere = tmp_path / "state"
    begun = cli("start", packet, "--state-dir", elsewhere, "--containment", "process_group")
    try:
        assert begun.returncode == 0, begun.stdout + begun.stderr
        doc = json.loads((elsewhere / "supervisor" / "record.json").read_text())
        at = doc["argv"].index("--state-dir")
        assert doc["argv"][at + 1] == str(elsewhere), doc["argv"]
        assert not (packet / ".prompt_runner" / "run.pid").exists()
    finally:
        done = cli("stop", packet, "--state-dir", elsewhere, "--grace", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Nothing to stop" not in done.stdout, done.stdout


def test_state_dir_with_a_workspace_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="state_dir"):
        stop(workspace=tmp_path / "workspace.yml", state_dir=tmp_path / "state")


def test_a_process_that_ignores_sigterm_is_reported_killed_by_sigkill(
    tmp_path: Path, started: list[int]
) -> None:
    pidfile = tmp_path / "deaf.pid"
    command = {"exec": sys.executable, "args": ["-c", DEAF, str(pidfile)], "timeout_ms": 600_000}
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": [command]}}})
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(runner.pid)
    assert wait_for(pidfile.exists, 30), "the verify command never started"
    deaf = int(pidfile.read_text())
    started.append(deaf)

    done = cli("stop", packet, "--grace", "1", "--json")
    runner.communicate(timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    how = {e["pid"]: e["how"] for e in report["ended"]}
    assert how.get(deaf) == "SIGKILL", report  # SIGTERM could not have ended it
    assert how.get(runner.pid) == "SIGTERM", report  # the runner did end on SIGTERM
    assert not alive(deaf)


def test_concurrent_stops_do_not_signal_a_runner_that_ends_on_a_request(
    tmp_path: Path, started: list[int]
) -> None:
    packet = slow_packet(tmp_path, ("01", "02"), delay_ms=20_000)
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(runner.pid)
    state = packet / ".prompt_runner"
    assert wait_for(lambda: (state / "control" / "snapshot.json").exists(), 30), "never live"
    stops = [
        subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "stop", str(packet), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    reports = []
    for each in stops:
        out, err = each.communicate(timeout=120)
        assert each.returncode == 0, out + err
        reports.append(json.loads(out))
    runner.communicate(timeout=30)
    for report in reports:
        assert report["ok"], report
        signalled = [e for e in report["ended"] if e["how"] != "exited"]
        assert signalled == [], report  # the runner ended on a request, nobody SIGTERMed it
        assert report["stopped_by"] in ("request", "exited", "nothing"), report
    asked = [r for r in reports if r["request"] is not None]
    assert asked, reports


def test_a_stop_refused_because_the_run_is_ending_waits_instead_of_signalling(
    tmp_path: Path, started: list[int]
) -> None:
    """The runner here is a stand-in that holds ``run.pid`` and answers through the
    real control store exactly as the plane does at a run's end (``RUN_ENDED``),
    then takes 2 s to exit: what a second stop meets while the runner ends on the
    first one's request."""
    root, log = tmp_path / "state", tmp_path / "signals.log"
    root.mkdir()
    runner = subprocess.Popen(
        [sys.executable, "-c", ENDING, str(root), str(log)], start_new_session=True
    )
    started.append(runner.pid)
    assert wait_for(lambda: (root / "run.pid").exists(), 30), "the stand-in never held run.pid"
    layout = StateLayout(root)
    report = stop_run(Supervised("demo", layout, layout.supervisor), grace_s=10)
    runner.wait(timeout=30)
    assert not log.exists(), log.read_text()  # never SIGTERMed while it ended
    assert runner.returncode == 0
    assert report.request_outcome is not None and report.request_outcome.startswith("rejected")
    assert report.ok and report.killed == (), report
    assert report.duration_ms >= 1500, report  # it waited for the runner's end
