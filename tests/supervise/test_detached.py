"""``start`` and ``stop`` on real detached runs (a packet with a slow simulated agent).

Each test drives the real CLI in subprocesses; the runner is a real detached
process; liveness and leftovers are checked in ``/proc``.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import sys
import time
from pathlib import Path

from tests.supervise._helpers import (
    alive,
    cli,
    commit_subjects,
    completed_ids,
    marked_pids,
    record,
    run_finished,
    slow_packet,
    state,
    wait_for,
)


def _snapshot_prompt(packet: Path) -> str | None:
    try:
        snap = json.loads((state(packet) / "control" / "snapshot.json").read_text())
    except (OSError, ValueError):
        return None
    running = snap.get("status") == "running" and snap.get("event_count", 0) > 0
    return snap.get("prompt_id") if running else None


def test_start_survives_its_session_hanging_up_and_the_run_completes(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, delay_ms=1200)
    # A terminal session: pty.fork makes the child a session leader with the pty
    # as its controlling terminal, as a login shell over ssh is.
    child, fd = pty.fork()
    if child == 0:  # pragma: no cover - the forked child
        os.execv(
            "/bin/sh",
            ["sh", "-c", f"'{sys.executable}' -m prompt_runner start '{packet}'; exec sleep 60"],
        )
    output = b""
    deadline = time.monotonic() + 60
    while b"Stop it:" not in output and time.monotonic() < deadline:
        try:
            output += os.read(fd, 4096)
        except OSError:
            break
    assert b"Started run" in output, output.decode(errors="replace")
    runner = record(packet)["pid"]
    assert os.getsid(runner) == runner != os.getsid(child)  # a session of its own
    os.killpg(child, signal.SIGHUP)  # the session hangs up ...
    os.close(fd)  # ... and its terminal goes away
    os.waitpid(child, 0)
    time.sleep(0.3)
    assert alive(runner), "the run died with the session that started it"
    wait_for(lambda: run_finished(packet), 60, "the run to finish")
    assert completed_ids(packet) == ["01", "02", "03"]
    current = json.loads((state(packet) / "runs" / "current.json").read_text())
    assert current["status"] == "completed"
    log = Path(record(packet)["stdout"]).read_text()
    assert "Run completed: 3 prompt(s) completed." in log  # its output went to the log


def test_a_second_start_while_live_is_refused_naming_the_run(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01",), delay_ms=5000)
    first = cli("start", packet)
    assert first.returncode == 0, first.stdout + first.stderr
    rec = record(packet)
    second = cli("start", packet)
    assert second.returncode == 3, second.stdout + second.stderr
    assert f"a run of demo is live: pid {rec['pid']} (process_group, since {rec['started_at']}" in (
        second.stderr
    )
    assert record(packet) == rec  # the refusal changed nothing
    # a foreground run holding run.pid is refused as well
    stopped = cli("stop", packet, "--grace", "5")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_kill_9_of_the_runner_then_start_remaining_completes_every_prompt_once(
    tmp_path: Path,
) -> None:
    packet = slow_packet(tmp_path, delay_ms=1200)
    started = cli("start", packet)
    assert started.returncode == 0, started.stdout + started.stderr
    wait_for(lambda: _snapshot_prompt(packet) == "02", 60, "prompt 02 to run")
    first = record(packet)
    os.kill(first["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(first["pid"]), 10, "the runner to die")
    again = cli("start", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert record(packet)["pid"] != first["pid"]
    assert record(packet)["earlier_markers"][0] == first["marker"]
    wait_for(lambda: run_finished(packet), 60, "the resumed run to finish")
    assert sorted(completed_ids(packet)) == ["01", "02", "03"]  # each exactly once
    subjects = commit_subjects(packet.parent / "repo")
    assert sorted(s for s in subjects if s.startswith("feat:")) == [
        "feat: 01",
        "feat: 02",
        "feat: 03",
    ]
    assert marked_pids(first["marker"]) == []


def test_stop_after_prompt_lets_the_current_prompt_commit_first(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01", "02"), delay_ms=2500)
    assert cli("start", packet).returncode == 0
    wait_for(lambda: _snapshot_prompt(packet) == "01", 60, "prompt 01 to run")
    stopped = cli("stop", packet, "--after-prompt", "--author", "ops")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "Asked the runner to stop (applied)." in stopped.stdout
    assert "no process of the run is left" in stopped.stdout
    assert completed_ids(packet) == ["01"]
    assert "feat: 01" in commit_subjects(packet.parent / "repo")
    assert not (packet.parent / "repo" / "f02.txt").exists()  # 02 never started
    assert marked_pids(record(packet)["marker"]) == []
    again = cli("start", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    wait_for(lambda: run_finished(packet), 60, "the resumed run")
    assert completed_ids(packet) == ["01", "02"]


def test_stop_with_nothing_running_says_so(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01",), delay_ms=0)
    stopped = cli("stop", packet, "--json")
    assert stopped.returncode == 0, stopped.stderr
    doc = json.loads(stopped.stdout)
    assert (doc["stopped_by"], doc["ok"], doc["ended"], doc["left"]) == ("nothing", True, [], [])


def test_a_runner_that_does_not_answer_the_request_is_terminated(tmp_path: Path) -> None:
    """A runner inside a verify command reads no request: after the grace, SIGTERM.

    (A retry's backoff reads requests now, runner/: it once served here.)
    """
    from tests.helpers.packets import make_packet

    began_file = tmp_path / "verifying"
    hang = f"import pathlib, time; pathlib.Path({str(began_file)!r}).touch(); time.sleep(300)"
    command = {"exec": sys.executable, "args": ["-c", hang], "timeout_ms": 600_000}
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": [command]}}})
    assert cli("start", packet).returncode == 0
    wait_for(began_file.exists, 30, "the verify command")
    began = time.monotonic()
    stopped = cli("stop", packet, "--grace", "1", "--json")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    doc = json.loads(stopped.stdout)
    assert doc["stopped_by"] == "SIGTERM", json.dumps(doc)
    assert doc["request_outcome"] is None  # it never read the request
    (runner,) = [e for e in doc["ended"] if e["pid"] == record(packet)["pid"]]
    assert runner["how"] == "SIGTERM"
    assert time.monotonic() - began < 30
    status = json.loads(cli("status", packet, "--json").stdout)
    assert status["prompts"]["01"]["status"] == "interrupted"
