"""Issue 19: a request reaches a silent run through file notification, and polling
stays the fallback (control/request_watch.py, ControlPlane._requests_changed)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.control import client
from prompt_runner.control.plane import ControlPlane, PromptInfo
from prompt_runner.control.request_watch import ENV_NOTIFY, notify_enabled
from prompt_runner.control.requests import build_request
from prompt_runner.control.store import ControlStore
from prompt_runner.render.text import Console
from prompt_runner.runner import session
from prompt_runner.runner.position import Position
from tests.control._helpers import FAST, NOREPAIR, make_packet, run_file, when_session_runs

VIEW = {"log_mode": "compact", "tool_output": "summary", "thinking": "hide", "diff": "none"}


class _Session:
    """A provider session that stays silent until told it is over."""

    session_id = "s1"

    def __init__(self) -> None:
        self.over = threading.Event()
        self.interrupted = 0

    def wait(self, timeout_s: float | None = None) -> object | None:
        return object() if self.over.wait(timeout_s or 0) else None

    def interrupt(self) -> None:
        self.interrupted += 1


def _plane(root: Path, *, notify: bool) -> ControlPlane:
    plane = ControlPlane(
        root,
        run_id="r1",
        packet="p",
        console=Console(None, dict(VIEW)),
        prompts={"01": PromptInfo("One", "simulated", None, 3)},
        position=Position("01", 1, "run"),
        notify=notify,
    )
    plane.start()
    return plane


def _request(root: Path, diff: str) -> Path:
    store = ControlStore(root)
    name = store.write_request(build_request("set_view", {"diff": diff}, run_id=None, author="t"))
    return store.request_outcome_path(name)


def _arrives(receipt: Path, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if receipt.exists():
            return True
        time.sleep(0.002)
    return receipt.exists()


def test_a_silent_session_gets_a_request_without_any_tick(tmp_path: Path) -> None:
    plane = _plane(tmp_path, notify=True)
    try:
        assert plane.request_watch is not None and plane.request_watch.wait_ready(10)
        handle = _Session()
        plane.tick("01", handle)  # the session starts; no tick follows, no event arrives
        receipt = _request(tmp_path, "stat")
        assert _arrives(receipt, 5), "the notification path did not decide the request"
        assert json.loads(receipt.read_text())["outcome"] == "applied"
        assert plane.console.view["diff"] == "stat"
        deadline = time.monotonic() + 5  # the snapshot follows the receipt without a tick too
        while (ControlStore(tmp_path).read_snapshot() or {}).get("view", {}).get("diff") != "stat":
            assert time.monotonic() < deadline, "the snapshot never showed the new view"
            time.sleep(0.005)
    finally:
        plane.finish("completed")


def test_outside_a_session_notification_decides_nothing_the_boundary_does(
    tmp_path: Path,
) -> None:
    plane = _plane(tmp_path, notify=True)
    try:
        assert plane.request_watch is not None and plane.request_watch.wait_ready(10)
        handle = _Session()
        plane.tick("01", handle)
        handle.over.set()  # the session ended: the workspace is being judged
        receipt = _request(tmp_path, "stat")
        assert not _arrives(receipt, 0.5)  # it waits for the boundary, as with polling
        plane.boundary("01", next_mode=None)
        assert receipt.exists()
        assert json.loads(receipt.read_text())["prompt_id"] is None  # decided between sessions
    finally:
        plane.finish("completed")


def test_with_notification_off_requests_are_polled_at_the_ticks(tmp_path: Path) -> None:
    plane = _plane(tmp_path, notify=False)
    try:
        assert plane.request_watch is None
        handle = _Session()
        plane.tick("01", handle)
        receipt = _request(tmp_path, "stat")
        assert not _arrives(receipt, 0.3)  # nothing watches: only a tick brings it in
        plane.tick("01", handle)
        assert json.loads(receipt.read_text())["outcome"] == "applied"
        assert plane.console.view["diff"] == "stat"
    finally:
        plane.finish("completed")


def test_the_environment_turns_notification_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert notify_enabled({}) and notify_enabled({ENV_NOTIFY: "1"})
    for off in ("0", "off", "False", " no "):
        assert not notify_enabled({ENV_NOTIFY: off})
    monkeypatch.setenv(ENV_NOTIFY, "0")
    plane = ControlPlane(Path("unused"), run_id="r1", packet="p", console=Console(None, VIEW))
    assert plane._notify is False


def _steered_packet(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [{"delay_ms": 60000}],  # silent for a minute unless steered
                    "resume": {"writes": [{"path": "NOTES.md", "text": "steered"}]},
                },
                "verify": {"files_exist": ["NOTES.md"]},
            }
        },
        manifest={"recovery": {**FAST, **NOREPAIR, "max_steers": 2}},
    )


def _steer_and_time(packet: Path) -> tuple[threading.Thread, dict[str, float]]:
    took: dict[str, float] = {}

    def steer() -> None:
        sent = time.monotonic()
        name = client.steer(packet, "look at NOTES.md", author="ada")
        receipt = ControlStore(packet / ".prompt_runner").request_outcome_path(name)
        _arrives(receipt, 60)
        took["receipt_s"] = time.monotonic() - sent

    return when_session_runs(packet, steer), took


def test_a_run_whose_poll_is_a_minute_away_takes_a_steer_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session, "TICK_S", 60.0)  # no tick would come before the minute is up
    packet = _steered_packet(tmp_path)
    thread, took = _steer_and_time(packet)
    started = time.monotonic()
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0, out
    assert took["receipt_s"] < 10, took  # decided through notification, not at the tick
    assert time.monotonic() - started < 30
    assert (packet.parent / "repo" / "NOTES.md").read_text() == "steered"


def test_a_run_with_notification_off_takes_a_steer_at_its_tick(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_NOTIFY, "0")
    packet = _steered_packet(tmp_path)
    thread, took = _steer_and_time(packet)
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0, out
    assert took["receipt_s"] < 10, took
    assert (packet.parent / "repo" / "NOTES.md").read_text() == "steered"


def _old_with_ids(event: Any, prompt_id: str, run_id: str) -> str:
    """HEAD's with_ids(None, ...) before issue 19: encode_body, then splice the ids."""
    from prompt_runner.render.sinks import encode_body
    from prompt_runner.state.jsonl import dumps_lenient

    encoded: str | None = encode_body(event)
    try:
        encoded.encode("utf-8")  # type: ignore[union-attr]
    except UnicodeEncodeError:
        encoded = None
    if encoded is None or not encoded.endswith("}") or encoded == "{}":
        record = event.to_dict()
        record["prompt_id"] = prompt_id
        record["run_id"] = run_id
        return dumps_lenient(record)
    ids = json.dumps({"prompt_id": prompt_id, "run_id": run_id}, ensure_ascii=False)
    return encoded[:-1] + "," + ids[1:-1].replace('": ', '":').replace(', "', ',"') + "}"


