"""The provider option table: the docs file, the plan-time checks and the reference agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.planning import LIFTED_KEYS
from prompt_runner.planning.provider_options import CLI_PROVIDERS, markdown
from prompt_runner.providers._cli import CliProvider
from prompt_runner.providers._cli_options import COMMON_OPTIONS, COMMON_REFUSED
from prompt_runner.providers.base import SessionRequest
from prompt_runner.providers.registry import get_provider

DOC = Path(__file__).resolve().parents[2] / "docs" / "provider-options.md"

# The option keys the reference (Prompt Runner SDK 0.13, lib/prompt_runner/
# provider_options.ex) accepts in every map and per provider; each must be
# honoured or refused here, none accepted and ignored.
REFERENCE_COMMON = [
    "cli_path",
    "env",
    "args",
    "debug",
    "allow_unknown_model",
    "completion_only",
    "output_schema",
    "transport_headless_timeout_ms",
    "ollama",
    "ollama_model",
    "ollama_base_url",
    "ollama_http",
    "ollama_timeout_ms",
]
REFERENCE_KEYS = {
    "claude": "model system_prompt provider_backend external_model_overrides "
    "anthropic_base_url anthropic_auth_token reasoning_effort include_thinking max_turns "
    "append_system_prompt",
    "codex": "model system_prompt reasoning_effort provider_backend model_provider oss_provider "
    "skip_git_repo_check app_server host_tools dynamic_tools reviewed_approval "
    "additional_directories",
    "amp": "model mode include_thinking permissions mcp_config tools",
    "cursor": "model mode sandbox approve_mcps worktree worktree_base skip_worktree_setup "
    "plugin_dirs headers",
    "antigravity": "model sandbox dangerously_skip_permissions conversation continue add_dirs "
    "print_timeout log_file",
}


def cli_provider(name: str) -> CliProvider:
    provider = get_provider(name)
    assert isinstance(provider, CliProvider)
    return provider


def test_the_docs_table_is_what_the_adapters_do() -> None:
    assert DOC.read_text(encoding="utf-8") == markdown(), (
        "docs/provider-options.md is stale: run "
        "`python -m prompt_runner.planning.provider_options > docs/provider-options.md`"
    )


@pytest.mark.parametrize("name", sorted(REFERENCE_KEYS))
def test_every_reference_option_is_honoured_or_refused(name: str) -> None:
    provider = cli_provider(name)
    handled = {*COMMON_OPTIONS, *COMMON_REFUSED, *provider.options, *provider.refused}
    handled |= set(LIFTED_KEYS)
    missing = {*REFERENCE_COMMON, *REFERENCE_KEYS[name].split()} - handled
    assert not missing


def refused_keys() -> list[tuple[str, str, str]]:
    out = []
    for name in CLI_PROVIDERS:
        provider = cli_provider(name)
        refusals = {**COMMON_REFUSED, **provider.refused}
        for key, why in refusals.items():
            if key not in provider.options:
                out.append((name, key, why))
    return out


@pytest.mark.parametrize(("name", "key", "why"), refused_keys())
def test_every_refused_key_is_refused_with_its_reason(
    tmp_path: Path, name: str, key: str, why: str
) -> None:
    request = SessionRequest(
        prompt_id="01",
        prompt_text="x",
        cwd=tmp_path,
        provider=name,
        provider_options={key: "x"},
    )
    with pytest.raises(UserError) as info:
        cli_provider(name).validate_options(request)
    assert info.value.key == f"{name}_opts.{key}"
    assert why in str(info.value)
