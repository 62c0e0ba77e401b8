"""``<provider>_opts.cli_path``: the executable checked is the one started
(``test_cli_path_run.py`` goes through ``prompt-runner run``).

Every fake CLI here lives outside PATH (PATH holds no agent CLI at all), so a
check that looked up the provider's usual name would fail each test.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import ProviderMissingError
from prompt_runner.providers import registry
from prompt_runner.providers._cli import CliProvider
from prompt_runner.providers.base import SessionRequest, TimeBounds
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config

CLI_PROVIDERS = ("claude", "codex", "gemini", "amp", "cursor", "antigravity")
SYSTEM_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())


@pytest.fixture(autouse=True)
def _no_agent_on_path(tmp_path: Path) -> None:
    """PATH without any agent CLI; the fake's config for whatever gets started."""
    os.environ["PATH"] = SYSTEM_PATH
    write_config(tmp_path / "fake.json", tmp_path / "rec.jsonl", [{"stdout": "", "exit_code": 0}])
    os.environ[CONFIG_ENV] = str(tmp_path / "fake.json")


def adapter(name: str) -> CliProvider:
    provider = registry.get_provider(name)
    assert isinstance(provider, CliProvider)
    return provider


def request(cwd: Path, provider: str, **options: Any) -> SessionRequest:
    return SessionRequest(
        prompt_id="01",
        prompt_text="do it",
        cwd=cwd,
        provider=provider,
        provider_options=options,
        bounds=TimeBounds(idle_ms=20_000, run_deadline_ms=60_000),
    )


@pytest.mark.parametrize("name", CLI_PROVIDERS)
def test_check_and_launch_both_use_cli_path_outside_path(name: str, tmp_path: Path) -> None:
    fake = install_fake_cli(tmp_path / "x" / "bin", f"fake{name}")
    req = request(tmp_path, name, cli_path=str(fake))
    provider = adapter(name)
    with pytest.raises(ProviderMissingError):  # the usual name is not on PATH
        provider.check_available()
    provider.check_available(req)
    assert provider.launch_argv(req)[0] == str(fake)
    provider.start(req, lambda e: None).wait(30)
    (started,) = read_records(tmp_path / "rec.jsonl")
    assert started["program"] == str(fake)


@pytest.mark.parametrize("name", CLI_PROVIDERS)
def test_relative_cli_path_is_taken_from_the_packet_directory(name: str, tmp_path: Path) -> None:
    packet, cwd = tmp_path / "packet", tmp_path / "repo"
    fake = install_fake_cli(packet / "tools", "agent-cli")
    install_fake_cli(cwd / "tools", "agent-cli")  # the session's directory: not this one
    req = replace(request(cwd, name, cli_path="tools/agent-cli"), repos={"packet": packet})
    provider = adapter(name)
    provider.check_available(req)
    assert provider.launch_argv(req)[0] == str(fake)
    provider.start(req, lambda e: None).wait(30)
    (started,) = read_records(tmp_path / "rec.jsonl")
    assert started["program"] == str(fake)
    fake.unlink()
    with pytest.raises(ProviderMissingError) as info:
        provider.check_available(req)
    assert f"`tools/agent-cli` ({fake}), which does not exist" in str(info.value)


@pytest.mark.parametrize("name", CLI_PROVIDERS)
def test_missing_cli_path_names_the_path_and_the_key(name: str, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "fakecli"
    with pytest.raises(ProviderMissingError) as info:
        adapter(name).check_available(
            request(tmp_path, name, cli_path=str(missing)), key="adapter_opts.cli_path"
        )
    assert info.value.exit_code == 3
    message = str(info.value)
    assert str(missing) in message and "adapter_opts.cli_path" in message
    assert "does not exist" in message and "not on PATH" not in message


@pytest.mark.parametrize("name", CLI_PROVIDERS)
def test_cli_path_that_is_not_executable_is_refused(name: str, tmp_path: Path) -> None:
    plain = tmp_path / "fakecli"
    plain.write_text("#!/bin/sh\n", encoding="utf-8")
    plain.chmod(0o644)
    with pytest.raises(ProviderMissingError) as info:
        adapter(name).check_available(request(tmp_path, name, cli_path=str(plain)))
    assert f"{name}_opts.cli_path" in str(info.value)
    assert "not executable" in str(info.value)
    with pytest.raises(ProviderMissingError, match="is a directory"):
        adapter(name).check_available(request(tmp_path, name, cli_path=str(tmp_path)))


def test_bare_cli_path_is_looked_up_on_the_agent_environment_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "agent-bin"
    install_fake_cli(bin_dir, "cursor-agent")
    provider = adapter("cursor")
    with pytest.raises(ProviderMissingError, match=r"cursor_opts\.cli_path is `cursor-agent`"):
        provider.check_available(request(tmp_path, "cursor", cli_path="cursor-agent"))
    env = {"PATH": f"{bin_dir}{os.pathsep}{SYSTEM_PATH}"}
    req = request(tmp_path, "cursor", cli_path="cursor-agent", env=env)
    provider.check_available(req)
    provider.start(req, lambda e: None).wait(30)
    (started,) = read_records(tmp_path / "rec.jsonl")
    assert started["program"] == str(bin_dir / "cursor-agent")


def test_a_session_whose_cli_path_is_gone_says_so_not_path(tmp_path: Path) -> None:
    gone = tmp_path / "x" / "bin" / "fakeclaude"
    req = request(tmp_path, "claude", cli_path=str(gone))
    result = adapter("claude").start(req, lambda e: None).wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "launch_failed"
    assert result.failure.message == f"`{gone}` does not exist"
