"""``watch --for --every``: a bounded watch of a real run that leaves acceptance evidence.

Real runs (``prompt-runner run`` in a subprocess, the simulated provider with
delays), a real ``watch`` subprocess, a real ``kill -9``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.state.layout import StateLayout
from prompt_runner.watch import bounded
from tests.helpers.packets import make_packet

WATCH = [sys.executable, "-m", "prompt_runner", "watch"]


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def steps(count: int, delay_ms: int) -> dict[str, dict[str, Any]]:
    """``count`` prompts, each silent for ``delay_ms`` and then writing its file."""
    return {
        f"{n:02d}": {
            "simulate": {
                "attempts": [{"delay_ms": delay_ms, "writes": [{"path": f"f{n}.txt", "text": "x"}]}]
            },
            "verify": {"files_exist": [f"f{n}.txt"]},
        }
        for n in range(1, count + 1)
    }


def start_run(packet: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as sink:
        run = subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(packet)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    pid_file = StateLayout.of_packet(packet).run_pid
    deadline = time.monotonic() + 60
    while not pid_file.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), f"the run never wrote run.pid: {log.read_text()[-2000:]}"
    return run


def stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


@pytest.fixture
def runs() -> Iterator[list[subprocess.Popen[Any]]]:
    started: list[subprocess.Popen[Any]] = []
    yield started
    for process in started:
        stop(process)


def evidence(packet: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The one watch's JSONL samples and its report under the packet's state root."""
    acceptance = StateLayout.of_packet(packet).acceptance_dir
    (samples,) = acceptance.glob("watch-*.jsonl")
    (report,) = acceptance.glob("watch-*.report.json")
    assert report.name == samples.name.replace(".jsonl", ".report.json")
    lines = samples.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines], json.loads(report.read_text(encoding="utf-8"))


def test_a_healthy_run_passes_a_full_interval(
    tmp_path: Path, runs: list[subprocess.Popen[Any]]
) -> None:
    """The acceptance point: a packet with delays runs while ``watch --for 20s
    --every 1s --require-running --require-progress --progress-timeout 10s
    --json`` passes: exit 0, report passed, every sample a line on stdout, the
    JSONL complete."""
    packet = make_packet(tmp_path, steps(14, 2500))
    runs.append(start_run(packet, tmp_path / "run.log"))
    res = cli(
        "watch",
        str(packet),
        "--for",
        "20s",
        "--every",
        "1s",
        "--require-running",
        "--require-progress",
        "--progress-timeout",
        "10s",
        "--json",
    )
    assert runs[0].poll() is None, "the run ended before the watch did: make it longer"
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    assert res.stderr == ""
    printed = [json.loads(line) for line in res.stdout.splitlines()]
    *shown, report = printed
    assert report["schema"] == "prompt_runner.watch.report/v1"
    assert report["passed"] is True and report["ended"] == "completed"
    assert report["violations"] == [] and report["failed_sample"] is None
    assert report["elapsed_s"] >= 20.0
    assert report["requirements"] == {
        "require_running": True,
        "require_progress": True,
        "progress_timeout_s": 10.0,
    }
    samples, written = evidence(packet)
    assert written == report
    assert samples == shown  # every sample on stdout is on disk, whole and in order
    assert len(samples) == report["sample_count"] >= 15
    assert [s["seq"] for s in samples] == list(range(1, len(samples) + 1))
    for s in samples:
        assert s["schema"] == "prompt_runner.watch.sample/v1"
        assert s["healthy"] is True and s["violations"] == []
        assert s["state"] == "running" and s["runner"] == "up" and s["pid"] == runs[0].pid
        assert s["progress_age_s"] is not None and s["progress_age_s"] <= 10.0
    assert report["first_sample"] == samples[0] and report["last_sample"] == samples[-1]
    assert samples[-1]["elapsed_s"] >= 20.0
    assert samples[-1]["commits"] > samples[0]["commits"]  # the run went on meanwhile


