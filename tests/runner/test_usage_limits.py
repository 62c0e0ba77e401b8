"""Usage-limit waits, wake, failover and pacing, end to end with fake CLIs.

The fake ``claude`` / ``codex`` replay what the real binaries printed against
our mocks (``tests/data/usage``), with the reset moved to a few seconds from
when the fake runs (``{{epoch+N}}``). Each test runs ``prompt-runner run`` as a
real subprocess on a packet with a real git repo.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import prompt_runner as api
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import FAST, make_packet

DATA = Path(__file__).resolve().parents[1] / "data"
CLAUDE = DATA / "usage" / "claude-2.1.332"
CODEX = DATA / "usage" / "codex-0.171.0"
SUCCESS_CLAUDE = DATA / "agent-cli" / "claude" / "success_write"
SUCCESS_CODEX = DATA / "agent-cli" / "codex" / "success_patch"

NO_BUDGET = {
    **FAST,
    "retry": {**FAST["retry"], "class_attempts": {"provider_rate_limit": 0}},
    "resume_attempts": 0,
    "repair": {"enabled": False},
}
"""No retry, resume or repair at all: a prompt that still completes spent none."""


def with_reset(case: Path, header: str, seconds: int) -> str:
    """The capture's stdout with the reset the mock sent moved to now + ``seconds``."""
    steps = json.loads((case / "steps.json").read_text(encoding="utf-8"))
    epoch = steps[0]["headers"][header]
    return (
        (case / "stdout.jsonl")
        .read_text(encoding="utf-8")
        .replace(epoch, f"{{{{epoch+{seconds}}}}}")
    )


def claude_rejected(seconds: int) -> dict[str, Any]:
    """Claude Code 2.1.332 refused by a rejected five-hour window resetting in ``seconds``."""
    case = CLAUDE / "rejected_five_hour_utc"
    return {
        "stdout": with_reset(case, "anthropic-ratelimit-unified-reset", seconds),
        "exit_code": 1,
    }


def claude_success(path: str = "hello.txt") -> dict[str, Any]:
    return {"case": str(SUCCESS_CLAUDE), "writes": {path: "hi\n"}}


def codex_rejected(seconds: int, codex_home: Path) -> dict[str, Any]:
    """Codex 0.171.0 refused (usage_limit_reached); its rollout says the primary
    window resets in ``seconds``."""
    case = CODEX / "usage_limit_reached_primary_utc"
    thread = json.loads((case / "stdout.jsonl").read_text().splitlines()[0])["thread_id"]
    rollout = with_reset(case, "x-codex-primary-reset-at", seconds)
    rollout_text = (case / "rollout.jsonl").read_text(encoding="utf-8")
    steps = json.loads((case / "steps.json").read_text())
    rollout_text = rollout_text.replace(
        steps[0]["headers"]["x-codex-primary-reset-at"], f"{{{{epoch+{seconds}}}}}"
    )
    day = codex_home / "sessions" / "2026" / "12" / "01"
    return {
        "stdout": rollout,
        "exit_code": 1,
        "writes": {str(day / f"rollout-2026-12-01T12-21-05-{thread}.jsonl"): rollout_text},
    }


def codex_success(path: str = "hello.txt") -> dict[str, Any]:
    return {"case": str(SUCCESS_CODEX), "writes": {path: "hi\n"}}


