"""CLI session hygiene: time bounds, interrupt, terminate, no orphans (real processes)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from prompt_runner.providers import claude
from prompt_runner.providers.base import SessionRequest, TimeBounds
from prompt_runner.providers.events import Event
from tests.providers.conftest import FakeCli, case_dir, kinds

INIT = '{"type":"system","subtype":"init","session_id":"s-1","model":"m","cwd":"/w"}\n'


def request(cwd: Path, bounds: TimeBounds) -> SessionRequest:
    return SessionRequest(
        prompt_id="01", prompt_text="go", cwd=cwd, provider="claude", bounds=bounds
    )


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pid: int, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


def run(fake_cli: FakeCli, tmp_path: Path, runs: list[dict[str, Any]], bounds: TimeBounds) -> Any:
    fake_cli.install("claude", runs)
    events: list[Event] = []
    handle = claude.make_provider().start(request(tmp_path, bounds), events.append)
    return handle, events


def test_idle_hang_ends_as_transport_timeout_with_no_orphan(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    handle, events = run(
        fake_cli,
        tmp_path,
        [{"stdout": INIT, "hang": True, "ignore_sigterm": True, "grandchild": True}],
        TimeBounds(idle_ms=600, run_deadline_ms=60_000),
    )
    started = time.monotonic()
    result = handle.wait(30)
    elapsed = time.monotonic() - started
    assert result is not None
    assert elapsed < 10
    assert result.failure is not None
    assert result.failure.failure_class == "transport_timeout"
    assert result.failure.provider_code == "idle_timeout"
    assert result.failure.resumable
    assert result.session_id == "s-1"
    [record] = fake_cli.records()
    assert wait_gone(record["pid"])
    assert wait_gone(record["grandchild_pid"])
    assert kinds(events)[0] == "session_started"
    assert events[-1].kind == "result" and events[-1].data["ok"] is False


def test_run_deadline_ends_a_chatty_cli(fake_cli: FakeCli, tmp_path: Path) -> None:
    chatter = INIT + '{"type":"system","subtype":"status","status":"x"}\n' * 200
    handle, _ = run(
        fake_cli,
        tmp_path,
        [{"stdout": chatter, "line_delay_ms": 20, "hang": True}],
        TimeBounds(idle_ms=60_000, run_deadline_ms=800),
    )
    result = handle.wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "transport_timeout"
    assert result.failure.provider_code == "run_deadline"
    assert wait_gone(fake_cli.records()[0]["pid"])


def test_final_record_then_hang_counts_as_finished(fake_cli: FakeCli, tmp_path: Path) -> None:
    handle, _ = run(
        fake_cli,
        tmp_path,
        [{"case": str(case_dir("claude", "success_write")), "hang": True}],
        TimeBounds(idle_ms=500, run_deadline_ms=60_000),
    )
    result = handle.wait(30)
    assert result is not None and result.ok, result


def test_wait_returns_none_while_running_and_terminate_reaps_group(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    handle, _ = run(
        fake_cli,
        tmp_path,
        [{"stdout": INIT, "hang": True, "ignore_sigterm": True, "grandchild": True}],
        TimeBounds(idle_ms=60_000, run_deadline_ms=60_000),
    )
    assert handle.wait(0.5) is None
    handle.terminate()
    result = handle.wait(10)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "user_cancelled"
    record = fake_cli.records()[0]
    assert wait_gone(record["pid"]) and wait_gone(record["grandchild_pid"])


def test_interrupt_ends_the_turn_resumably(fake_cli: FakeCli, tmp_path: Path) -> None:
    handle, _ = run(
        fake_cli,
        tmp_path,
        [{"stdout": INIT, "hang": True}],
        TimeBounds(idle_ms=60_000, run_deadline_ms=60_000),
    )
    assert handle.wait(0.5) is None
    handle.interrupt()
    result = handle.wait(15)
    assert result is not None
    assert result.interrupted
    assert result.session_id == "s-1"
    assert result.failure is not None
    assert result.failure.failure_class == "user_cancelled"
    assert result.failure.resumable and not result.failure.terminal


@pytest.mark.parametrize("sink_fails", [True])
def test_a_failing_sink_does_not_stall_the_session(
    fake_cli: FakeCli, tmp_path: Path, sink_fails: bool
) -> None:
    fake_cli.install("claude", [{"case": str(case_dir("claude", "success_write"))}])

    def sink(event: Event) -> None:
        if sink_fails:
            raise RuntimeError("broken renderer")

    handle = claude.make_provider().start(
        request(tmp_path, TimeBounds(idle_ms=5_000, run_deadline_ms=30_000)), sink
    )
    result = handle.wait(30)
    assert result is not None and result.ok


class BatchSink:
    """A sink that takes a pipe read's events at once (like the runner's)."""

    def __init__(self) -> None:
        self.batches: list[list[Event]] = []
        self.singles: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.singles.append(event)

    def many(self, events: list[Event]) -> None:
        self.batches.append(list(events))


def test_a_sink_with_many_gets_each_read_s_events_in_one_call_in_order(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    text = (
        '{"type":"assistant","session_id":"s-1","message":{"content":'
        '[{"type":"text","text":"line %d"}]}}\n'
    )
    result = '{"type":"result","subtype":"success","is_error":false,"session_id":"s-1"}\n'
    stdout = INIT + "".join(text % i for i in range(500)) + result
    # one write: a flush per line lets a reader on an idle core take one line per read
    fake_cli.install("claude", [{"stdout": stdout, "one_write": True}])
    sink = BatchSink()
    handle = claude.make_provider().start(
        request(tmp_path, TimeBounds(idle_ms=30_000, run_deadline_ms=60_000)), sink
    )
    outcome = handle.wait(30)
    assert outcome is not None and outcome.ok
    streamed = [e for batch in sink.batches for e in batch]
    texts = [e.data["text"] for e in streamed if e.kind == "assistant_text"]
    assert texts == [f"line {i}" for i in range(500)]  # every event, in order
    assert len(sink.batches) < 500  # delivered per read, not per line
    assert kinds(streamed)[0] == "session_started"
