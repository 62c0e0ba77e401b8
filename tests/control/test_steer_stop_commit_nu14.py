"""Steers around a run's stop and a prompt's commit (a new user's findings, nu14).

* A steer accepted during a retry's backoff (``delivery: next_session``), then
  ``stop``: the stop ended the run before the retry's session, so no agent read
  it, yet its receipt said ``applied``. The resumed run (the same run id) now
  queues it again and its first session of the prompt gets it.
* A steer sent while prompt 01 was being committed (a slow pre-commit hook)
  was applied to prompt 02's session, interrupting it with guidance written
  for 01. It is now refused as 01's, naming the committing stage, as one sent
  during 01's last verification is.

Real runner processes of the simulated provider, a real git repo with a real
blocking pre-commit hook, the real CLI for every control command.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from prompt_runner.control.requests import build_request
from tests.control._helpers import (
    NOREPAIR,
    control,
    current_run_id,
    log,
    make_packet,
    prompt_record,
)
from tests.helpers.cli import cli

STEER_TEXT = "CARRIED-STEER-TEXT"


@contextmanager
def _runner(packet: Path, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """``prompt-runner run PACKET EXTRA`` in a process, killed if it outlives the block."""
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet), *extra]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as runner:
        try:
            yield runner
        finally:
            if runner.poll() is None:
                runner.kill()


def _read_until(runner: subprocess.Popen[str], needle: str) -> str:
    """The runner's output up to and including the line containing ``needle``."""
    assert runner.stdout is not None
    seen: list[str] = []
    for line in runner.stdout:
        seen.append(line)
        if needle in line:
            return "".join(seen)
    raise AssertionError(f"the run ended before {needle!r}: {''.join(seen)}")


