"""``cli_path`` through ``prompt-runner run``: the executable ``plan --json`` shows is
the one the run checks and starts, wherever the key is set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.packets import make_packet
from tests.providers.conftest import case_dir
from tests.providers.test_cli_path import SYSTEM_PATH


@pytest.fixture(autouse=True)
def _no_agent_on_path(tmp_path: Path) -> None:
    os.environ["PATH"] = SYSTEM_PATH
    stdout = (case_dir("claude", "success_write") / "stdout.jsonl").read_text()
    write_config(tmp_path / "fake.json", tmp_path / "rec.jsonl", [{"stdout": stdout}])
    os.environ[CONFIG_ENV] = str(tmp_path / "fake.json")


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def claude_packet(tmp_path: Path, where: str, cli_path: str) -> Path:
    opts = {"claude_opts": {"cli_path": cli_path}}
    prompt: dict[str, Any] = {"verify": {"files_exist": ["README.md"]}}
    manifest: dict[str, Any] = {"profile": None, "provider": "claude", "model": None}
    (prompt if where == "prompt" else manifest).update(opts)
    return make_packet(tmp_path, {"01": prompt}, manifest=manifest)


@pytest.mark.parametrize("where", ["prompt", "manifest"])
@pytest.mark.parametrize("skip", [[], ["--skip-preflight"]])
def test_run_starts_the_cli_path_it_plans(where: str, skip: list[str], tmp_path: Path) -> None:
    fake = install_fake_cli(tmp_path / "x" / "bin", "fakeclaude")
    packet = claude_packet(tmp_path, where, str(fake))
    plan = run_cli("plan", packet, "--json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["prompts"][0]["argv"][0] == str(fake)
    proc = run_cli("run", packet, "--no-commit", *skip)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (started,) = read_records(tmp_path / "rec.jsonl")
    assert started["program"] == str(fake)


@pytest.mark.parametrize("where", ["prompt", "manifest"])
def test_run_with_a_missing_cli_path_names_the_key_and_its_file(where: str, tmp_path: Path) -> None:
    missing = tmp_path / "x" / "bin" / "fakeclaude"
    packet = claude_packet(tmp_path, where, str(missing))
    proc = run_cli("run", packet, "--no-commit", "--skip-preflight")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert str(missing) in proc.stderr and "claude_opts.cli_path" in proc.stderr
    file = "prompts/01" if where == "prompt" else "prompt_runner_packet.md"
    assert file in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_relative_cli_path_is_from_the_packet_directory_in_plan_and_run(
    tmp_path: Path,
) -> None:
    packet = claude_packet(tmp_path, "manifest", "bin/fakeclaude")
    fake = install_fake_cli(packet / "bin", "fakeclaude")
    plan = run_cli("plan", packet, "--json")
    assert json.loads(plan.stdout)["prompts"][0]["argv"][0] == str(fake)
    proc = run_cli("run", packet, "--no-commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (started,) = read_records(tmp_path / "rec.jsonl")
    assert started["program"] == str(fake)