class Run:
    """A packet, fake CLIs on PATH, and ``prompt-runner`` started on it."""

    def __init__(
        self,
        tmp_path: Path,
        runs: list[dict[str, Any]],
        prompts: dict[str, Any],
        manifest: dict[str, Any],
    ) -> None:
        self.tmp = tmp_path
        bin_dir = tmp_path / "bin"
        for name in ("claude", "codex"):
            install_fake_cli(bin_dir, name)
        self.record = tmp_path / "rec.jsonl"
        self.config = write_config(tmp_path / "fake.json", self.record, runs)
        base = {"profile": None, "provider": "claude", "model": None}
        self.packet = make_packet(tmp_path, prompts, manifest={**base, **manifest})
        self.env = dict(os.environ)
        self.env["PATH"] = f"{bin_dir}{os.pathsep}{self.env.get('PATH', '')}"
        self.env[CONFIG_ENV] = str(self.config)
        self.env["CODEX_HOME"] = str(tmp_path / "codex_home")

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "prompt_runner", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(self.packet), *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def status(self) -> dict[str, Any]:
        return api.status(self.packet)

    def prompt(self, prompt_id: str = "01") -> dict[str, Any]:
        record: dict[str, Any] = self.status()["prompts"][prompt_id]
        return record

    def invocations(self) -> list[dict[str, Any]]:
        return read_records(self.record)

    def commits(self) -> list[str]:
        out = subprocess.run(
            ["git", "log", "--format=%s"],
            cwd=self.tmp / "repo",
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.splitlines()


def until(predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll ``predicate`` until it returns something truthy (or fail after ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except Exception:
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def waiting_until(run: Run) -> str | None:
    value = run.status().get("waiting_until")
    return value if isinstance(value, str) else None


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


PROMPT = {"01": {"verify": {"files_exist": ["hello.txt"]}, "commit": "feat: hello"}}


# ------------------------------------------------------------------ waiting for a reset


def test_claude_refusal_waits_for_the_reset_then_resumes_the_session(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        [claude_rejected(3), claude_success()],
        PROMPT,
        {"recovery": {**NO_BUDGET, "usage_limit": {"margin": "200ms"}}},
    )
    started = time.monotonic()
    proc = run.start()
    shown = until(lambda: waiting_until(run))
    snapshot = api.control_status(run.packet).to_dict()
    assert snapshot["waiting_until"] == shown
    assert snapshot["wait"]["provider"] == "claude" and snapshot["wait"]["window"] == "five_hour"
    assert run.status()["usage_wait"]["kind"] == "usage_limit"
    human = run.cli("status", str(run.packet)).stdout
    assert f"Waiting until {shown}" in human
    out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, out + err
    assert elapsed >= 2.5  # it waited for the reset (3 s ahead), not a backoff
    record = run.prompt()
    assert record["status"] == "completed"
    assert [a["mode"] for a in record["attempts"]] == ["run", "resume"]
    assert record["attempts"][0]["decision"] == "wait"
    assert record["usage_wait"] is None and run.status()["waiting_until"] is None
    first, second = run.invocations()
    assert "--resume" not in first["argv"]
    assert "--resume" in second["argv"]  # the same session, told the limit has reset
    assert "usage limit" in second["stdin"]
    assert run.commits()[0] == "feat: hello"


def test_claude_reset_beyond_max_wait_fails_naming_the_reset(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        [claude_rejected(7200), claude_success()],
        PROMPT,
        {"recovery": {**FAST, "usage_limit": {"max_wait": "1h"}}},
    )
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = run.prompt()
    assert len(run.invocations()) == 1  # no retry of a refusal that cannot pass
    reason = record["reason"]
    assert reason.startswith("usage limit: claude five_hour window is exhausted (resets 20")
    assert "beyond max_wait (1h)" in reason
    reset = parse(reason.split("resets ", 1)[1].split(")", 1)[0])
    assert 7000 < (reset - datetime.now(UTC)).total_seconds() < 7300
    assert "usage limit: claude five_hour window" in proc.stdout


def test_codex_refusal_waits_for_the_reset_from_its_rollout(tmp_path: Path) -> None:
    home = tmp_path / "codex_home"
    run = Run(
        tmp_path,
        [codex_rejected(3, home), codex_success()],
        PROMPT,
        {
            "provider": "codex",
            "model": "gpt-5.5",
            "recovery": {**NO_BUDGET, "usage_limit": {"margin": "200ms"}},
        },
    )
    started = time.monotonic()
    proc = run.cli("run", str(run.packet))
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert elapsed >= 2.5
    record = run.prompt()
    first = record["attempts"][0]
    assert first["decision"] == "wait"
    assert first["failure"]["usage_window"]["source"] == "event"
    assert first["failure"]["usage_window"]["kind"] == "five_hour"
    assert [a["mode"] for a in record["attempts"]] == ["run", "resume"]
    assert run.invocations()[1]["argv"][-3:-1] == ["resume", first["session_id"]]


def test_codex_reset_beyond_max_wait_fails_naming_the_reset(tmp_path: Path) -> None:
    home = tmp_path / "codex_home"
    run = Run(
        tmp_path,
        [codex_rejected(86_400, home), codex_success()],
        PROMPT,
        {"provider": "codex", "model": "gpt-5.5", "recovery": FAST},
    )
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reason = run.prompt()["reason"]
    assert "codex five_hour window is exhausted (resets 20" in reason
    assert "beyond max_wait (6h)" in reason
    assert len(run.invocations()) == 1


def test_a_text_only_refusal_is_waited_for(tmp_path: Path) -> None:
    """Claude Code 1.0.x printed only ``Claude AI usage limit reached|<epoch>``
    (anthropics/claude-code#2087): no event, no structured field."""
    lines = (SUCCESS_CLAUDE / "stdout.jsonl").read_text().splitlines()
    result = json.loads(lines[-1])
    result.update(
        is_error=True,
        result="Claude AI usage limit reached|{{epoch+3}}",
        api_error_status=None,
        api_error_type=None,
    )
    refused = {"stdout": "\n".join([lines[0], json.dumps(result)]) + "\n", "exit_code": 1}
    run = Run(
        tmp_path,
        [refused, claude_success()],
        PROMPT,
        {"recovery": {**NO_BUDGET, "usage_limit": {"margin": "200ms"}}},
    )
    started = time.monotonic()
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - started >= 2.5
    window = run.prompt()["attempts"][0]["failure"]["usage_window"]
    assert window["source"] == "text" and window["status"] == "rejected"


def test_a_timeout_is_never_a_usage_limit(tmp_path: Path) -> None:
    """A CLI that printed a rejected usage event and then hung is a timeout: no wait."""
    lines = claude_rejected(3600)["stdout"].splitlines()
    hung = {
        "stdout": "\n".join(x for x in lines if '"type":"result"' not in x) + "\n",
        "hang": True,
    }
    run = Run(
        tmp_path,
        [hung],
        {"01": {**PROMPT["01"], "timeout": 1500}},
        {
            "recovery": {
                **NO_BUDGET,
                "retry": {**NO_BUDGET["retry"], "class_attempts": {"transport_timeout": 0}},
            }
        },
    )
    started = time.monotonic()
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert time.monotonic() - started < 60
    attempt = run.prompt()["attempts"][0]
    assert attempt["failure_class"] == "transport_timeout"
    assert attempt["failure"]["usage_window"] is None
    assert attempt["decision"] == "fail"
    assert run.status().get("waiting_until") is None


# ------------------------------------------------------------------ durable and wakeable


def test_kill_9_mid_wait_then_remaining_waits_only_what_is_left(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        [claude_rejected(14), claude_success()],
        PROMPT,
        {"recovery": {**NO_BUDGET, "usage_limit": {"margin": "200ms"}}},
    )
    proc = run.start()
    shown = parse(until(lambda: waiting_until(run)))
    time.sleep(5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    left = (shown - datetime.now(UTC)).total_seconds()
    assert 5 < left < 12
    started = time.monotonic()
    again = run.cli("run", str(run.packet), "--remaining")
    took = time.monotonic() - started
    assert again.returncode == 0, again.stdout + again.stderr
    assert left - 1.5 < took < left + 6  # the remainder, not the whole 14 s again
    assert "waiting until" in again.stdout
    assert run.prompt()["status"] == "completed"


def test_control_wake_ends_a_wait_at_once(tmp_path: Path) -> None:
    run = Run(tmp_path, [claude_rejected(120), claude_success()], PROMPT, {"recovery": NO_BUDGET})
    proc = run.start()
    until(lambda: waiting_until(run))
    woke = time.monotonic()
    receipt = run.cli("control", "wake", str(run.packet), "--json")
    assert receipt.returncode == 0, receipt.stdout + receipt.stderr
    doc = json.loads(receipt.stdout)
    assert doc["outcome"] == "applied" and doc["waiting_until"]
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert time.monotonic() - woke < 30  # not the 120 s of the window
    log = [e for e in api.control_log(run.packet) if e.get("command") == "wake"]
    assert [e["outcome"] for e in log] == ["applied"]
    ended = [e for e in api.control_events(run.packet) if e.get("kind") == "usage_wait_ended"]
    assert ended and ended[0]["woken"] is True


def test_control_wake_without_a_wait_is_refused_and_logged(tmp_path: Path) -> None:
    run = Run(tmp_path, [{**claude_success(), "line_delay_ms": 400}], PROMPT, {})
    proc = run.start()
    until(lambda: run.status().get("runner", {}).get("alive"))
    receipt = run.cli("control", "wake", str(run.packet), "--json")
    proc.communicate(timeout=60)
    doc = json.loads(receipt.stdout)
    assert receipt.returncode == 1 and doc["outcome"] == "rejected"
    assert doc["reason"] == "the run is not waiting for a usage window"


# ------------------------------------------------------------------ failover and pacing


def test_failover_to_codex_completes_commits_and_the_next_prompt_is_back_on_claude(
    tmp_path: Path,
) -> None:
    prompts = {
        "01": {**PROMPT["01"]},
        "02": {"verify": {"files_exist": ["two.txt"]}, "commit": "feat: two"},
    }
    runs = [claude_rejected(86_400), codex_success(), claude_success("two.txt")]
    run = Run(
        tmp_path,
        runs,
        prompts,
        {
            "recovery": {**FAST, "failover": [{"provider": "codex", "model": "gpt-5.5"}]},
        },
    )
    proc = run.cli("run", str(run.packet), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = run.prompt("01")
    assert [a["mode"] for a in first["attempts"]] == ["run", "failover"]
    assert [a["provider"] for a in first["attempts"]] == ["claude", "codex"]
    assert first["attempts"][0]["decision"] == "failover"
    assert first["providers"] == ["claude", "codex"]
    assert first["failover"]["from"]["provider"] == "claude"
    assert first["failover"]["to"] == {"provider": "codex", "model": "gpt-5.5"}
    assert first["status"] == "completed"
    _, codex_call, back = run.invocations()
    assert "## Handoff" in codex_call["stdin"] and "five_hour" in codex_call["stdin"]
    assert codex_call["argv"][:2] == ["exec", "--json"]
    second = run.prompt("02")
    assert [a["provider"] for a in second["attempts"]] == ["claude"]
    assert "-p" in back["argv"]
    assert run.commits()[:2] == ["feat: two", "feat: hello"]


def test_pacing_delays_the_next_session_until_the_reset(tmp_path: Path) -> None:
    case = CLAUDE / "allowed_warning_five_hour"  # utilization 0.95
    warned = {
        "stdout": with_reset(case, "anthropic-ratelimit-unified-5h-reset", 4),
        "exit_code": 0,
        "writes": {"hello.txt": "hi\n"},
    }
    prompts = {
        "01": {**PROMPT["01"]},
        "02": {"verify": {"files_exist": ["two.txt"]}, "commit": "feat: two"},
    }
    run = Run(
        tmp_path,
        [warned, claude_success("two.txt")],
        prompts,
        {
            "recovery": {**FAST, "usage_limit": {"pace_above": 0.9, "margin": "200ms"}},
        },
    )
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first_done = parse(run.prompt("01")["attempts"][0]["completed_at"])
    second_started = parse(run.prompt("02")["attempts"][0]["started_at"])
    assert (second_started - first_done).total_seconds() >= 2.5
    waits = [e for e in api.control_events(run.packet) if e.get("kind") == "usage_wait_started"]
    assert [w["wait"] for w in waits] == ["pace"]
    assert "pacing: claude five_hour window is 95% used (pace_above 0.9)" in waits[0]["reason"]


def test_without_pace_above_a_high_utilization_does_not_wait(tmp_path: Path) -> None:
    case = CLAUDE / "allowed_warning_five_hour"
    warned = {
        "stdout": with_reset(case, "anthropic-ratelimit-unified-5h-reset", 30),
        "exit_code": 0,
        "writes": {"hello.txt": "hi\n"},
    }
    prompts = {"01": {**PROMPT["01"]}, "02": {"verify": {"files_exist": ["two.txt"]}}}
    run = Run(tmp_path, [warned, claude_success("two.txt")], prompts, {"recovery": FAST})
    started = time.monotonic()
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - started < 25


@pytest.mark.parametrize("value", ["soon", True])
def test_a_bad_max_wait_names_the_key(tmp_path: Path, value: Any) -> None:
    run = Run(
        tmp_path, [claude_success()], PROMPT, {"recovery": {"usage_limit": {"max_wait": value}}}
    )
    proc = run.cli("plan", str(run.packet))
    assert proc.returncode == 2
    assert "recovery.usage_limit.max_wait" in proc.stderr + proc.stdout


def test_failover_sticky_keeps_the_next_prompt_on_the_failover_provider(tmp_path: Path) -> None:
    prompts = {
        "01": {**PROMPT["01"]},
        "02": {"verify": {"files_exist": ["two.txt"]}, "commit": "feat: two"},
    }
    runs = [claude_rejected(86_400), codex_success(), codex_success("two.txt")]
    failover = [{"provider": "codex", "model": "gpt-5.5"}]
    recovery = {**FAST, "failover": failover, "failover_sticky": True}
    run = Run(tmp_path, runs, prompts, {"recovery": recovery})
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [a["provider"] for a in run.prompt("02")["attempts"]] == ["codex"]
    assert len(run.invocations()) == 3
