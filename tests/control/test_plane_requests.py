"""Catalog G7 and the issue's bad input: nothing through the transport is fatal."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from prompt_runner.control import client
from tests.control._helpers import (
    control,
    log,
    make_packet,
    run_file,
    when_session_runs,
)
from tests.helpers.cli import cli


def _drop(packet: Path, name: str, data: bytes | str) -> Path:
    requests = packet / ".prompt_runner" / "control" / "requests"
    requests.mkdir(parents=True, exist_ok=True)
    path = requests / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def test_catalog_g7_malformed_requests_are_logged_and_the_run_continues(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    base = "20260810-000000-000000"
    _drop(packet, f"{base}-1.json", "{ not json")
    _drop(packet, f"{base}-2.json", '{"params":{}}')
    _drop(packet, f"{base}-3.json", '{"command":"self_destruct","params":{}}')
    _drop(
        packet,
        f"{base}-4.json",
        '{"command":"set_view","params":{"tool_output":"full"},"run_id":"20200101T000000Z-1"}',
    )
    _drop(
        packet,
        f"{base}-5.json",
        '{"command":"set_view","params":{"log_mode":"verbose"},"author":"ada"}',
    )
    proc = cli("run", packet, "01", "--no-commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = control(packet)
    assert list(store.requests_dir.iterdir()) == []
    entries = json.loads(
        "[" + ",".join(cli("control", "log", packet, "--json").stdout.splitlines()) + "]"
    )
    assert [e["request"] for e in entries] == [f"{base}-{i}.json" for i in range(1, 6)]
    assert [e["outcome"] for e in entries] == ["rejected"] * 4 + ["applied"]
    assert entries[0]["reason"].startswith("unparseable")
    assert "no command" in entries[1]["reason"]
    assert (entries[2]["command"], entries[2]["reason"]) == ("self_destruct", "unknown command")
    assert "targets run" in entries[3]["reason"]
    assert (entries[4]["author"], entries[4]["prompt_id"], entries[4]["attempt"]) == (
        "ada",
        "01",
        1,
    )
    for entry in entries:
        receipt = store.read_outcome(entry["request"])
        assert receipt is not None and receipt["outcome"] == entry["outcome"]
    snap = json.loads(cli("control", "status", packet, "--json").stdout)
    assert snap["view"]["log_mode"] == "verbose"
    assert snap["view"]["tool_output"] == "summary"  # the refused request changed nothing


def test_requests_apply_in_name_order(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    _drop(
        packet,
        "20260810-000000-000000-1.json",
        '{"command":"set_view","params":{"tool_output":"full"}}',
    )
    _drop(
        packet,
        "20260810-000000-000000-2.json",
        '{"command":"set_view","params":{"tool_output":"none"}}',
    )
    assert cli("run", packet, "--no-commit").returncode == 0
    snap = json.loads(cli("control", "status", packet, "--json").stdout)
    assert snap["view"]["tool_output"] == "none"


def test_bad_input_is_receipted_and_stepped_over(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    assert cli("run", packet, "--no-commit").returncode == 0
    ended = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())["run_id"]
    drops = {
        "20260810-000000-000001-a.json": "not json at all",
        "20260810-000000-000002-b.json": "[1, 2, 3]",
        "20260810-000000-000003-c.json": '{"command":"reboot"}',
        "20260810-000000-000004-d.json": json.dumps(
            {"command": "set_view", "params": {"diff": "stat"}, "run_id": ended}
        ),
        "20260810-000000-000005-e.json": b'{"command":"set_view","params":{"a":"'
        + b"x" * (10 * 1024 * 1024)
        + b'"}}',
        "odd name $ (1).json": '{"command":"set_view","params":{"diff":"full"}}',
        "\u00fcn\u00efc\u00f6de.json": '{"command":"set_view","params":{"diff":"full"}}',
        ".hidden.json": '{"command":"set_view","params":{"diff":"full"}}',
        "no-suffix": '{"command":"set_view","params":{"diff":"full"}}',
    }
    for name, data in drops.items():
        _drop(packet, name, data)
    (control(packet).requests_dir / "a-directory.json").mkdir()
    proc = cli("run", packet, "01", "--no-commit")  # a new run: `ended` is over
    assert proc.returncode == 0, proc.stdout + proc.stderr
    store = control(packet)
    assert list(store.requests_dir.iterdir()) == []
    by_name = {e["request"]: e for e in log(packet)}
    assert set(by_name) == {*drops, "a-directory.json"}
    assert all(e["outcome"] == "rejected" for e in by_name.values())
    reasons = {name: by_name[name]["reason"] for name in by_name}
    assert reasons["20260810-000000-000001-a.json"].startswith("unparseable")
    assert reasons["20260810-000000-000002-b.json"].startswith("unparseable")
    assert reasons["20260810-000000-000003-c.json"] == "unknown command"
    assert "targets run " + ended in reasons["20260810-000000-000004-d.json"]
    assert reasons["20260810-000000-000005-e.json"].startswith("too large")
    assert reasons["odd name $ (1).json"].startswith("bad request name")
    assert reasons[".hidden.json"].startswith("bad request name")
    assert reasons["a-directory.json"].startswith("not a regular file")
    for name in by_name:
        assert store.read_outcome(name) is not None, name
    assert json.loads(cli("control", "status", packet, "--json").stdout)["status"] == "completed"


def test_a_view_change_is_applied_within_a_second_while_the_provider_is_silent(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"delay_ms": 10000, "messages": ["after the silence"]}]}
            }
        },
    )
    seen: dict[str, float] = {}

    def change_view() -> None:
        time.sleep(0.5)  # the provider is well into its silence
        sent = time.monotonic()
        name = client.set_view(packet, {"log_mode": "verbose"}, author="ada")
        while client.outcome(packet, name) is None and time.monotonic() - sent < 5:
            time.sleep(0.005)
        seen["latency"] = time.monotonic() - sent

    thread = when_session_runs(packet, change_view)
    result, out = run_file(packet)
    thread.join()
    assert result.exit_code == 0
    assert seen["latency"] < 1.0
    assert '[assistant_text] {"text": "after the silence"}' in out  # rendered in the new mode
    (entry,) = log(packet)
    assert (entry["command"], entry["outcome"], entry["prompt_id"]) == ("set_view", "applied", "01")


def test_the_human_log_never_shows_python_none(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    base = "20260810-000000-000000"
    _drop(packet, f"{base}-1.json", '{"params":{}}')  # no command at all
    _drop(packet, f"{base}-2.json", "{ not json")  # nothing readable
    _drop(packet, f"{base}-3.json", '{"command":"set_view","params":{"diff":"stat"}}')
    assert cli("run", packet, "01", "--no-commit").returncode == 0
    amended = cli(
        "control", "amend", packet, "01", "--add-file", "README.md", "--reason", "r",
        "--author", "ada",
    )  # fmt: skip
    assert amended.returncode == 0, amended.stderr
    proc = cli("control", "log", packet)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 4, lines
    assert "None" not in proc.stdout, proc.stdout
    assert " (unknown command) rejected [01#1]: no command" in lines[0], lines[0]
    assert " (unknown command) rejected [01#1]: unparseable" in lines[1], lines[1]
    assert lines[2].endswith(" set_view applied [01#1]"), lines[2]
    assert lines[3].endswith(" amend applied by ada [01]"), lines[3]  # no attempt: none shown


def test_a_request_whose_decision_raises_is_refused_and_the_rest_decided(
    tmp_path: Path, monkeypatch: Any
) -> None:
    # fault injection: a decision that raises (a bug) left its request pending,
    # to raise again at every tick and hold back each request after it
    from prompt_runner.control import plane_requests

    cls = plane_requests.PlaneRequests
    real = cls._decide_view

    def faulty(self: Any, entry: dict[str, Any], params: Any) -> Any:
        if params.get("log_mode") == "studio":
            raise RuntimeError("injected")
        return real(self, entry, params)

    monkeypatch.setattr(cls, "_decide_view", faulty)
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    base = "20260810-000000-000000"
    _drop(packet, f"{base}-1.json", '{"command":"set_view","params":{"log_mode":"studio"}}')
    _drop(packet, f"{base}-2.json", '{"command":"set_view","params":{"log_mode":"verbose"}}')
    result, out = run_file(packet, ids=["01"])
    assert result.exit_code == 0, out
    entries = {e["request"]: e for e in log(packet)}
    first, second = entries[f"{base}-1.json"], entries[f"{base}-2.json"]
    assert first["outcome"] == "rejected"
    assert first["reason"].startswith("could not be decided (RuntimeError: injected)")
    assert second["outcome"] == "applied"
    assert list(control(packet).requests_dir.iterdir()) == []
