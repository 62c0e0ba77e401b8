"""Profiles and config as the reference system writes them (issue 14).

``config.md``'s ``default_profile`` applies to a packet naming no profile; the
built-in profiles carry the values the reference's ``init`` writes; ``init
--default-profile``; ``profile new --prompt-template --tools``; ``packet new
--retry-base-delay-ms --retry-max-delay-ms --retry-jitter --cli-confirmation``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from prompt_runner import api
from prompt_runner.packet.profiles import load_profile
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def home() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"


def front(path: Path) -> dict[str, object]:
    data = yaml.safe_load(path.read_text().split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_builtin_simulated_default_has_the_reference_values() -> None:
    p = load_profile("simulated-default")
    assert (p.provider, p.model, p.reasoning_effort) == ("simulated", "simulated-demo", "low")
    assert p.permission_mode == "bypass" and p.cli_confirmation == "off"
    assert p.allowed_tools == ["Read", "Edit", "Write", "Bash"]
    assert p.log_meta == "none" and p.log_mode == "compact" and p.tool_output == "summary"
    assert p.recovery is not None
    assert p.recovery["retry"] == {
        "base_delay_ms": 0,
        "max_delay_ms": 0,
        "jitter": False,
    }
    assert p.recovery["resume_attempts"] == 2 and p.recovery["repair"]["enabled"] is True


def test_builtin_codex_default_has_the_reference_values() -> None:
    p = load_profile("codex-default")
    assert (p.provider, p.model, p.reasoning_effort) == ("codex", "gpt-5.6-luna", "xhigh")
    assert p.permission_mode == "bypass" and p.cli_confirmation == "require"
    assert p.allowed_tools == ["Read", "Edit", "Write", "Bash"]
    assert p.recovery is not None and p.recovery["resume_attempts"] == 2
    assert p.recovery["repair"] == {"enabled": True, "max_attempts": 2}


def test_simulated_default_profile_retries_without_waiting(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"recovery": None})
    retry = api.plan(packet).prompts[0].recovery.retry
    assert (retry.base_delay_ms, retry.max_delay_ms, retry.jitter) == (0, 0, False)
    assert retry.max_attempts == 3 and retry.class_attempts["provider_capacity"] == 5


def test_config_default_profile_applies_to_a_packet_naming_none(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": None, "model": None})
    assert api.plan(packet).profile is None  # no config.md: built-in defaults
    assert cli("profile", "new", "team", "--provider", "simulated", "--model", "m9").returncode == 0
    (home() / "config.md").write_text('---\ndefault_profile: "team"\n---\n# config\n')
    plan = api.plan(packet)
    assert plan.profile == "team"
    assert plan.prompts[0].model == "m9" and plan.prompts[0].sources["model"] == "profile"
    named = make_packet(tmp_path / "n", {"01": {}}, manifest={"model": None})
    assert api.plan(named).profile == "simulated-default"  # a named profile wins


def test_config_default_profile_that_does_not_exist_names_config_md(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": None})
    (home()).mkdir(parents=True)
    (home() / "config.md").write_text('---\ndefault_profile: "ghost"\n---\n')
    proc = cli("plan", packet)
    assert proc.returncode == 2
    assert "config.md: default_profile: unknown profile 'ghost'" in proc.stderr
    (home() / "config.md").write_text('---\ndefault_profiles: "x"\n---\n')
    proc = cli("plan", packet)
    assert proc.returncode == 2 and "did you mean 'default_profile'" in proc.stderr


def test_init_default_profile_names_and_creates_it(tmp_path: Path) -> None:
    proc = cli("init", "--default-profile", "mine")
    assert proc.returncode == 0, proc.stderr
    assert front(home() / "config.md") == {"default_profile": "mine"}
    made = load_profile("mine")
    assert made.provider == "codex" and made.reasoning_effort == "xhigh"
    assert made.cli_confirmation == "require"
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": None, "provider": None})
    doc = json.loads(cli("plan", packet, "--json").stdout)
    assert doc["profile"] == "mine" and doc["prompts"][0]["provider"] == "codex"
    # our plain init names the simulated profile (a deliberate difference)
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path / "other")
    assert cli("init").returncode == 0
    assert front(tmp_path / "other" / "prompt_runner" / "config.md") == {
        "default_profile": "simulated-default"
    }


def test_profile_new_prompt_template_tools_and_recovery(tmp_path: Path) -> None:
    proc = cli(
        "profile", "new", "claude-safe", "--provider", "claude", "--model", "haiku",
        "--prompt-template", "from-adr", "--permission", "default", "--tools", "Read, Bash",
        "--cli-confirmation", "off", "--retry-base-delay-ms", "0", "--no-retry-jitter",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = front(home() / "profiles" / "claude-safe.md")
    assert data["prompt_template"] == "from-adr" and data["allowed_tools"] == ["Read", "Bash"]
    assert data["recovery"] == {"retry": {"base_delay_ms": 0, "jitter": False}}
    p = load_profile("claude-safe")
    assert p.provider == "claude" and p.permission_mode == "default"
    packet = tmp_path / "demo"
    assert cli("packet", "new", "demo", "--root", str(tmp_path), "--profile", "claude-safe",
               "--repo", f"app={tmp_path}").returncode == 0  # fmt: skip
    assert cli("prompt", "new", "01", "--packet", str(packet)).returncode == 0
    assert front(packet / "prompts" / "01_prompt_01.prompt.md")["template"] == "from-adr"


def test_packet_new_backoff_jitter_and_confirmation_flags(tmp_path: Path) -> None:
    proc = cli(
        "packet", "new", "demo", "--root", str(tmp_path), "--profile", "simulated-default",
        "--retry-base-delay-ms", "250", "--retry-max-delay-ms", "2000", "--retry-jitter",
        "--cli-confirmation", "warn",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = front(tmp_path / "demo" / "prompt_runner_packet.md")
    assert data["cli_confirmation"] == "warn"
    assert data["recovery"] == {
        "retry": {"base_delay_ms": 250, "max_delay_ms": 2000, "jitter": True}
    }
    proc = cli("packet", "new", "d2", "--root", str(tmp_path), "--no-retry-jitter")
    assert front(tmp_path / "d2" / "prompt_runner_packet.md")["recovery"] == {
        "retry": {"jitter": False}
    }


def test_packet_new_names_the_configured_default_profile(tmp_path: Path) -> None:
    assert cli("init", "--default-profile", "simulated-default").returncode == 0
    assert cli("packet", "new", "demo", "--root", str(tmp_path)).returncode == 0
    assert front(tmp_path / "demo" / "prompt_runner_packet.md")["profile"] == "simulated-default"