def _wait_logged(packet: Path, command: str, *, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entries = [e for e in log(packet) if e.get("command") == command]
        if entries:
            return entries[-1]
        time.sleep(0.05)
    raise AssertionError(f"no {command} was decided")


def _set_backoff(packet: Path, delay_ms: int) -> None:
    manifest = packet / "prompt_runner_packet.md"
    _, front, body = manifest.read_text().split("---\n", 2)
    doc = yaml.safe_load(front)
    doc["recovery"]["retry"] = {
        "base_delay_ms": delay_ms,
        "max_delay_ms": delay_ms,
        "jitter": False,
    }
    manifest.write_text("---\n" + yaml.safe_dump(doc, sort_keys=False) + "---\n" + body)


@pytest.mark.parametrize("end", ["stop", "sigkill"])
def test_a_steer_accepted_during_a_backoff_reaches_the_resumed_run_after_a_stop(
    tmp_path: Path, end: str
) -> None:
    """``stop`` (and a runner killed outright) during the backoff: the steer's
    log line is what the resumed run carries, whatever ended the first one."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: f",
                "simulate": {
                    "attempts": [
                        {"error": {"kind": "provider_capacity", "message": "overloaded"}},
                        {"writes": [{"path": "f.txt", "text": "x\n"}]},
                    ]
                },
                "verify": {"files_exist": ["f.txt"]},
            }
        },
        manifest={"recovery": {**NOREPAIR}},
    )
    _set_backoff(packet, 30_000)
    with _runner(packet, "--no-commit") as first:
        _read_until(first, "before retrying")
        sent = cli("control", "steer", packet, STEER_TEXT, "--author", "ada")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        steer = _wait_logged(packet, "steer")
        assert steer["outcome"] == "applied", steer
        assert steer["params"]["delivery"] == "next_session"
        if end == "stop":
            stopped = cli("stop", packet)
            assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        else:
            _read_until(first, "steer for the next session (retry)")
            first.send_signal(signal.SIGKILL)
        out, _ = first.communicate(timeout=60)
    assert first.returncode == (143 if end == "stop" else -signal.SIGKILL), out
    if end == "stop":
        assert "steer for the next session (retry)" in out
    if end == "stop":
        assert prompt_record(packet)["status"] == "interrupted"

    _set_backoff(packet, 0)  # a recovery edit does not block the resume
    resumed = cli("run", packet, "--remaining", "--no-commit")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    state = packet / ".prompt_runner"
    (line,) = (state / "interventions" / "01.jsonl").read_text().splitlines()
    delivered = json.loads(line)
    assert (delivered["request"], delivered["text"]) == (steer["request"], STEER_TEXT)
    assert (delivered["delivery"], delivered["author"]) == ("next_session", "ada")
    assert delivered["run_id"] == steer["run_id"]
    first_session = sorted((state / "logs").glob("prompt-01-*.log"))[-2]  # the resumed run's first
    assert STEER_TEXT in first_session.read_text()
    record = prompt_record(packet)
    assert (record["status"], record["steered"], record["steer_count"]) == ("completed", True, 1)
    assert [e["outcome"] for e in log(packet) if e["command"] == "steer"] == ["applied"]
    carried = "steer accepted before the run was interrupted, for the prompt's next session"
    assert f"{carried}: {STEER_TEXT}" in resumed.stdout


def _two_prompts_with_a_held_commit(tmp_path: Path) -> tuple[Path, Path, Path]:
    packet = make_packet(
        tmp_path,
        {
            pid: {
                "commit": f"feat: {pid}",
                "simulate": {
                    "attempts": [
                        {"delay_ms": 300, "writes": [{"path": f"f{pid}.txt", "text": "x\n"}]}
                    ]
                },
                "verify": {"files_exist": [f"f{pid}.txt"]},
            }
            for pid in ("01", "02")
        },
        manifest={"recovery": {"retry": {"base_delay_ms": 0}, **NOREPAIR}},
    )
    started, release = tmp_path / "hook-started", tmp_path / "release"
    hook = tmp_path / "repo" / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(  # holds the first commit (01's) until the test releases it
        f"#!/bin/sh\n[ -e '{started}' ] && exit 0\ntouch '{started}'; i=0; "
        f"while [ ! -e '{release}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
    )
    hook.chmod(0o755)
    return packet, started, release


def _committing(packet: Path, started: Path, runner: subprocess.Popen[str]) -> None:
    """Wait until the snapshot shows prompt 01's committing stage."""
    path = packet / ".prompt_runner" / "control" / "snapshot.json"
    deadline = time.monotonic() + 60
    while True:
        assert runner.poll() is None, "the run ended before 01 was committed"
        assert time.monotonic() < deadline, "01's committing stage was never shown"
        try:
            stage = json.loads(path.read_text()).get("stage")
        except (OSError, ValueError):
            stage = None
        if started.exists() and stage == {**(stage or {}), "name": "committing", "prompt_id": "01"}:
            return
        time.sleep(0.05)


def test_a_steer_sent_while_a_prompt_is_committed_is_refused_not_given_to_the_next(
    tmp_path: Path,
) -> None:
    packet, started, release = _two_prompts_with_a_held_commit(tmp_path)
    with _runner(packet) as runner:
        try:
            _committing(packet, started, runner)
            sent = cli("control", "steer", packet, "GUIDANCE FOR 01", "--json")
            text = cli("control", "steer", packet, "MORE FOR 01")
        finally:
            release.touch()
        out, _ = runner.communicate(timeout=120)
    assert runner.returncode == 0, out

    steers = [e for e in log(packet) if e["command"] == "steer"]
    assert [e["outcome"] for e in steers] == ["rejected", "rejected"], steers
    for entry in steers:
        assert entry["reason"] == (
            "prompt 01's last session had ended (it was being committed) and no further "
            "session of it follows: there is nothing left to steer"
        )
    assert "interrupting to steer" not in out
    assert "GUIDANCE FOR 01" not in out
    assert not (packet / ".prompt_runner" / "interventions").exists()
    assert prompt_record(packet, "02")["steered"] is False
    assert prompt_record(packet, "02")["status"] == "completed"
    assert sent.returncode == 0, sent.stderr  # the sender says where the steer lands
    doc = json.loads(sent.stdout)
    assert (doc["stage"], doc["prompt_id"], doc["outcome"]) == ("committing", "01", "queued")
    assert text.returncode == 0, text.stderr
    assert "prompt 01 is being committed" in text.stdout
    assert "never given to the next prompt" in text.stdout


def test_a_steer_queued_before_a_resumed_run_still_reaches_its_first_running_prompt(
    tmp_path: Path,
) -> None:
    """A prompt the resumed run skips (completed before) has no boundary of its own
    in this invocation: a steer waiting from before the run is not refused as
    that prompt's, it reaches the first prompt that runs (README)."""
    packet = make_packet(
        tmp_path,
        {
            pid: {
                "simulate": {
                    "attempts": [
                        {"delay_ms": 3000, "writes": [{"path": f"f{pid}.txt", "text": "x\n"}]}
                    ]
                },
                "verify": {"files_exist": [f"f{pid}.txt"]},
            }
            for pid in ("01", "02")
        },
        manifest={"recovery": {"retry": {"base_delay_ms": 0}, **NOREPAIR}},
    )
    with _runner(packet, "--no-commit") as first:
        _read_until(first, "session sim-01")
        stop = build_request(  # written at once: the CLI's start-up may outlast the session
            "stop", {"after_prompt": True}, run_id=current_run_id(packet), author="ops"
        )
        control(packet).write_request(stop)
        out, _ = first.communicate(timeout=60)
    assert first.returncode == 143, out
    assert prompt_record(packet, "01")["status"] == "completed"
    queued = cli("control", "steer", packet, "FOR THE RESUMED RUN")
    assert queued.returncode == 0, queued.stdout + queued.stderr
    resumed = cli("run", packet, "--no-commit")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    (steer,) = [e for e in log(packet) if e["command"] == "steer"]
    assert (steer["outcome"], steer["prompt_id"]) == ("applied", "02"), steer
    assert prompt_record(packet, "02")["steered"] is True
