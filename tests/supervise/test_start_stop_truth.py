"""``start`` and ``stop`` tell the truth: a new user's findings (round 3), one test each,
with real runners, real git and real subprocesses.

* a ``start`` whose runner loses the packet to a foreground ``run`` (that took
  ``run.pid`` after ``start`` looked) is exit 3 naming the other runner -- it
  said "Started run <the other run's id>" and exited 0;
* ``start PKT --state-dir DIR`` prints follow/stop commands that find the run
  (they lacked ``--state-dir``: watch said runner=DOWN, stop "Nothing to
  stop"), and ``stop`` without it says it looked only at the packet's own root;
* a ``stop`` whose grace ends while the runner's exit waits for a webhook that
  never answers: the delivery still pending at the SIGTERM is recorded
  ``abandoned`` in ``notifications.jsonl`` (it got no line at all).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from prompt_runner.state.layout import StateLayout
from prompt_runner.supervise.start import RunLiveError, start_run
from prompt_runner.supervise.target import Launch, Supervised
from tests.helpers.packets import make_packet
from tests.helpers.webhook import webhook
from tests.supervise._helpers import alive, cli, record, run_finished, slow_packet, wait_for

# The launched "runner": starts a foreground `run` of the packet, waits until it
# holds run.pid, then becomes (exec) a second `run` of it -- the race of a
# `start` beside a `run` begun a moment after `start` looked, made certain.
RACER = """
import os, subprocess, sys, time
packet, pid_file, fg_file = sys.argv[1:4]
fg = subprocess.Popen([sys.executable, "-m", "prompt_runner", "run", packet],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open(fg_file, "w").write(str(fg.pid))
while not os.path.exists(pid_file):
    time.sleep(0.02)
os.execv(sys.executable, [sys.executable, "-m", "prompt_runner", "run", packet])
"""


def test_a_start_whose_runner_loses_the_packet_is_exit_3_naming_the_other(
    tmp_path: Path,
) -> None:
    packet = slow_packet(tmp_path, ("01",), delay_ms=4000)
    state = StateLayout.of_packet(packet)
    fg_file = tmp_path / "fg.pid"
    sup = Supervised(
        label=packet.name,
        state=state,
        files=state.supervisor,
        containment="process_group",
        launch=Launch(
            (sys.executable, "-c", RACER, str(packet), str(state.run_pid), str(fg_file)), packet
        ),
    )
    try:
        with pytest.raises(RunLiveError) as caught:
            start_run(sup, live_timeout_s=60)
        fg = int(fg_file.read_text())
        message = str(caught.value)
        assert caught.value.exit_code == 3
        assert "could not start" in message and "another runner" in message, message
        assert f"pid {fg} " in message, message  # the other runner, by its pid
        assert "exit 3" in message, message  # how the started runner ended
        # The foreground run is the one that runs, untouched by the failed start.
        assert alive(fg)
    finally:
        wait_for(lambda: run_finished(packet), 60, "the foreground run to end")
    current = json.loads((state.root / "runs" / "current.json").read_text())
    assert current["status"] == "completed"
    assert record(packet)["run_id"] is None  # the record never claims the other's run


def _printed(stdout: str, head: str) -> list[str]:
    """The commands after ``head`` on the line that begins with it, as argv lists
    for ``python -m prompt_runner`` (``prompt-runner`` dropped)."""
    (line,) = [line for line in stdout.splitlines() if line.startswith(head)]
    commands = line[len(head) :].split("  or  ")
    out = []
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "prompt-runner", line
        out.append(argv[1:])
    return out


def test_the_commands_start_prints_for_a_state_dir_find_the_run(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ("01", "02"), delay_ms=20_000)
    elsewhere = tmp_path / "state"
    begun = cli("start", packet, "--state-dir", elsewhere, "--containment", "process_group")
    stopped = False
    try:
        assert begun.returncode == 0, begun.stdout + begun.stderr
        runner = json.loads((elsewhere / "supervisor" / "record.json").read_text())["pid"]
        watch, events = _printed(begun.stdout, "Follow it: ")
        (stop,) = _printed(begun.stdout, "Stop it: ")

        seen = cli(*watch, "--once")
        assert seen.returncode == 0, seen.stdout + seen.stderr
        assert "runner=UP" in seen.stdout, seen.stdout
        assert "--follow" in events
        listed = cli(*[a for a in events if a != "--follow"])
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert listed.stdout.strip(), "control events found no event of the live run"

        # Without --state-dir: nothing at the packet's own root, and said so.
        missed = cli("stop", packet)
        assert missed.returncode == 0, missed.stdout + missed.stderr
        assert "at the state root looked in" in missed.stdout, missed.stdout
        assert str(packet / ".prompt_runner") in missed.stdout
        assert "`start --state-dir DIR`" in missed.stdout
        assert alive(runner), "a stop without --state-dir ended the run"

        done = cli(*stop)
        stopped = True
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Nothing to stop" not in done.stdout, done.stdout
        assert not alive(runner)
    finally:
        if not stopped:
            cli("stop", packet, "--state-dir", elsewhere)


def test_a_delivery_pending_when_stop_sigterms_the_runner_is_recorded_abandoned(
    tmp_path: Path,
) -> None:
    with webhook(hang=True) as hook:
        slow = {
            "simulate": {
                "attempts": [{"delay_ms": 20_000, "writes": [{"path": "a.txt", "text": "a"}]}]
            }
        }
        packet = make_packet(
            tmp_path,
            {"01": slow, "02": slow},
            manifest={"notify": {"urls": [hook.url()], "timeout": "60s", "on": ["run_failed"]}},
        )
        begun = cli("start", packet, "--containment", "process_group")
        assert begun.returncode == 0, begun.stdout + begun.stderr
        # The runner stops on the request, sends run_failed to the hook that never
        # answers, and its exit waits (up to 60 s) longer than stop's grace.
        done = cli("stop", packet, "--grace", "3", "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert hook.requests, "the webhook was never called"
    assert [e["how"] for e in report["ended"]] == ["SIGTERM"], report
    lines = [
        json.loads(line)
        for line in StateLayout.of_packet(packet).notifications.read_text().splitlines()
    ]
    assert [(x["kind"], x["outcome"], x["attempts"]) for x in lines] == [
        ("run_failed", "abandoned", 1)
    ], lines
    assert "SIGTERM" in lines[0]["error"], lines[0]
    current = json.loads((StateLayout.of_packet(packet).root / "runs" / "current.json").read_text())
    assert current["status"] == "interrupted"
