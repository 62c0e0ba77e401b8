"""Cost budgets (``max_cost_usd`` per prompt, ``max_run_cost_usd`` per run), end to end.

The simulated provider reports each step's ``cost_usd``; the runner counts the
reported cost and refuses further sessions once a budget is reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from tests.helpers.cli import cli
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import make_packet
from tests.providers.conftest import case_dir


def state(packet: Path) -> dict[str, Any]:
    return api.status(packet)["prompts"]


def modes(packet: Path, prompt_id: str = "01") -> list[str]:
    return [a["mode"] for a in state(packet)[prompt_id]["attempts"]]


def capacity(cost: float) -> dict[str, Any]:
    return {"error": {"kind": "provider_capacity", "message": "overloaded"}, "cost_usd": cost}


def write(path: str, cost: float) -> dict[str, Any]:
    return {"writes": [{"path": path, "text": "done"}], "cost_usd": cost}


def test_prompt_budget_stops_retries_once_crossed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "adapter_opts": {"max_cost_usd": 0.5},
                "simulate": {"attempts": [capacity(0.3)] * 4},
                "verify": {"files_exist": ["never.txt"]},
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert modes(packet) == ["run", "retry"]  # the retry budget (5) was not the limit
    record = state(packet)["01"]
    message = "cost budget: prompt 01 spent $0.60 of max_cost_usd $0.50"
    assert record["status"] == "failed"
    assert (
        record["reason"] == f"guardrail_blocked is terminal: {message}; no further session starts"
    )
    assert record["budget_failure"]["class"] == "guardrail_blocked"
    assert record["budget_failure"]["provider_code"] == "max_cost_usd"
    assert record["budget_failure"]["terminal"] is True
    assert record["cost_usd"] == pytest.approx(0.6)
    first, last = record["attempts"]
    assert first["decision"] == "retry" and first["cost_usd"] == pytest.approx(0.3)
    assert last["failure_class"] == "provider_capacity"  # what the session itself reported
    assert last["decision"] == "fail"
    assert last["budget_failure"]["class"] == "guardrail_blocked"
    assert message in proc.stdout
    assert "Prompt 01 failed." in proc.stdout


def test_prompt_budget_refuses_a_repair(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "adapter_opts": {"max_cost_usd": 0.5},
                "simulate": {"attempts": [write("half.txt", 0.5), write("never.txt", 0.1)]},
                "verify": {"files_exist": ["half.txt", "never.txt"]},
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert modes(packet) == ["run"]  # exactly at the budget: no repair session
    record = state(packet)["01"]
    assert record["budget_failure"]["provider_code"] == "max_cost_usd"
    assert "spent $0.50 of max_cost_usd $0.50" in record["reason"]


def test_a_passing_attempt_that_crosses_the_budget_completes(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "adapter_opts": {"max_cost_usd": 0.5},
                "simulate": {"attempts": [capacity(0.3), write("out.txt", 0.4)]},
                "verify": {"files_exist": ["out.txt"]},
            }
        },
    )
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert modes(packet) == ["run", "retry"]
    record = state(packet)["01"]
    assert record["status"] == "completed"
    assert record["budget_failure"] is None
    assert record["cost_usd"] == pytest.approx(0.7)
    assert [a["cost_usd"] for a in record["attempts"]] == [0.3, 0.4]


def test_a_new_invocation_gets_a_fresh_prompt_budget(tmp_path: Path) -> None:
    front = {
        "adapter_opts": {"max_cost_usd": 0.5},
        "simulate": {"attempts": [capacity(0.3), capacity(0.3), write("out.txt", 0.1)]},
        "verify": {"files_exist": ["out.txt"]},
    }
    packet = make_packet(tmp_path, {"01": front})
    assert cli("run", packet, "--no-commit").returncode == 1
    assert state(packet)["01"]["budget_failure"]["provider_code"] == "max_cost_usd"
    prompt_file = packet / "prompts" / "01_step.prompt.md"
    text = prompt_file.read_text()
    prompt_file.write_text(text.replace("max_cost_usd: 0.5", "max_cost_usd: 1.0"))
    proc = cli("run", packet, "--no-commit", "01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = state(packet)["01"]
    assert record["status"] == "completed"
    assert record["budget_failure"] is None  # the earlier failure does not linger
    assert record["cost_usd"] == pytest.approx(0.7)  # this invocation's spend only
    assert modes(packet) == ["run", "retry", "run", "retry", "retry"]


def run_budget_packet(tmp_path: Path, **manifest: Any) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [write("one.txt", 0.6)]},
                "verify": {"files_exist": ["one.txt"]},
            },
            "02": {
                "simulate": {"attempts": [write("two.txt", 0.2)]},
                "verify": {"files_exist": ["two.txt"]},
            },
            "03": {"verify": {"files_exist": ["README.md"]}},
        },
        manifest=manifest,
    )


@pytest.mark.parametrize("keep_going", [False, True])
def test_run_budget_stops_the_run_before_the_next_session(tmp_path: Path, keep_going: bool) -> None:
    packet = run_budget_packet(tmp_path, max_run_cost_usd=0.5)
    proc = cli("run", packet, "--no-commit", *(["--keep-going"] if keep_going else []))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    prompts = state(packet)
    assert prompts["01"]["status"] == "completed"  # its spend crossed the budget, verified
    second = prompts["02"]
    assert second["status"] == "failed"
    assert second["attempts"] == [] and second["session_ran"] is False
    message = "run cost budget spent: $0.60 of max_run_cost_usd $0.50"
    assert (
        second["reason"] == f"guardrail_blocked is terminal: {message}; no further session starts"
    )
    assert second["budget_failure"]["provider_code"] == "max_run_cost_usd"
    assert "03" not in prompts
    assert not (tmp_path / "repo" / "two.txt").exists()
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith(f"Run stopped: {message}; prompt 02 failed and 03 did not start.")
    assert "max_run_cost_usd" in last


def test_a_resumed_run_counts_the_cost_it_recorded(tmp_path: Path) -> None:
    packet = run_budget_packet(tmp_path, max_run_cost_usd=0.5)
    assert cli("run", packet, "--no-commit").returncode == 1
    run_id = api.status(packet)["run_id"]

    again = cli("run", packet, "--no-commit", "--remaining")
    assert again.returncode == 1, again.stdout + again.stderr
    assert api.status(packet)["run_id"] == run_id  # the same run, resumed
    assert "Run cost so far: $0.60 of max_run_cost_usd $0.50" in again.stdout
    assert state(packet)["02"]["attempts"] == []  # refused again: no session

    raised = cli("run", packet, "--no-commit", "--remaining", "--max-run-cost-usd", "1")
    assert raised.returncode == 0, raised.stdout + raised.stderr
    assert "Run cost so far: $0.60 of max_run_cost_usd $1.00" in raised.stdout
    prompts = state(packet)
    assert [prompts[i]["status"] for i in ("01", "02", "03")] == ["completed"] * 3
    assert len(prompts["01"]["attempts"]) == 1  # completed in this run: not run again


def test_the_flag_overrides_the_manifest_and_the_api_takes_the_option(tmp_path: Path) -> None:
    packet = run_budget_packet(tmp_path, max_run_cost_usd=0.5)
    proc = cli("run", packet, "--no-commit", "--max-run-cost-usd", "5")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    other = run_budget_packet(tmp_path / "api")
    result = api.run(other, max_run_cost_usd=0.5)
    assert result.exit_code == 1
    assert result.prompts == {"01": "completed", "02": "failed"}
    assert result.message.startswith(
        "Run stopped: run cost budget spent: $0.60 of max_run_cost_usd $0.50"
    )


def test_dry_run_and_plan_show_the_budgets(tmp_path: Path) -> None:
    packet = run_budget_packet(tmp_path, max_run_cost_usd=2, adapter_opts={"max_cost_usd": 0.25})
    dry = cli("run", packet, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "; run cost budget: $2.00 (max_run_cost_usd)" in dry.stdout.splitlines()[0]
    assert dry.stdout.count("cost budget: $0.25 (max_cost_usd)") == 3
    shown = cli("plan", packet, "--max-run-cost-usd", "3.5")
    assert "Run cost budget: $3.50 (max_run_cost_usd)" in shown.stdout
    assert "cost budget=$0.25 (max_cost_usd)" in shown.stdout
    doc = json.loads(cli("plan", packet, "--json").stdout)
    assert doc["max_run_cost_usd"] == 2.0
    assert doc["prompts"][0]["max_cost_usd"] == 0.25
    assert doc["prompts"][0]["sources"]["max_cost_usd"] == "packet"
    none = json.loads(cli("run", run_budget_packet(tmp_path / "n"), "--dry-run", "--json").stdout)
    assert none["max_run_cost_usd"] is None and none["prompts"][0]["max_cost_usd"] is None


@pytest.mark.parametrize(
    ("where", "value", "key"),
    [
        ("manifest", -1, "max_run_cost_usd"),
        ("manifest", 0, "max_run_cost_usd"),
        ("manifest", "abc", "max_run_cost_usd"),
        ("manifest", True, "max_run_cost_usd"),
        ("prompt", 0, "adapter_opts.max_cost_usd"),
        ("prompt", -0.5, "adapter_opts.max_cost_usd"),
        ("prompt", "lots", "adapter_opts.max_cost_usd"),
        ("flag", "-1", "--max-run-cost-usd"),
        ("flag", "0", "--max-run-cost-usd"),
        ("flag", "abc", "--max-run-cost-usd"),
        ("flag", "inf", "--max-run-cost-usd"),
    ],
)
@pytest.mark.parametrize("command", ["plan", "run"])
def test_bad_budgets_are_one_sentence_errors(
    tmp_path: Path, where: str, value: Any, key: str, command: str
) -> None:
    front = {"adapter_opts": {"max_cost_usd": value}} if where == "prompt" else {}
    manifest = {"max_run_cost_usd": value} if where == "manifest" else {}
    packet = make_packet(tmp_path, {"01": front}, manifest=manifest)
    flag = f"--max-run-cost-usd={value}" if where == "flag" else "--no-commit"
    proc = cli(command, packet, flag)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert f"{key}: " in lines[0] and lines[0].endswith(".")
    assert "Traceback" not in proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()


def test_claude_gets_what_is_left_and_the_runner_enforces_the_rest(tmp_path: Path) -> None:
    """The CLI's own budget is per session: the runner passes the remainder and stops."""
    lines = (case_dir("claude", "err_500") / "stdout.jsonl").read_text().splitlines()
    result = json.loads(lines[-1])
    result["total_cost_usd"] = 0.3
    stdout = "\n".join([*lines[:-1], json.dumps(result)]) + "\n"
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    record = tmp_path / "rec.jsonl"
    config = write_config(tmp_path / "fake.json", record, [{"stdout": stdout, "exit_code": 1}])
    packet = make_packet(
        tmp_path,
        {"01": {"claude_opts": {"max_cost_usd": 0.5}, "verify": {"files_exist": ["x.txt"]}}},
        manifest={"profile": None, "provider": "claude", "model": None},
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    argvs = [r["argv"] for r in read_records(record)]
    budgets = [argv[argv.index("--max-budget-usd") + 1] for argv in argvs]
    assert budgets == ["0.5", "0.2"]
    prompt = state(packet)["01"]
    assert [a["failure_class"] for a in prompt["attempts"]] == ["provider_runtime_claim"] * 2
    assert prompt["budget_failure"]["provider_code"] == "max_cost_usd"
    assert "cost budget: prompt 01 spent $0.60 of max_cost_usd $0.50" in prompt["reason"]


def test_a_budget_on_a_provider_that_reports_no_cost_warns(tmp_path: Path) -> None:
    lines = (case_dir("claude", "success_write") / "stdout.jsonl").read_text().splitlines()
    result = json.loads(lines[-1])
    result.pop("total_cost_usd")
    stdout = "\n".join([*lines[:-1], json.dumps(result)]) + "\n"
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    config = write_config(
        tmp_path / "fake.json", tmp_path / "rec.jsonl", [{"stdout": stdout, "exit_code": 0}]
    )
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"]}}},
        manifest={"profile": None, "provider": "claude", "model": None, "max_run_cost_usd": 1},
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "provider claude reported no cost for a session" in proc.stdout
