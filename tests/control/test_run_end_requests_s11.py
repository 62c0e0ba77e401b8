"""A request that lands as its run ends still gets exactly one outcome receipt.

The runner's last sweep of ``requests/`` comes after ``runs/current.json``
says the run ended; a sender that chose a going run and finds it over once
its request file is written decides it itself, under the run lock, with the
same refusal. Real runs and real CLI processes throughout; the one thing held
is the sender, between choosing its run and writing its file (the instant the
race needs), by a wrapper around its write.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from prompt_runner.api import run as run_packet
from tests.helpers.packets import make_packet

RUN_ENDED = "the run ended before a session could take it"

HELD_SENDER = """\
import sys, time
from pathlib import Path
from prompt_runner.control import inbox

ready, go = Path(sys.argv[1]), Path(sys.argv[2])
write = inbox.write_request

def held(layout, data):
    ready.touch()  # the run is chosen: the file is not written yet
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("never released")
        time.sleep(0.01)
    return write(layout, data)

inbox.write_request = held
from prompt_runner.cli.main import main
sys.exit(main(sys.argv[3:]))
"""


def _packet(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: one",
                "simulate": {
                    "attempts": [
                        {"messages": ["working"], "writes": [{"path": "f.txt", "text": "x\n"}]}
                    ]
                },
                "verify": {"files_exist": ["f.txt"]},
            }
        },
    )


def _hold_commit(repo: Path, marker: Path, release: Path, *, then_s: float = 0) -> None:
    """A pre-commit hook that says it runs (``marker``), then waits for ``release``
    (and ``then_s`` seconds more)."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        f"touch '{marker}'\n"
        "i=0\n"
        f"while [ ! -e '{release}' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
        f"sleep {then_s}\n"
    )
    hook.chmod(0o755)


def _wait_for(path: Path, what: str, runner: subprocess.Popen[Any] | None = None) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, what
        assert runner is None or runner.poll() is None, f"{what}: the runner exited"
        time.sleep(0.01)


