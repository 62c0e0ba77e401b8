"""Notifications from a real `prompt-runner run` (simulated provider) to real receivers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.state.layout import StateLayout
from tests.helpers.cli import cli
from tests.helpers.packets import FAST, NOREPAIR, make_packet
from tests.helpers.webhook import webhook
from tests.helpers.workspaces import make_workspace

WRITES_A = {"simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]}}


def _records(packet: Path) -> list[dict[str, Any]]:
    path = StateLayout.of_packet(packet).notifications
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_json_webhook_gets_run_completed(tmp_path: Path) -> None:
    with webhook() as hook:
        packet = make_packet(
            tmp_path,
            {"01": {**WRITES_A, "verify": {"files_exist": ["a.txt"]}}},
            manifest={"notify": {"urls": [hook.url("done")]}},
        )
        proc = cli("run", packet)
        assert proc.returncode == 0, proc.stderr
        (doc,) = hook.documents()
    assert hook.requests[0]["path"] == "/done"
    assert doc["schema"] == "prompt_runner.notification/v1"
    assert doc["kind"] == "run_completed"
    assert doc["packet"] == "demo" and doc["packet_root"] == str(packet)
    current = json.loads(StateLayout.of_packet(packet).current_run.read_text(encoding="utf-8"))
    assert doc["run_id"] == current["run_id"]
    assert doc["prompt"] is None
    assert "completed" in doc["reason"] and "status" in doc["next_step"]
    assert doc["details"]["prompts"] == {"01": "completed"}
    (line,) = _records(packet)
    assert line["outcome"] == "delivered" and line["kind"] == "run_completed"
    assert line["event"] == doc["id"] and line["attempts"] == 1
    assert line["target"] == hook.url("done") and line["schema_version"] == 1


def test_a_blocked_prompt_and_its_run_reach_the_webhook_and_the_record(tmp_path: Path) -> None:
    with webhook() as hook:
        packet = make_packet(
            tmp_path,
            {
                "01": {"verify": {"files_exist": ["never.txt"]}},
                "02": {**WRITES_A, "depends_on": ["01"], "verify": {"files_exist": ["a.txt"]}},
            },
            manifest={
                "recovery": {**FAST, **NOREPAIR},
                "failure_policy": "continue_independent",
                "notify": {"urls": [hook.url()], "on": ["prompt_failed", "blocked", "run_failed"]},
            },
        )
        proc = cli("run", packet)
        assert proc.returncode == 1, proc.stderr
        docs = hook.documents()
    assert [d["kind"] for d in docs] == ["prompt_failed", "blocked", "run_failed"]
    failed, blocked, run = docs
    assert failed["prompt"] == "01" and "verification_failed" in failed["reason"]
    assert blocked["prompt"] == "02" and "01" in blocked["reason"]
    assert blocked["details"]["blocked_by"] == ["01"]
    assert "--remaining" in blocked["next_step"]
    assert run["details"]["failures"] == ["01", "02"]
    assert len({d["run_id"] for d in docs}) == 1
    lines = _records(packet)
    assert [(r["kind"], r["outcome"]) for r in lines] == [
        ("prompt_failed", "delivered"),
        ("blocked", "delivered"),
        ("run_failed", "delivered"),
    ]
    assert [r["event"] for r in lines] == [d["id"] for d in docs]


def test_a_notifier_that_never_answers_delays_the_exit_by_at_most_its_timeout(
    tmp_path: Path,
) -> None:
    timeout_s = 2.0
    plain = make_packet(tmp_path / "plain", {"01": WRITES_A})
    started = time.monotonic()
    assert cli("run", plain).returncode == 0
    baseline = time.monotonic() - started
    with webhook(hang=True) as hook:
        packet = make_packet(
            tmp_path / "told",
            {"01": WRITES_A},
            manifest={"notify": {"urls": [hook.url()], "timeout": f"{timeout_s:g}s"}},
        )
        started = time.monotonic()
        proc = cli("run", packet)
        ended = time.monotonic()
        assert hook.requests, "the notifier was never called"
        asked = hook.requests[0]["at"]
    assert proc.returncode == 0, proc.stderr
    delay = ended - started - baseline
    print(
        f"baseline {baseline:.2f}s, with a hanging notifier {ended - started:.2f}s "
        f"(delay {delay:.2f}s); from the request to the exit {ended - asked:.2f}s"
    )
    # The brief's measure (two runs' wall times, so load on the machine adds noise) ...
    assert delay < timeout_s + 1.5
    # ... and the direct one: the exit came within the timeout of the hanging request.
    assert ended - asked < timeout_s + 0.75
    (line,) = _records(packet)
    assert line["outcome"] in ("abandoned", "timed_out")
    assert "notify" in proc.stdout + proc.stderr  # the closing warning names it


def test_a_failing_webhook_is_retried_and_never_fails_the_run(tmp_path: Path) -> None:
    with webhook(status=500) as hook:
        packet = make_packet(
            tmp_path,
            {"01": WRITES_A},
            manifest={"notify": {"urls": [hook.url()], "retries": 1, "timeout": "5s"}},
        )
        proc = cli("run", packet)
        assert len(hook.requests) == 2  # the first try and one retry
    assert proc.returncode == 0, proc.stderr
    (line,) = _records(packet)
    assert line["outcome"] == "failed" and line["attempts"] == 2
    assert "500" in line["error"]


def test_a_command_gets_the_document_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.jsonl"
    script = tmp_path / "tell.py"
    script.write_text(
        "import os, sys\n"
        f"with open({str(out)!r}, 'a') as f:\n"
        "    f.write(os.environ['PROMPT_RUNNER_NOTIFICATION'] + ' ' + sys.stdin.read())\n",
        encoding="utf-8",
    )
    packet = make_packet(
        tmp_path,
        {"01": WRITES_A},
        manifest={"notify": {"command": [sys.executable, str(script)]}},
    )
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stderr
    kind, _, text = out.read_text(encoding="utf-8").partition(" ")
    doc = json.loads(text)
    assert kind == "run_completed" == doc["kind"]
    assert doc["schema"] == "prompt_runner.notification/v1" and doc["packet"] == "demo"
    (line,) = _records(packet)
    assert line["target_kind"] == "command" and line["outcome"] == "delivered"


def test_no_secret_value_is_written_under_the_state_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-Value-0f-the-T0ken"
    monkeypatch.setenv("NOTIFY_TOKEN", secret)
    with webhook() as hook:
        packet = make_packet(
            tmp_path,
            {"01": {**WRITES_A, "verify": {"files_exist": ["a.txt"]}}},
            manifest={
                "notify": {
                    "urls": [
                        # Apprise: ?-NAME=VALUE is a query argument of the request
                        hook.url("hook", "-token={env:NOTIFY_TOKEN}"),
                        f"json://user:{{env:NOTIFY_TOKEN}}@127.0.0.1:{hook.port}/second",
                        hook.url("{env:NOTIFY_TOKEN}/third"),
                    ]
                }
            },
        )
        proc = cli("run", packet, "--log-meta", "full", "--log-mode", "verbose")
        assert proc.returncode == 0, proc.stderr
    # It was expanded at send time: the receiver saw the value.
    assert hook.requests[0]["query"]["token"] == [secret]
    assert hook.requests[2]["path"] == f"/{secret}/third"
    state = StateLayout.of_packet(packet).root
    files = [p for p in state.rglob("*") if p.is_file()]
    assert StateLayout.of_packet(packet).notifications in files
    leaked = [p for p in files if secret.encode() in p.read_bytes()]
    assert leaked == []
    assert secret not in proc.stdout + proc.stderr
    assert [r["outcome"] for r in _records(packet)] == ["delivered"] * 3
    assert _records(packet)[0]["target"].endswith("-token={env:NOTIFY_TOKEN}")


def test_an_unset_secret_warns_and_is_recorded_failed(tmp_path: Path) -> None:
    with webhook() as hook:
        packet = make_packet(
            tmp_path,
            {"01": WRITES_A},
            manifest={"notify": {"urls": [hook.url("hook", "-token={env:NOT_SET_ANYWHERE}")]}},
        )
        proc = cli("run", packet)
        assert hook.requests == []
    assert proc.returncode == 0, proc.stderr
    assert "NOT_SET_ANYWHERE is not set" in proc.stdout
    (line,) = _records(packet)
    assert line["outcome"] == "failed" and "NOT_SET_ANYWHERE" in line["error"]


@pytest.mark.parametrize(
    ("notify", "key"),
    [
        ({"urls": ["not a url"]}, "notify.urls[0]"),
        ({"urls": ["json://h/x"], "on": ["run_done"]}, "notify.on[0]"),
        ({"urls": ["json://h/x"], "timeout": "forever"}, "notify.timeout"),
        ({"command": "notify-send hi"}, "notify.command"),
        ({"urls": ["json://h/x"], "retry": 3}, "notify.retry"),
        ({"on": ["run_failed"]}, "notify"),
        ({"urls": ["json://h/{env:1BAD}"]}, "notify.urls[0]"),
    ],
)
def test_a_bad_notify_is_exit_2_naming_the_file_and_key(
    tmp_path: Path, notify: dict[str, Any], key: str
) -> None:
    packet = make_packet(tmp_path, {"01": WRITES_A}, manifest={"notify": notify})
    for command in ("run", "plan"):
        proc = cli(command, packet)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        message = proc.stderr.strip()
        assert len(message.splitlines()) == 1, message
        assert "Traceback" not in message
        assert "prompt_runner_packet.md" in message and f"{key}:" in message, message


def test_a_spent_budget_is_budget_spent_not_prompt_failed(tmp_path: Path) -> None:
    with webhook() as hook:
        packet = make_packet(
            tmp_path,
            {
                "01": {
                    "adapter_opts": {"max_cost_usd": 0.5},
                    "simulate": {
                        "attempts": [
                            {"error": {"kind": "provider_capacity"}, "cost_usd": 0.6},
                        ]
                    },
                    "verify": {"files_exist": ["never.txt"]},
                }
            },
            manifest={"notify": {"urls": [hook.url()], "on": ["prompt_failed", "budget_spent"]}},
        )
        proc = cli("run", packet)
        assert proc.returncode == 1, proc.stderr
        (doc,) = hook.documents()
    assert doc["kind"] == "budget_spent" and doc["prompt"] == "01"
    assert "max_cost_usd $0.50" in doc["reason"] and "max_cost_usd" in doc["next_step"]
    assert doc["details"]["budget"]["provider_code"] == "max_cost_usd"


def test_an_agent_that_reports_blocked_is_a_blocked_event(tmp_path: Path) -> None:
    out = tmp_path / "got.jsonl"
    script = tmp_path / "tell.py"
    script.write_text(
        f"import sys\nopen({str(out)!r}, 'a').write(sys.stdin.read())\n", encoding="utf-8"
    )
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {"agent_control": {"directive": "blocked", "reason": "needs an API key"}}
                    ]
                },
                "verify": {"files_exist": ["README.md"]},
            }
        },
        manifest={
            "agent_control": {"completion_verify": {"files_exist": ["DONE.md"]}},
            "recovery": {**FAST, **NOREPAIR},
            "notify": {"command": [sys.executable, str(script)], "on": ["blocked"]},
        },
    )
    proc = cli("run", packet)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (doc,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert doc["kind"] == "blocked" and doc["prompt"] == "01"
    assert "needs an API key" in doc["reason"]


def test_a_workspace_manifest_notify_is_the_most_specific_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with webhook() as packet_hook, webhook() as ws_hook:
        workspace = make_workspace(
            tmp_path / "ws", manifest={"notify": {"urls": [ws_hook.url("ops")]}}
        )
        packet = make_packet(
            tmp_path,
            {"01": WRITES_A},
            manifest={"notify": {"urls": [packet_hook.url()], "on": ["run_completed"]}},
        )
        monkeypatch.setenv("PROMPT_RUNNER_WORKSPACE", str(workspace))
        proc = cli("run", packet)
        assert proc.returncode == 0, proc.stderr
        assert packet_hook.requests == []
        assert [d["kind"] for d in ws_hook.documents()] == ["run_completed"]


def test_a_bad_workspace_notify_names_the_workspace_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = make_workspace(tmp_path / "ws", manifest={"notify": {"on": ["soon"]}})
    packet = make_packet(tmp_path, {"01": WRITES_A})
    monkeypatch.setenv("PROMPT_RUNNER_WORKSPACE", str(workspace))
    proc = cli("run", packet)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "workspace.yml: notify.on[0]: unknown event kind 'soon'" in proc.stderr


def test_a_run_ended_by_sigterm_waits_briefly_and_records_the_delivery_abandoned(
    tmp_path: Path,
) -> None:
    """A SIGTERM mid-prompt (what ``stop`` sends a runner that did not stop on its
    request) ends the run ``interrupted``; its exit waits for the hanging
    webhook at most ``SIGNALLED_WAIT_S``, not ``notify.timeout`` (which would
    outlast stop's 5 s before SIGKILL and leave no line), and the delivery is
    recorded ``abandoned``, naming the signal."""
    from prompt_runner.notify.notifier import SIGNALLED_WAIT_S

    slow = {
        "simulate": {"attempts": [{"delay_ms": 30_000, "writes": [{"path": "a.txt", "text": "a"}]}]}
    }
    with webhook(hang=True) as hook:
        packet = make_packet(
            tmp_path,
            {"01": slow},
            manifest={"notify": {"urls": [hook.url()], "timeout": "30s", "on": ["run_failed"]}},
        )
        runner = subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(packet)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            started = StateLayout.of_packet(packet).root / "logs"
            deadline = time.monotonic() + 60
            while not any(started.rglob("*.jsonl")) and time.monotonic() < deadline:
                time.sleep(0.05)  # the session has begun
            signalled = time.monotonic()
            runner.send_signal(signal.SIGTERM)
            out, err = runner.communicate(timeout=60)
            took = time.monotonic() - signalled
        finally:
            if runner.poll() is None:
                runner.kill()
        assert hook.requests, "the webhook was never called"
    assert runner.returncode == 128 + signal.SIGTERM, out + err
    assert took < SIGNALLED_WAIT_S + 3.0, f"the exit took {took:.1f} s after SIGTERM"
    (line,) = _records(packet)
    assert (line["kind"], line["outcome"]) == ("run_failed", "abandoned"), line
    assert "ended by SIGTERM" in line["error"], line
    # and the run says so, though the signal cut its wait short
    assert "warning: notify: deliveries 1 abandoned" in out + err, out + err
