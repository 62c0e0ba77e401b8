"""Every provider option map reaches its provider, or is refused at plan time.

Each map test runs a real packet through :func:`prompt_runner.api.run` with a
fake CLI on PATH (tests/helpers/fake_cli.py) that records the argv and the
environment it was started with: the option is proven where the CLI sees it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from tests.helpers.packets import make_packet
from tests.providers.conftest import DATA, FakeCli, case_dir

ONE_SHOT = {
    "resume_attempts": 0,
    "retry": {"max_attempts": 0, "base_delay_ms": 0, "max_delay_ms": 0, "jitter": False},
    "repair": {"enabled": False},
}
CLI_NAMES = {
    "claude": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "amp": "amp",
    "cursor": "agent",
    "antigravity": "agy",
}


def transcript(provider: str) -> dict[str, Any]:
    """A fake-CLI run replaying a recorded stream of ``provider``."""
    cases = {"claude": "success_write", "codex": "text_only", "gemini": "write"}
    if provider in cases:
        return {"case": str(case_dir(provider, cases[provider]))}
    sample = {
        "amp": "news_streaming_json.jsonl",
        "cursor": "tool_call_sample.jsonl",
        "antigravity": "agy_1.2_text_deltas.jsonl",
    }[provider]
    return {"stdout": (DATA / provider / sample).read_text(encoding="utf-8"), "exit_code": 0}


def packet_for(
    tmp_path: Path,
    provider: str,
    *,
    manifest: dict[str, Any] | None = None,
    prompt: dict[str, Any] | None = None,
) -> Path:
    return make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"]}, **(prompt or {})}},
        manifest={
            "profile": None,
            "provider": provider,
            "model": None,
            "recovery": ONE_SHOT,
            **(manifest or {}),
        },
    )


def launched(
    fake_cli: FakeCli, tmp_path: Path, provider: str, **where: dict[str, Any]
) -> dict[str, Any]:
    """Run a one-prompt packet on ``provider``; return the first recorded invocation."""
    fake_cli.install(CLI_NAMES[provider], [transcript(provider)])
    api.run(packet_for(tmp_path, provider, **where))
    records = fake_cli.records()
    assert records, "the provider CLI was never started"
    return records[0]


def flag_value(argv: list[str], flag: str) -> str:
    assert flag in argv, argv
    return argv[argv.index(flag) + 1]


# ----------------------------------------------------------------- one test per option map


def test_adapter_opts_reach_the_provider(fake_cli: FakeCli, tmp_path: Path) -> None:
    record = launched(
        fake_cli, tmp_path, "claude", manifest={"adapter_opts": {"fallback_model": "sonnet"}}
    )
    assert flag_value(record["argv"], "--fallback-model") == "sonnet"


def test_sdk_opts_reach_the_provider(fake_cli: FakeCli, tmp_path: Path) -> None:
    record = launched(fake_cli, tmp_path, "codex", prompt={"sdk_opts": {"profile": "ci"}})
    assert flag_value(record["argv"], "-p") == "ci"


def test_claude_opts_reach_claude(fake_cli: FakeCli, tmp_path: Path) -> None:
    opts = {"reasoning_effort": "high", "anthropic_base_url": "http://127.0.0.1:9", "max_turns": 4}
    record = launched(fake_cli, tmp_path, "claude", manifest={"claude_opts": opts})
    assert flag_value(record["argv"], "--effort") == "high"
    assert flag_value(record["argv"], "--max-turns") == "4"
    assert record["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"


def test_codex_opts_reach_codex(fake_cli: FakeCli, tmp_path: Path) -> None:
    opts = {"model_provider": "mock", "oss_provider": "ollama"}
    record = launched(fake_cli, tmp_path, "codex", manifest={"codex_opts": opts})
    argv = record["argv"]
    assert flag_value(argv, "-c") == 'model_provider="mock"'
    assert "--oss" in argv and flag_value(argv, "--local-provider") == "ollama"


def test_codex_thread_opts_reach_codex(fake_cli: FakeCli, tmp_path: Path) -> None:
    # The multi-repo guide's way to give Codex a sibling repo: a path relative
    # to the packet directory, and the thread's reasoning effort.
    (tmp_path / "beta").mkdir()
    opts = {"additional_directories": ["../beta"], "reasoning_effort": "xhigh"}
    record = launched(fake_cli, tmp_path, "codex", manifest={"codex_thread_opts": opts})
    argv = record["argv"]
    assert flag_value(argv, "--add-dir") == str((tmp_path / "beta").resolve())
    assert 'model_reasoning_effort="xhigh"' in argv


def test_gemini_opts_reach_gemini(fake_cli: FakeCli, tmp_path: Path) -> None:
    opts = {"trust_workspace": False, "args": ["--debug"]}
    record = launched(fake_cli, tmp_path, "gemini", prompt={"gemini_opts": opts})
    assert "--debug" in record["argv"]
    assert "GEMINI_CLI_TRUST_WORKSPACE" not in record["env"]


def test_amp_opts_reach_amp(fake_cli: FakeCli, tmp_path: Path) -> None:
    opts = {"mode": "rush", "include_thinking": True, "mcp_config": {"servers": {}}}
    record = launched(fake_cli, tmp_path, "amp", manifest={"amp_opts": opts})
    argv = record["argv"]
    assert flag_value(argv, "--mode") == "rush"
    assert "--stream-json-thinking" in argv
    assert json.loads(flag_value(argv, "--mcp-config")) == {"servers": {}}


def test_cursor_opts_reach_cursor(fake_cli: FakeCli, tmp_path: Path) -> None:
    opts = {"sandbox": True, "mode": "ask", "headers": {"X-Team": "core"}}
    record = launched(fake_cli, tmp_path, "cursor", manifest={"cursor_opts": opts})
    argv = record["argv"]
    assert flag_value(argv, "--sandbox") == "enabled"
    assert flag_value(argv, "--mode") == "ask"
    assert flag_value(argv, "-H") == "X-Team: core"


def test_antigravity_opts_reach_antigravity(fake_cli: FakeCli, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    opts = {"add_dirs": ["../docs"], "print_timeout": "15m", "log_file": "agy.log"}
    record = launched(fake_cli, tmp_path, "antigravity", manifest={"antigravity_opts": opts})
    argv = record["argv"]
    dirs = [argv[i + 1] for i, a in enumerate(argv) if a == "--add-dir"]
    assert str((tmp_path / "docs").resolve()) in dirs
    assert flag_value(argv, "--print-timeout") == "15m"
    assert flag_value(argv, "--log-file") == "agy.log"


def test_every_option_map_of_the_packet_model_has_a_test() -> None:
    from prompt_runner.packet.models import PROVIDER_OPTION_KEYS

    tested = {
        name.removeprefix("test_").removesuffix("_reach_the_provider")
        for name in globals()
        if name.startswith("test_") and "_opts_reach" in name
    }
    tested = {name.split("_reach")[0] for name in tested}
    assert tested == set(PROVIDER_OPTION_KEYS)


# ----------------------------------------------------------------- shared keys inside a map


def test_a_map_key_at_a_more_specific_level_beats_the_top_level_key(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    record = launched(
        fake_cli,
        tmp_path,
        "codex",
        manifest={"reasoning_effort": "low"},
        prompt={"codex_thread_opts": {"reasoning_effort": "high"}},
    )
    assert 'model_reasoning_effort="high"' in record["argv"]


def test_beside_the_top_level_key_at_one_level_the_top_level_key_wins(tmp_path: Path) -> None:
    packet = packet_for(
        tmp_path,
        "codex",
        manifest={"reasoning_effort": "low", "codex_thread_opts": {"reasoning_effort": "high"}},
    )
    pp = api.plan(packet).prompts[0]
    assert pp.reasoning_effort == "low" and pp.sources["reasoning_effort"] == "packet"
    assert "reasoning_effort" not in pp.provider_options


def test_a_shared_key_in_a_map_is_checked_as_the_top_level_key(tmp_path: Path) -> None:
    packet = packet_for(tmp_path, "claude", prompt={"claude_opts": {"max_turns": 0}})
    with pytest.raises(UserError) as info:
        api.plan(packet)
    assert info.value.key == "claude_opts.max_turns" and "at least 1" in str(info.value)
    assert str(info.value.file).endswith("prompts/01_step.prompt.md")


def test_include_thinking_false_leaves_thinking_out_of_the_stream(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    lines = (case_dir("claude", "success_write") / "stdout.jsonl").read_text().splitlines()
    first = json.loads(lines[1])
    thought = dict(
        first, message={**first["message"], "content": [{"type": "thinking", "thinking": "hmm"}]}
    )
    stdout = "\n".join([lines[0], json.dumps(thought), *lines[1:]]) + "\n"
    fake_cli.install("claude", [{"stdout": stdout, "exit_code": 0}])
    kinds: dict[bool, list[str]] = {}
    for include in (True, False):
        seen: list[str] = []
        packet = packet_for(
            tmp_path / str(include),
            "claude",
            manifest={"claude_opts": {"include_thinking": include}},
        )
        api.run(packet, on_event=lambda _id, event, seen=seen: seen.append(event["kind"]))
        kinds[include] = seen
    assert "thinking" in kinds[True]
    assert "thinking" not in kinds[False]
    assert "assistant_text" in kinds[False]


def test_output_schema_is_sent_inline_to_claude_and_as_a_file_to_codex(tmp_path: Path) -> None:
    schema = {"type": "object", "required": ["name"]}
    claude_packet = packet_for(
        tmp_path / "c", "claude", manifest={"claude_opts": {"output_schema": schema}}
    )
    argv = api.plan(claude_packet).to_dict()["prompts"][0]["argv"]
    assert json.loads(flag_value(argv, "--json-schema")) == schema
    codex_packet = packet_for(
        tmp_path / "x", "codex", manifest={"codex_opts": {"output_schema": "schema.json"}}
    )
    argv = api.plan(codex_packet).to_dict()["prompts"][0]["argv"]
    assert flag_value(argv, "--output-schema") == str((codex_packet / "schema.json").resolve())


def test_completion_only_maps_to_no_tools_or_a_read_only_sandbox(tmp_path: Path) -> None:
    claude_packet = packet_for(
        tmp_path / "c", "claude", manifest={"claude_opts": {"completion_only": True}}
    )
    argv = api.plan(claude_packet).to_dict()["prompts"][0]["argv"]
    assert flag_value(argv, "--tools") == ""
    codex_packet = packet_for(
        tmp_path / "x", "codex", manifest={"codex_opts": {"completion_only": True}}
    )
    argv = api.plan(codex_packet).to_dict()["prompts"][0]["argv"]
    assert flag_value(argv, "--sandbox") == "read-only"
    bypass = packet_for(
        tmp_path / "b",
        "codex",
        manifest={"permission_mode": "bypass", "codex_opts": {"completion_only": True}},
    )
    with pytest.raises(UserError, match="read-only sandbox"):
        api.plan(bypass)


# ----------------------------------------------------------------- refused at plan time


REFUSED = [
    ("claude", "claude_opts", "transport_headless_timeout_ms", 5000, "process group is reaped"),
    ("claude", "claude_opts", "external_model_overrides", {"x": "y"}, "model registry"),
    ("claude", "claude_opts", "anthropic_auth_token", "sk-x", "does not belong in a packet"),
    ("claude", "adapter_opts", "debug", True, "debug log"),
    ("codex", "codex_opts", "app_server", True, "app-server protocol"),
    ("codex", "codex_thread_opts", "dynamic_tools", [], "app-server protocol"),
    ("codex", "codex_opts", "provider_backend", "ollama", "session manager"),
    ("codex", "codex_opts", "allow_unknown_model", False, "keeps no model list"),
    ("amp", "amp_opts", "permissions", [], "settings"),
    ("amp", "amp_opts", "output_schema", {}, "no structured-output flag"),
    ("amp", "amp_opts", "completion_only", True, "no mode without tools"),
    ("cursor", "cursor_opts", "worktree", "w", "work tree"),
    ("antigravity", "antigravity_opts", "conversation", "c-1", "exact conversation"),
    ("antigravity", "antigravity_opts", "ollama", True, "Ollama"),
    ("gemini", "gemini_opts", "transport_headless_timeout_ms", 1, "process group is reaped"),
]


@pytest.mark.parametrize(("provider", "name", "key", "value", "why"), REFUSED)
def test_an_option_that_cannot_apply_is_refused_at_plan_time_with_why(
    tmp_path: Path, provider: str, name: str, key: str, value: Any, why: str
) -> None:
    packet = packet_for(tmp_path, provider, manifest={name: {key: value}})
    with pytest.raises(UserError) as info:
        api.plan(packet)
    assert info.value.key == f"{name}.{key}"
    assert str(info.value.file).endswith("prompt_runner_packet.md")
    assert why in str(info.value)


def test_allow_unknown_model_true_is_what_the_runner_does(tmp_path: Path) -> None:
    packet = packet_for(
        tmp_path,
        "codex",
        manifest={"model": "gpt-9-unreleased", "codex_opts": {"allow_unknown_model": True}},
    )
    argv = api.plan(packet).to_dict()["prompts"][0]["argv"]
    assert flag_value(argv, "-m") == "gpt-9-unreleased"


def test_an_unknown_option_suggests_the_close_one(tmp_path: Path) -> None:
    packet = packet_for(
        tmp_path, "codex", manifest={"codex_thread_opts": {"additional_directory": []}}
    )
    with pytest.raises(UserError) as info:
        api.plan(packet)
    assert info.value.key == "codex_thread_opts.additional_directory"
    assert "did you mean 'additional_directories'?" in str(info.value)


def test_a_map_no_prompt_runs_on_is_refused(tmp_path: Path) -> None:
    packet = packet_for(tmp_path / "a", "codex", manifest={"claude_opts": {"max_retries": 1}})
    with pytest.raises(UserError) as info:
        api.plan(packet)
    assert info.value.key == "claude_opts" and "no prompt of this packet runs on" in str(info.value)
    mixed = packet_for(tmp_path / "b", "claude", prompt={"codex_opts": {"profile": "ci"}})
    with pytest.raises(UserError) as info:
        api.plan(mixed)
    assert str(info.value.file).endswith("prompts/01_step.prompt.md")
    assert info.value.key == "codex_opts"


def test_a_map_for_another_prompts_provider_is_kept_for_that_prompt(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["README.md"]}},
            "02": {"provider": "codex", "verify": {"files_exist": ["README.md"]}},
        },
        manifest={
            "profile": None,
            "provider": "claude",
            "model": None,
            "codex_opts": {"profile": "ci"},
        },
    )
    first, second = api.plan(packet).to_dict()["prompts"]
    assert first["provider"] == "claude" and "ci" not in first["argv"]
    assert flag_value(second["argv"], "-p") == "ci"


def test_an_explicit_provider_override_does_not_refuse_the_packets_maps(tmp_path: Path) -> None:
    packet = packet_for(
        tmp_path, "codex", manifest={"codex_thread_opts": {"additional_directories": []}}
    )
    assert api.plan(packet, provider="simulated").prompts[0].provider == "simulated"


def test_the_simulated_provider_refuses_any_option_but_its_cost_budget(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path / "a", {"01": {}}, manifest={"adapter_opts": {"fallback_model": "x"}}
    )
    with pytest.raises(UserError) as info:
        api.plan(packet)
    assert info.value.key == "adapter_opts.fallback_model"
    assert "simulated provider runs no CLI" in str(info.value)
    budget = make_packet(tmp_path / "b", {"01": {}}, manifest={"adapter_opts": {"max_cost_usd": 1}})
    assert api.plan(budget).prompts[0].max_cost_usd == 1
    assert api.plan(packet, provider="simulated").prompts[0].provider == "simulated"