def _held_sender(tmp_path: Path, *argv: str) -> tuple[subprocess.Popen[str], Path, Path]:
    script = tmp_path / "held_sender.py"
    script.write_text(HELD_SENDER)
    ready, go = tmp_path / "sender_ready", tmp_path / "sender_go"
    sender = subprocess.Popen(
        [sys.executable, str(script), str(ready), str(go), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return sender, ready, go


def _log(state: Path) -> list[dict[str, object]]:
    path = state / "control" / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _one_refusal(state: Path, name: str, command: str) -> None:
    """``name`` has exactly one log line and one receipt, both the run-ended refusal."""
    lines = [e for e in _log(state) if e.get("request") == name]
    assert len(lines) == 1, lines
    assert lines[0]["command"] == command
    assert lines[0]["outcome"] == "rejected"
    assert lines[0]["reason"] == RUN_ENDED
    receipt = json.loads((state / "control" / "outcomes" / name).read_text())
    assert receipt["outcome"] == "rejected" and receipt["reason"] == RUN_ENDED
    assert not list((state / "control" / "requests").iterdir())


def _request_name(out: str) -> str:
    return out.split("(", 1)[1].split(")", 1)[0]


def test_a_steer_written_after_the_run_ended_is_refused_by_its_sender(tmp_path: Path) -> None:
    # The sender chooses the run while it commits, and writes its file only
    # after the runner is gone (its last sweep long done): nobody else is left.
    packet = _packet(tmp_path)
    state = packet / ".prompt_runner"
    in_hook, release = tmp_path / "in_hook", tmp_path / "release"
    _hold_commit(tmp_path / "repo", in_hook, release)
    with (tmp_path / "run.out").open("w") as run_out:
        runner = subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(packet)],
            stdout=run_out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for(in_hook, "the run never reached its commit", runner)
        sender, ready, go = _held_sender(
            tmp_path, "control", "steer", str(packet), "one more thing"
        )
        _wait_for(ready, "the sender never chose its run")
        release.touch()
        assert runner.wait(timeout=60) == 0
    finally:
        release.touch()
        if runner.poll() is None:
            runner.kill()
        runner.wait()
    assert not (state / "run.pid").exists()
    go.touch()
    out, err = sender.communicate(timeout=60)
    assert sender.returncode == 1, out + err
    assert out.startswith("Steer refused ("), out
    assert out.rstrip().endswith(f": {RUN_ENDED}."), out
    _one_refusal(state, _request_name(out), "steer")
    status = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "control", "status", str(packet), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(status.stdout)["pending_requests"] == 0


def test_the_sender_waits_for_the_finishing_runner_to_let_go_of_the_run(tmp_path: Path) -> None:
    # The run (in this process) has recorded its end and made its last sweep,
    # but still holds run.pid (its on_run_completed callback waits): the view
    # request written now waits for the lock, then is refused once, by its sender.
    packet = _packet(tmp_path)
    state = packet / ".prompt_runner"
    in_hook, release = tmp_path / "in_hook", tmp_path / "release"
    _hold_commit(tmp_path / "repo", in_hook, release)
    ended, leave = threading.Event(), threading.Event()

    def completed(_summary: dict[str, object]) -> None:
        ended.set()
        leave.wait(60)

    results: list[object] = []
    run = threading.Thread(
        target=lambda: results.append(
            run_packet(packet, runtime_store="file", committer="git", on_run_completed=completed)
        ),
        daemon=True,
    )
    run.start()
    try:
        _wait_for(in_hook, "the run never reached its commit")
        sender, ready, go = _held_sender(tmp_path, "control", "view", str(packet), "--diff", "stat")
        _wait_for(ready, "the sender never chose its run")
        release.touch()
        assert ended.wait(60), "the run never ended"
        current = json.loads((state / "runs" / "current.json").read_text())
        assert current["status"] == "completed"
        assert (state / "run.pid").exists()
        go.touch()
        time.sleep(0.5)
        assert sender.poll() is None, "the sender did not wait for the run lock"
        assert not [e for e in _log(state) if e.get("command") == "set_view"]
    finally:
        release.touch()
        leave.set()
        run.join(60)
    out, err = sender.communicate(timeout=60)
    assert sender.returncode == 1, out + err
    assert out.startswith("View change refused ("), out
    _one_refusal(state, _request_name(out), "set_view")


def test_steers_around_the_run_end_each_get_one_receipt(tmp_path: Path) -> None:
    # r1 of the new-user tester, shortened: steers 40 ms apart from a run's
    # commit (held until the first steer is queued, then 0.3 s more) until
    # just after its runner exits.
    packet = _packet(tmp_path)
    state = packet / ".prompt_runner"
    in_hook, release = tmp_path / "in_hook", tmp_path / "release"
    _hold_commit(tmp_path / "repo", in_hook, release, then_s=0.3)
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    senders: list[subprocess.Popen[str]] = []
    try:
        _wait_for(in_hook, "the run never reached its commit", runner)
        held_until = time.monotonic() + 5
        ended_at: float | None = None
        while ended_at is None or time.monotonic() - ended_at < 0.3:
            i = len(senders)
            argv = [sys.executable, "-m", "prompt_runner", "control", "steer", str(packet), f"s{i}"]
            senders.append(
                subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            )
            time.sleep(0.04)
            if not release.exists() and (
                time.monotonic() > held_until or any(s.poll() is not None for s in senders)
            ):
                release.touch()
            if ended_at is None and runner.poll() is not None:
                ended_at = time.monotonic()
        outs = [s.communicate(timeout=120)[0] for s in senders]
        assert runner.wait(timeout=60) == 0
    finally:
        release.touch()
        for s in senders:
            if s.poll() is None:
                s.kill()
        if runner.poll() is None:
            runner.kill()
        runner.wait()
    count = len(senders)
    sent = [_request_name(o) for o in outs if o.startswith(("Steer queued (", "Steer refused ("))]
    refused_before = [o for o in outs if "no live or unfinished run" in o]
    assert len(sent) + len(refused_before) == count, outs
    assert sent, "no steer reached the run: the test missed the run's end"
    log = _log(state)
    for name in sent:
        lines = [e for e in log if e.get("request") == name]
        assert len(lines) == 1, (name, lines)
        assert (state / "control" / "outcomes" / name).exists(), name
    for out in outs:
        if out.startswith("Steer refused ("):
            assert out.rstrip().endswith(f": {RUN_ENDED}."), out
    assert not list((state / "control" / "requests").iterdir())
    assert len([e for e in log if e.get("command") == "steer"]) == count
