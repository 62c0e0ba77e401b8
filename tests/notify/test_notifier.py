"""The notifier: off the caller's thread, bounded, retried, recorded, never raising."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.notify import Notifier, NotifyConfig, open_notifier
from prompt_runner.notify.notifier import QUEUE_SIZE
from prompt_runner.state.layout import StateLayout
from tests.helpers.webhook import webhook


def _config(**fields: Any) -> NotifyConfig:
    return NotifyConfig(**{"timeout_s": 2.0, "retries": 0, **fields})


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_emit_returns_at_once_and_close_waits_for_the_delivery(tmp_path: Path) -> None:
    record = tmp_path / "n.jsonl"
    with webhook() as hook:
        # timeout 30 s, not 2: the first delivery imports apprise in the worker,
        # which took over 2 s on a loaded machine (the test then saw no document)
        notifier = Notifier(
            _config(urls=(hook.url(),), timeout_s=30.0), record_path=record, packet="p", run_id="R"
        )
        notifier.emit(
            "usage_wait_started", prompt="01", reason="r", next_step="n", details={"a": 1}
        )
        notifier.close()
        (doc,) = hook.documents()
    assert doc["kind"] == "usage_wait_started" and doc["prompt"] == "01"
    assert doc["details"] == {"a": 1} and doc["run_id"] == "R"
    assert doc["summary"] == "p: waiting for a usage window (prompt 01)"
    assert hook.requests[0]["body"]["title"] == doc["summary"]
    assert [line["outcome"] for line in _lines(record)] == ["delivered"]


def test_kinds_outside_on_are_not_sent() -> None:
    with webhook() as hook:
        notifier = Notifier(_config(urls=(hook.url(),), on=frozenset({"run_failed"})))
        notifier.emit("run_completed", reason="r", next_step="n")
        notifier.emit("run_failed", reason="r", next_step="n")
        notifier.close()
        assert [d["kind"] for d in hook.documents()] == ["run_failed"]


def test_an_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown notification kind 'run_done'"):
        Notifier.disabled().emit("run_done", reason="r", next_step="n")


def test_the_disabled_notifier_starts_nothing() -> None:
    notifier = Notifier.disabled()
    notifier.emit("run_completed", reason="r", next_step="n")
    notifier.close()
    assert not notifier.enabled and notifier.summary() is None


def test_close_of_a_hanging_target_returns_within_the_timeout(tmp_path: Path) -> None:
    record = tmp_path / "n.jsonl"
    with webhook(hang=True) as hook:
        notifier = Notifier(
            _config(urls=(hook.url(),), timeout_s=1.0, retries=3), record_path=record
        )
        notifier.emit("run_failed", reason="r", next_step="n")
        notifier.emit("run_completed", reason="r", next_step="n")
        started = time.monotonic()
        notifier.close()
        waited = time.monotonic() - started
    assert waited < 1.5
    outcomes = [(line["kind"], line["outcome"]) for line in _lines(record)]
    # the first delivery's own 1 s attempt bound and the 1 s exit deadline are
    # the same instant: under load either may end it first, and either is true
    assert outcomes[0] in (("run_failed", "abandoned"), ("run_failed", "timed_out"))
    assert outcomes[1:] == [("run_completed", "abandoned")]
    assert "notify" in (notifier.summary() or "")


def test_a_hanging_command_is_ended_at_the_exit_deadline(tmp_path: Path) -> None:
    record = tmp_path / "n.jsonl"
    pid_file = tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    )
    notifier = Notifier(
        _config(command=(sys.executable, "-c", script), timeout_s=1.0), record_path=record
    )
    notifier.emit("blocked", prompt="02", reason="r", next_step="n")
    time.sleep(0.3)
    started = time.monotonic()
    notifier.close()
    assert time.monotonic() - started < 2.0
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the worker reaps it
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    (line,) = _lines(record)
    assert line["outcome"] in ("timed_out", "abandoned")


def test_a_failing_command_is_retried_and_its_stderr_recorded(tmp_path: Path) -> None:
    record = tmp_path / "n.jsonl"
    count = tmp_path / "count"
    script = (
        f"import sys; open({str(count)!r}, 'a').write('x'); "
        "sys.stderr.write('no route to pager\\n'); sys.exit(3)"
    )
    notifier = Notifier(
        _config(command=(sys.executable, "-c", script), retries=1, timeout_s=5.0),
        record_path=record,
    )
    notifier.emit("budget_spent", prompt="01", reason="r", next_step="n")
    notifier.close()
    assert count.read_text() == "xx"
    (line,) = _lines(record)
    assert line["outcome"] == "failed" and line["attempts"] == 2
    assert line["error"].endswith("exited 3: no route to pager")


def test_a_full_queue_drops_and_records_never_blocks(tmp_path: Path) -> None:
    record = tmp_path / "n.jsonl"
    with webhook(hang=True) as hook:
        notifier = Notifier(_config(urls=(hook.url(),), timeout_s=0.5), record_path=record)
        started = time.monotonic()
        for _ in range(QUEUE_SIZE + 5):
            notifier.emit("watch_unhealthy", reason="r", next_step="n")
        assert time.monotonic() - started < 1.0
        notifier.close()
    outcomes = [line["outcome"] for line in _lines(record)]
    assert outcomes.count("dropped") >= 4
    assert len(outcomes) == QUEUE_SIZE + 5  # every event has its line


def test_an_unrecognised_url_is_recorded_failed() -> None:
    notifier = Notifier(_config(urls=("nosuchservice://x/y",)))
    notifier.emit("run_completed", reason="r", next_step="n")
    notifier.close()
    assert notifier.recorder.outcomes == {"failed": 1}


def test_open_notifier_records_under_the_state_root(tmp_path: Path) -> None:
    with (
        webhook() as hook,
        open_notifier(
            _config(urls=(hook.url(),)), state_root=tmp_path, packet="p", run_id="R"
        ) as notifier,
    ):
        notifier.emit("watch_unhealthy", reason="r", next_step="n")
    (line,) = _lines(StateLayout(tmp_path).notifications)
    assert line["kind"] == "watch_unhealthy" and line["run_id"] == "R"


def test_an_unwritable_record_is_counted_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with webhook() as hook:
        notifier = Notifier(_config(urls=(hook.url(),)), record_path=blocker / "n.jsonl")
        notifier.emit("run_completed", reason="r", next_step="n")
        notifier.close()
        assert len(hook.requests) == 1
    assert notifier.recorder.write_errors == 1
    assert "not recorded" in (notifier.summary() or "")


def test_a_signal_during_the_exit_wait_records_what_is_left_abandoned(tmp_path: Path) -> None:
    """The runner's SIGTERM (a ``stop`` whose grace ended) cuts ``close``'s wait
    short: the delivery in flight and the queued one get their ``abandoned``
    lines naming the signal before the interruption goes on up."""
    from prompt_runner.cli.running import SignalInterrupt

    def interrupt(signum: int, frame: object) -> None:
        raise SignalInterrupt(signum)

    record = tmp_path / "n.jsonl"
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        with webhook(hang=True) as hook:
            notifier = Notifier(_config(urls=(hook.url(),), timeout_s=30.0), record_path=record)
            notifier.emit("run_failed", reason="r", next_step="n")
            notifier.emit("run_completed", reason="r", next_step="n")
            deadline = time.monotonic() + 10
            while not hook.requests and time.monotonic() < deadline:
                time.sleep(0.02)  # the first delivery is in flight
            assert hook.requests, "the webhook was never called"
            timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
            timer.start()
            started = time.monotonic()
            with pytest.raises(SignalInterrupt):
                notifier.close()
            waited = time.monotonic() - started
            timer.join()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert waited < 5.0  # not the 30 s timeout
    lines = _lines(record)
    assert [(x["kind"], x["outcome"], x["attempts"]) for x in lines] == [
        ("run_failed", "abandoned", 1),
        ("run_completed", "abandoned", 0),
    ]
    assert all("ended by SIGTERM" in x["error"] for x in lines), lines
