"""Hostile request files: nesting too deep to decode, a repeated key, a request
too large to send. Each request gets exactly one receipt saying why it was
refused, and the plane goes on deciding the next ones (finding 04, 05)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.control.inbox import UNPARSEABLE, read_request
from prompt_runner.control.requests import build_request
from prompt_runner.control.store import ControlStore
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.untrusted_json import MAX_REQUEST_DEPTH
from tests.helpers.cli import cli
from tests.helpers.live_run import start_run, wait_for_snapshot
from tests.helpers.packets import make_packet
from tests.helpers.procs import wait_for

DEEP = '{"command":"steer","params":{"text":' + "[" * 200_000 + "]" * 200_000 + "}}"
"""400 KB, under the 1 MiB cap: the standard library's decoder gives up with RecursionError."""

VIEW_THEN_STOP = (
    '{"command":"set_view","params":{"log_mode":"verbose"},"command":"stop","params":{}}'
)
"""Read with the last value of each key, a ``stop``; with the first, a view change."""


def _plant(layout: StateLayout, name: str, text: str) -> str:
    """Put ``text`` into ``requests/`` whole, as a writer does (temp file, rename)."""
    layout.control_tmp_dir.mkdir(parents=True, exist_ok=True)
    layout.requests_dir.mkdir(parents=True, exist_ok=True)
    tmp = layout.control_tmp_dir / f"{name}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.rename(tmp, layout.requests_dir / name)
    return name


def _nested(levels: int) -> str:
    """A request whose whole document nests ``levels`` deep (the object is level 1)."""
    inner = "[" * (levels - 2) + "]" * (levels - 2)
    return '{"command":"steer","params":{"text":' + inner + "}}"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (DEEP, "nested too deeply to decode"),
        (VIEW_THEN_STOP, "duplicate key 'command'"),
        ('{"command":"steer","params":{"text":"a","text":"b"}}', "duplicate key 'text'"),
        (_nested(MAX_REQUEST_DEPTH + 1), f"nested deeper than {MAX_REQUEST_DEPTH} levels"),
    ],
    ids=["too-deep-to-decode", "repeated-command", "repeated-param", "over-the-depth-cap"],
)
def test_the_reader_refuses_what_it_cannot_trust_without_raising(
    tmp_path: Path, text: str, detail: str
) -> None:
    layout = StateLayout(tmp_path / ".prompt_runner")
    name = _plant(layout, "20261201-000000-000000-0000001-deadbeef.json", text)
    pending = read_request(layout, name)
    assert pending is not None
    assert (pending.ok, pending.payload, pending.error) == (False, None, UNPARSEABLE)
    assert pending.detail == detail


def test_a_request_as_deep_as_the_cap_is_read(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path / ".prompt_runner")
    name = _plant(layout, "20261201-000000-000000-0000001-0000cafe.json", _nested(64))
    pending = read_request(layout, name)
    assert pending is not None and pending.ok, pending
    assert pending.payload is not None and pending.payload["command"] == "steer"


def test_a_request_the_client_writes_is_read_back_whole(tmp_path: Path) -> None:
    store = ControlStore(tmp_path / ".prompt_runner")
    request = build_request(
        "amend",
        {"prompt_id": "01", "reason": "r", "add": {"files_exist": ["a.txt", "b.txt"]}},
        run_id="R1",
        author="ada",
        known_clauses=("files_exist",),
    )
    name = store.write_request(request)
    pending = read_request(store.layout, name)
    assert pending is not None and pending.ok, pending
    assert pending.payload == request


def _receipt(store: ControlStore, name: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        receipt = store.read_outcome(name)
        if receipt is not None:
            return receipt
        time.sleep(0.05)
    raise AssertionError(f"no receipt for {name} after {timeout} s")


def test_a_live_run_refuses_hostile_requests_and_goes_on_deciding(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"messages": ["working"], "delay_ms": 30_000}]},
                "verify": {"files_exist": ["README.md"]},
            }
        },
    )
    store = ControlStore(packet / ".prompt_runner")
    runner = start_run(packet)
    try:
        wait_for_snapshot(
            packet, lambda s: s.get("status") == "running" and s.get("event_count", 0) > 0
        )
        deep = _plant(store.layout, "20261201-000000-000000-0000001-deadbeef.json", DEEP)
        dup = _plant(store.layout, "20261201-000000-000000-0000002-aaaaaaaa.json", VIEW_THEN_STOP)

        refused = {name: _receipt(store, name) for name in (deep, dup)}
        assert refused[deep]["outcome"] == refused[dup]["outcome"] == "rejected"
        assert refused[deep]["reason"] == "unparseable: nested too deeply to decode"
        assert refused[dup]["reason"] == "unparseable: duplicate key 'command'"
        assert runner.poll() is None, "the repeated key was read as a stop"
        logged = {e.get("request"): e["outcome"] for e in store.read_log()}
        assert logged[deep] == logged[dup] == "rejected"

        # Too large to send (1.5 MB once JSON writes each \x01 as \u0001): bad
        # input, exit 2, one sentence, nothing written, the refusal logged.
        text = "\x01" * 131_000  # one argument holds at most 128 KiB
        big = cli("control", "steer", packet, text, "--author", text)
        assert big.returncode == 2, big.stderr[-500:]
        assert "Traceback" not in big.stderr
        lines = big.stderr.strip().splitlines()
        assert len(lines) == 1 and "this steer request is too large to send" in lines[0]
        assert "limit is 1048576" in lines[0]
        assert not list(store.layout.requests_dir.iterdir())
        last = store.read_log()[-1]
        assert (last["command"], last["outcome"], last["params"]) == ("steer", "rejected", {})
        assert last["reason"].startswith("this steer request is too large to send")

        # The plane still decides what comes next.
        steer = cli("control", "steer", packet, "are you alive", "--json")
        assert steer.returncode == 0, steer.stdout + steer.stderr
        receipt = _receipt(store, _request_name(steer.stdout))
        assert receipt["outcome"] == "applied", receipt
        # complete_request makes the receipt durable first, then removes the request
        requests = store.layout.requests_dir
        assert wait_for(lambda: not list(requests.iterdir()), 10), list(requests.iterdir())
    finally:
        runner.terminate()
        try:
            runner.wait(timeout=30)
        except subprocess.TimeoutExpired:
            runner.kill()
            runner.wait()


def _request_name(stdout: str) -> str:
    name = json.loads(stdout)["request"]
    assert isinstance(name, str)
    return name
