"""``watch`` samples say the run's stage outside a session -- verifying,
committing, since when -- as ``control status`` does.

The control snapshot carried ``stage`` while a slow verify command or commit
hook ran, but neither ``watch --once --json`` nor a bounded ``watch --for``
sample showed it, so a watch of a run held for minutes by its test suite or a
pre-commit hook saw only a quiet runner. Real runs of the simulated provider in
a real git repo, a real blocking hook or verify command, the real CLI (its
argparse-free ``watch --once`` included), the library, and a real SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prompt_runner.api_watch import watch_sample
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

WRITES = {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]}


def _blocking(started: Path, release: Path) -> str:
    """Shell that says it began, then waits (up to 60 s) for ``release``."""
    return (
        f"touch '{started}'; i=0; while [ ! -e '{release}' ] && [ $i -lt 1200 ]; "
        "do sleep 0.05; i=$((i+1)); done"
    )


def _snapshot_stage(packet: Path) -> Any:
    path = packet / ".prompt_runner" / "control" / "snapshot.json"
    try:
        return json.loads(path.read_text()).get("stage")
    except (OSError, ValueError):
        return None


@contextmanager
def _staged(packet: Path, started: Path, release: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A run of ``packet`` held in a stage until the block ends (then released)."""
    argv = [sys.executable, "-m", "prompt_runner", "run", str(packet)]
    runner = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (started.exists() and _snapshot_stage(packet) is not None):
            assert runner.poll() is None, "the run ended before its stage was shown"
            assert time.monotonic() < deadline, "the stage was never shown"
            time.sleep(0.05)
        yield runner
    finally:
        release.touch()
        try:
            runner.wait(timeout=60)
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait()


def _once(packet: Path) -> dict[str, Any]:
    once = cli("watch", packet, "--once", "--json")
    assert once.returncode == 0, once.stderr
    doc: dict[str, Any] = json.loads(once.stdout)
    return doc


def _bounded(packet: Path) -> list[dict[str, Any]]:
    out = cli("watch", packet, "--for", "1s", "--every", "1s", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    *samples, report = [json.loads(line) for line in out.stdout.splitlines()]
    assert report["passed"] and len(samples) == 2
    return samples


def _check_shown(packet: Path, name: str) -> None:
    """Every kind of sample shows the snapshot's stage, ``name`` of prompt 01."""
    stage = _snapshot_stage(packet)
    assert isinstance(stage, dict) and (stage["name"], stage["prompt_id"]) == (name, "01")
    once = _once(packet)
    assert once["runner"] == "up" and once["stage"] == stage
    typed = watch_sample(packet)
    assert typed.stage == stage and typed.to_dict()["stage"] == stage
    assert typed.line.endswith(f" stage={name}")
    text = cli("watch", packet, "--once")
    assert text.stdout.rstrip("\n").endswith(f" stage={name}"), text.stdout
    samples = _bounded(packet)
    assert [s["stage"] for s in samples] == [stage, stage]
    assert all(s["state"] == "running" for s in samples)
    lines = cli("watch", packet, "--for", "1s", "--every", "1s").stdout.splitlines()
    watched = [line for line in lines if line.startswith("WATCH ")]
    assert len(watched) == 2 and all(f" stage={name} " in w for w in watched), lines


def _no_stage_shown(packet: Path) -> None:
    assert _once(packet)["stage"] is None
    assert watch_sample(packet).stage is None
    assert "stage=" not in cli("watch", packet, "--once").stdout
    assert [s["stage"] for s in _bounded(packet)] == [None, None]


def test_samples_say_committing_while_a_slow_commit_hook_runs(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"commit": "feat: a", "simulate": WRITES}})
    started, release = tmp_path / "hook-started", tmp_path / "release"
    hook = tmp_path / "repo" / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\n{_blocking(started, release)}\n")
    hook.chmod(0o755)
    with _staged(packet, started, release):
        _check_shown(packet, "committing")
    _no_stage_shown(packet)  # the run completed: no runner, no stage


def test_samples_say_verifying_while_a_slow_verify_command_runs(tmp_path: Path) -> None:
    started, release = tmp_path / "verify-started", tmp_path / "release"
    verify = {"commands": [{"run": _blocking(started, release), "timeout_ms": 90_000}]}
    packet = make_packet(
        tmp_path, {"01": {"commit": "feat: a", "simulate": WRITES, "verify": verify}}
    )
    with _staged(packet, started, release):
        _check_shown(packet, "verifying")


def test_a_killed_runners_last_stage_is_no_stage(tmp_path: Path) -> None:
    """After a kill -9 the snapshot still says verifying; no sample does."""
    started, release = tmp_path / "verify-started", tmp_path / "release"
    verify = {"commands": [{"run": _blocking(started, release), "timeout_ms": 90_000}]}
    packet = make_packet(tmp_path, {"01": {"simulate": WRITES, "verify": verify}})
    with _staged(packet, started, release) as runner:
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
        assert _snapshot_stage(packet)["name"] == "verifying"  # stale, as the runner left it
        once = _once(packet)
        assert (once["runner"], once["stage"]) == ("down", None)
        assert watch_sample(packet).stage is None
        assert "stage=" not in cli("watch", packet, "--once").stdout
        out = cli("watch", packet, "--for", "1s", "--every", "1s", "--json")
        first = json.loads(out.stdout.splitlines()[0])
        assert (first["state"], first["stage"]) == ("unknown", None)