def test_kill_9_of_the_runner_fails_the_next_sample(
    tmp_path: Path, runs: list[subprocess.Popen[Any]]
) -> None:
    packet = make_packet(tmp_path, steps(1, 60_000))
    runner = start_run(packet, tmp_path / "run.log")
    runs.append(runner)
    watcher = subprocess.Popen(
        [*WATCH, str(packet), "--for", "2m", "--every", "1s", "--require-running", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    runs.append(watcher)
    assert watcher.stdout is not None
    before = [json.loads(watcher.stdout.readline()) for _ in range(2)]
    assert all(s["healthy"] and s["state"] == "running" for s in before)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait(timeout=30)
    killed_at = time.time()
    out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 1, err
    assert time.time() - killed_at < 10  # the next sample ended it, not the 2 minutes
    *after, report = [json.loads(line) for line in out.splitlines()]
    samples = before + after
    failing = samples[-1]
    assert all(s["healthy"] for s in samples[:-1]) and not failing["healthy"]
    assert failing["state"] == "unknown" and failing["runner"] == "down"
    assert [v["code"] for v in failing["violations"]] == ["runtime_unhealthy", "not_running"]
    assert failing["violations"][0]["reason"] == "runner_gone"
    assert failing["violations"][1] == {"code": "not_running", "state": "unknown"}
    assert report["passed"] is False and report["ended"] == "unhealthy"
    assert report["violations"] == failing["violations"]
    assert report["failed_sample"] == failing["seq"] == len(samples)
    on_disk, written = evidence(packet)
    assert on_disk == samples and written == report


def test_a_silent_run_is_progress_stale_with_its_age_and_the_limit(
    tmp_path: Path, runs: list[subprocess.Popen[Any]]
) -> None:
    packet = make_packet(tmp_path, steps(1, 60_000))
    runs.append(start_run(packet, tmp_path / "run.log"))
    res = cli(
        "watch",
        str(packet),
        "--for",
        "1m",
        "--every",
        "1s",
        "--require-running",
        "--require-progress",
        "--progress-timeout",
        "3s",
    )
    assert res.returncode == 1, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert "UNHEALTHY progress_stale (no progress for" in lines[-2]
    assert lines[-1].startswith("watch failed at sample ") and "limit 3s" in lines[-1]
    samples, report = evidence(packet)
    (stale,) = report["violations"]
    assert stale["code"] == "progress_stale" and stale["progress_limit_s"] == 3.0
    assert 3.0 < stale["progress_age_s"] < 30.0
    assert stale["last_progress_at"] == samples[-1]["last_progress_at"]
    assert samples[-1]["state"] == "running"  # alive, just silent


def test_durations_and_flags_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, steps(1, 0))
    acceptance = StateLayout.of_packet(packet).acceptance_dir
    for args, said in (
        (["--for", "10x"], "--for: '10x' is not a duration"),
        (["--for", "1m", "--every", "0s"], "--every: '0s' is no time at all"),
        (["--for=-5m"], "--for: '-5m' is not a duration"),
        (
            ["--for", "1m", "--require-progress", "--progress-timeout", "soon"],
            "--progress-timeout: 'soon' is not a duration",
        ),
        (["--for", "1m", "--progress-timeout", "5m"], "add --require-progress"),
        (["--every", "1m"], "--every applies to a bounded watch: add --for"),
        (["--require-running"], "add --for DURATION"),
        (["--for", "1m", "--once"], "--once does not apply"),
        (["--for", "1m", "--interval", "5"], "--interval does not apply"),
        (
            ["--for", "99999999999h", "--every", "99999999999h"],
            "--for: '99999999999h' is longer than 30 days, the longest duration taken; give 30d",
        ),
        (["--for", "1m", "--every", "31d"], "--every: '31d' is longer than 30 days"),
        (
            ["--for", "1m", "--require-progress", "--progress-timeout", "999999h"],
            "--progress-timeout: '999999h' is longer than 30 days",
        ),
    ):
        res = cli("watch", str(packet), *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert said in res.stderr, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
        assert res.stdout == ""
        assert not acceptance.exists()
    res = cli("watch", str(tmp_path / "nowhere"), "--for", "1m")
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_every_sample_is_fsynced_before_it_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library call: each sample reaches ``on_sample`` only after an fsync of
    the evidence file (a spy that lets every fsync through)."""
    packet = make_packet(tmp_path, steps(1, 0))
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        real_fsync(fd)
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))

    monkeypatch.setattr(os, "fsync", spy)
    seen: list[tuple[int, int]] = []

    def on_sample(doc: dict[str, Any]) -> None:
        seen.append((doc["seq"], sum(p.endswith(".jsonl") for p in synced)))

    report = prompt_runner.watch_for(packet, for_s="2s", every_s=1, on_sample=on_sample)
    assert report.passed and report.ended == "completed" and report.sample_count == 3
    assert all(fsyncs >= seq for seq, fsyncs in seen), seen
    assert report.evidence.read_text().count("\n") == 3
    assert report.to_dict()["report"] == str(report.report)
    assert report.report.exists() and report.evidence.parent == (
        StateLayout.of_packet(packet).acceptance_dir
    )


def test_an_interrupted_watch_still_writes_its_report(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, steps(1, 0))

    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bounded.watch_for(packet, for_s=60, every_s=1, clock=bounded.Clock(sleep=interrupted))
    samples, report = evidence(packet)
    assert report["passed"] is False and report["ended"] == "interrupted"
    assert report["sample_count"] == 1 == len(samples) and report["finished_at"]


def test_two_watches_in_one_second_get_their_own_files(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, steps(1, 0))
    state = StateLayout.of_packet(packet)
    first = bounded.claim_stamp(state, 1_800_000_000.0)
    second = bounded.claim_stamp(state, 1_800_000_000.0)
    assert first[0].name == "watch-20270115T080000Z.jsonl"
    assert second[0].name == "watch-20270115T080000Z-2.jsonl"
    assert second[1].name == "watch-20270115T080000Z-2.report.json"


def test_an_unhealthy_end_is_sent_to_the_packets_notify(tmp_path: Path) -> None:
    """H-notify's ``watch_unhealthy``: the document on the command's stdin."""
    got = tmp_path / "notification.json"
    command = [sys.executable, "-c", f"import sys; open({str(got)!r}, 'w').write(sys.stdin.read())"]
    packet = make_packet(tmp_path, steps(1, 0), manifest={"notify": {"command": command}})
    res = cli("watch", str(packet), "--for", "1m", "--every", "1s", "--require-running")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "not_running (state not_started)" in res.stdout.splitlines()[-1]
    doc = json.loads(got.read_text())
    assert doc["kind"] == "watch_unhealthy" and doc["schema"] == "prompt_runner.notification/v1"
    assert doc["details"]["violations"] == [{"code": "not_running", "state": "not_started"}]
    _, report = evidence(packet)
    assert doc["details"]["report"] == report["report"] and "notify_error" not in report
    log = StateLayout.of_packet(packet).notifications.read_text()
    assert '"delivered"' in log


@pytest.mark.parametrize("value", [float("inf"), 31 * 86400.0, float("nan"), 0])
def test_the_library_refuses_a_span_it_cannot_wait_with_argument_error(
    tmp_path: Path, value: float
) -> None:
    """``watch_for(for_s=inf)`` raised a bare ValueError from deep inside the watch
    (nan was refused as an ArgumentError): a span over 30 days is refused the same
    way, naming the argument and the longest span taken, before anything is written."""
    packet = make_packet(tmp_path, steps(1, 0))
    for kwargs in ({"for_s": value, "every_s": 1}, {"for_s": "1m", "every_s": value}):
        with pytest.raises(prompt_runner.ArgumentError) as err:
            prompt_runner.watch_for(packet, **kwargs)
        name = "for_s" if kwargs["for_s"] is value else "every_s"
        assert str(err.value).startswith(f"watch_for({name}=...): ")
        if value > 0:  # inf and 31 days (nan is not > 0)
            assert "longer than 30 days (2592000 s)" in str(err.value)
    assert not StateLayout.of_packet(packet).acceptance_dir.exists()