def test_one_event_at_a_time_writes_the_lines_it_wrote_before(tmp_path: Path) -> None:
    """Issue 19's one-event fast path (on_event, plane_files._line) changes no byte."""
    from prompt_runner.providers.events import Event

    events = [
        Event("assistant_text", {"text": 'caf\u00e9 \u2028 "q" \\ \x1f'}, at_ms=1),
        Event("tool_use", {"tool": "Read", "input": {"file_path": "a.py", "n": [1, 2.5]}}, at_ms=2),
        Event("usage", {"input_tokens": 1, "cost_usd": 1e-05, 3: "int key"}, at_ms=3),
        Event("session_started", {}, at_ms=4),
        Event("file_change", {"path": Path("odd/x.txt")}, at_ms=5),  # default=str
        Event("assistant_text", {"text": "lone \ud800 surrogate"}, at_ms=6),
        Event("assistant_text", {"kind": "shadowed", "text": "x"}, at_ms=7),
        Event("usage", {"big": 2**70}, at_ms=8),
        Event("usage", {"input_tokens": True, "cost_usd": 0.5}, at_ms=8),  # the same at_ms
        Event("usage", {"input_tokens": 2}, at_ms=8.0),  # type: ignore[arg-type] # equal, a float
        Event("tool_use", {"tool": "x", "input": {"n": 1}}, at_ms=9),
        Event("usage", {}, at_ms=9),
        Event("assistant_text", {"text": ["not", "a", "string"]}, at_ms=10),
        Event("assistant_text", {"prompt_id": "theirs", "run_id": "x"}, at_ms=11),
    ]
    plane = _plane(tmp_path, notify=False)
    expected = []
    for prompt_id in ("01", "02"):
        for event in events:
            plane.on_event(prompt_id, event)
            expected.append(_old_with_ids(event, prompt_id, "r1"))
    plane.finish("completed")
    written = ControlStore(tmp_path).events_path.read_bytes().split(b"\n")
    assert written[: len(expected)] == [
        line.encode("utf-8", "backslashreplace") for line in expected
    ]


def test_usage_events_count_into_the_snapshot_as_before(tmp_path: Path) -> None:
    """fold's written-out as_int: only ints count (not bools, floats or text), an
    int subclass as its value; cost only when a number."""
    import enum

    from prompt_runner.control.plane_files import as_int, new_snapshot
    from prompt_runner.providers.events import Event

    class Many(enum.IntEnum):
        SEVEN = 7

    values: list[Any] = [3, True, 2.5, "4", None, Many.SEVEN, -2, 2**70]
    plane = _plane(tmp_path, notify=False)
    tokens = {"input": 0, "output": 0, "cached": 0}
    cost = 0.0
    for n, value in enumerate(values):
        data = {"input_tokens": value, "output_tokens": values[-1 - n], "cost_usd": value}
        if n % 3 == 0:
            del data["output_tokens"]
        plane.on_event("01", Event("usage", data, at_ms=n))
        tokens["input"] += as_int(data.get("input_tokens"))
        tokens["output"] += as_int(data.get("output_tokens"))
        if isinstance(value, int | float):
            cost = round(cost + value, 6)
    assert plane.snapshot["tokens"] == tokens
    assert plane.snapshot["cost_usd"] == cost
    assert new_snapshot("r", "p", {})["tokens"] == {"input": 0, "output": 0, "cached": 0}
    plane.finish("completed")


def test_a_plane_dropped_without_finish_does_not_leave_its_watch_running(tmp_path: Path) -> None:
    import gc

    plane = _plane(tmp_path, notify=True)
    watch = plane.request_watch
    assert watch is not None and watch.wait_ready(10)
    thread = watch._thread
    assert thread is not None and thread.is_alive()
    del plane
    gc.collect()
    thread.join(5)  # the watch looks at its owner at least once a second
    assert not thread.is_alive()
