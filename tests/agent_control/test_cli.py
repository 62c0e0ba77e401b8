"""Catalog H1: the ``agent-control`` CLI -- receipts, first directive wins, progress, errors."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.agent import protocol
from tests.agent_control._helpers import agent_control_cmd


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    directory = tmp_path / "inv"
    directory.mkdir(mode=0o700)
    return {
        protocol.ENV_FILE: str(directory / "request.json"),
        protocol.ENV_PROGRESS: str(directory / "01-2-cli-test-tok.progress.json"),
        protocol.ENV_TOKEN: "cli-test-token",
        protocol.ENV_RUN: "cli-run",
        protocol.ENV_PROMPT: "01",
        protocol.ENV_ITERATION: "2",
    }


def read(path: str) -> dict[str, object]:
    doc: dict[str, object] = json.loads(Path(path).read_text())
    return doc


def test_progress_writes_an_authenticated_record_and_prints_a_receipt(env: dict[str, str]) -> None:
    proc = agent_control_cmd(
        "progress",
        "--cursor",
        "P09R.2",
        "--unit",
        "C",
        "--summary",
        "runtime ownership",
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads(proc.stdout)
    assert receipt["schema"] == "prompt_runner.agent_control.progress/receipt/v1"
    assert (receipt["cursor"], receipt["unit"], receipt["state"]) == ("P09R.2", "C", "accepted")
    doc = read(env[protocol.ENV_PROGRESS])
    assert doc["schema"] == "prompt_runner.agent_control/progress/v1"
    assert doc["token"] == "cli-test-token"
    assert (doc["run_id"], doc["prompt_id"], doc["iteration"]) == ("cli-run", "01", 2)
    assert (doc["cursor"], doc["unit"], doc["summary"]) == ("P09R.2", "C", "runtime ownership")
    assert isinstance(doc["updated_at"], str) and doc["updated_at"].endswith("Z")
    assert stat.S_IMODE(Path(env[protocol.ENV_PROGRESS]).stat().st_mode) == 0o600


def test_progress_is_repeatable_and_the_latest_wins(env: dict[str, str]) -> None:
    for unit in ("B", "C"):
        proc = agent_control_cmd(
            "progress", "--cursor", "X", "--unit", unit, "--summary", "s", env=env
        )
        assert proc.returncode == 0, proc.stderr
    assert read(env[protocol.ENV_PROGRESS])["unit"] == "C"
    leftovers = [p.name for p in Path(env[protocol.ENV_FILE]).parent.iterdir()]
    assert leftovers == ["01-2-cli-test-tok.progress.json"]  # no temporary file left


def test_first_directive_wins_and_a_second_is_rejected(env: dict[str, str]) -> None:
    proc = agent_control_cmd("finish", "--reason", "the packet is complete", env=env)
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads(proc.stdout)
    assert (receipt["action"], receipt["iteration"], receipt["state"]) == ("finish", 2, "accepted")
    request = read(env[protocol.ENV_FILE])
    assert request == {
        "schema": "prompt_runner.agent_control/request/v1",
        "schema_version": 1,
        "token": "cli-test-token",
        "run_id": "cli-run",
        "prompt_id": "01",
        "iteration": 2,
        "action": "finish",
        "reason": "the packet is complete",
        "requested_at": request["requested_at"],
    }
    assert stat.S_IMODE(Path(env[protocol.ENV_FILE]).stat().st_mode) == 0o600
    before = Path(env[protocol.ENV_FILE]).read_bytes()

    second = agent_control_cmd("repeat", env=env)
    assert second.returncode == 1
    assert "request already exists" in second.stderr
    assert Path(env[protocol.ENV_FILE]).read_bytes() == before

    # progress after the terminal directive still works and leaves the request alone
    third = agent_control_cmd("progress", "--cursor", "Z", "--summary", "after", env=env)
    assert third.returncode == 0, third.stderr
    assert Path(env[protocol.ENV_FILE]).read_bytes() == before
    log = (Path(env[protocol.ENV_FILE]).parent / protocol.REJECTIONS_NAME).read_text().splitlines()
    assert [json.loads(line)["command"] for line in log] == ["repeat"]


@pytest.mark.parametrize("action", ["finish", "blocked"])
def test_finish_and_blocked_require_a_reason(env: dict[str, str], action: str) -> None:
    for args in ([], ["--reason", "  "]):
        proc = agent_control_cmd(action, *args, env=env)
        assert proc.returncode == 2
        assert "--reason is required" in proc.stderr
    assert not Path(env[protocol.ENV_FILE]).exists()


def test_continue_and_repeat_take_an_optional_reason(env: dict[str, str]) -> None:
    proc = agent_control_cmd("repeat", env=env)
    assert proc.returncode == 0, proc.stderr
    assert read(env[protocol.ENV_FILE])["reason"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cursor", " ", "--summary", "x"], "--cursor is required"),
        (["--cursor", "C", "--summary", " "], "--summary is required"),
    ],
)
def test_progress_requires_cursor_and_summary(
    env: dict[str, str], args: list[str], message: str
) -> None:
    proc = agent_control_cmd("progress", *args, env=env)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not Path(env[protocol.ENV_PROGRESS]).exists()


def test_missing_progress_file_variable_is_named_exactly(env: dict[str, str]) -> None:
    env[protocol.ENV_PROGRESS] = ""
    proc = agent_control_cmd("progress", "--cursor", "C", "--summary", "s", env=env)
    assert proc.returncode == 2
    assert "missing environment PROMPT_RUNNER_AGENT_PROGRESS_FILE;" in proc.stderr


def test_directive_outside_an_invocation_names_the_missing_variables() -> None:
    blank = {name: "" for name in protocol.ENV_NAMES}
    proc = agent_control_cmd("continue", env=blank)
    assert proc.returncode == 2
    for name in (protocol.ENV_FILE, protocol.ENV_TOKEN, protocol.ENV_RUN, protocol.ENV_ITERATION):
        assert name in proc.stderr
    assert proc.stdout == ""


def test_bad_iteration_and_relative_paths_are_bad_input(env: dict[str, str]) -> None:
    proc = agent_control_cmd("continue", env={**env, protocol.ENV_ITERATION: "zero"})
    assert proc.returncode == 2 and "not a positive integer" in proc.stderr
    proc = agent_control_cmd("continue", env={**env, protocol.ENV_FILE: "request.json"})
    assert proc.returncode == 2 and "not an absolute path" in proc.stderr


def test_a_request_file_outside_the_invocation_directory_is_refused(
    env: dict[str, str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    proc = agent_control_cmd("continue", env={**env, protocol.ENV_FILE: str(elsewhere / "r.json")})
    assert proc.returncode == 1
    assert "outside the invocation directory" in proc.stderr
    assert list(elsewhere.iterdir()) == []
    log = Path(env[protocol.ENV_PROGRESS]).parent / protocol.REJECTIONS_NAME
    assert "outside the invocation directory" in log.read_text()


def test_a_directory_other_users_can_write_is_refused(env: dict[str, str]) -> None:
    directory = Path(env[protocol.ENV_FILE]).parent
    directory.chmod(0o777)
    try:
        proc = agent_control_cmd("continue", env=env)
    finally:
        directory.chmod(0o700)
    assert proc.returncode == 1
    assert "writable by other users" in proc.stderr
    assert not Path(env[protocol.ENV_FILE]).exists()


def test_a_sealed_invocation_refuses_late_directives_and_progress(env: dict[str, str]) -> None:
    Path(env[protocol.ENV_FILE]).write_text(json.dumps({"closed": True}))
    proc = agent_control_cmd("continue", env=env)
    assert proc.returncode == 1 and "has ended" in proc.stderr
    proc = agent_control_cmd("progress", "--cursor", "C", "--summary", "s", env=env)
    assert proc.returncode == 1 and "has ended" in proc.stderr


def test_the_handler_entry_point_parses_and_dispatches_on_its_own(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from prompt_runner.cli import agentctl

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert agentctl.main(["continue", "--reason", "done here"]) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "continue"
    assert agentctl.main(["repeat"]) == 1
    assert "request already exists" in capsys.readouterr().err
    assert agentctl.main(["progress", "--cursor", "C"]) == 2  # --summary missing
    assert "--summary" in capsys.readouterr().err
    assert agentctl.main(["progress", "--cursor", "C", "--bogus", "x"]) == 2
    assert "bogus" in capsys.readouterr().err
    assert agentctl.main(["explode"]) == 2
    assert agentctl.main([]) == 2


def test_the_hot_path_imports_no_third_party_or_runner_modules(env: dict[str, str]) -> None:
    code = (
        "import sys; from prompt_runner.cli import main as m; "
        "rc = m.main(['agent-control', 'progress', '--cursor', 'C', '--summary', 'S']); "
        "heavy = sorted(n for n in sys.modules if n.split('.')[0] in "
        "('pydantic', 'yaml', 'dataclasses', 'secrets', 'hmac') or "
        "(n.startswith('prompt_runner.') and n not in ("
        "'prompt_runner.cli', 'prompt_runner.cli.main', 'prompt_runner.cli.agentctl', "
        "'prompt_runner.errors', 'prompt_runner.agent', "
        "'prompt_runner.agent.client', 'prompt_runner.agent.protocol'))); "
        "print(rc, heavy)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert proc.stdout.strip().splitlines()[-1] == "0 []", proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["help"],
        ["progress", "--help"],
        ["continue", "-h"],
        ["--debug", "--help"],
        ["finish", "--help", "--debug"],
    ],
)
def test_help_prints_the_usage_and_exits_0(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "agent-control", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: prompt-runner agent-control SUBCOMMAND")
    assert proc.stderr == ""


def test_no_subcommand_is_a_usage_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "agent-control"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout.startswith("usage:")
