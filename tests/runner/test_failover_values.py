"""A ``recovery.failover`` entry's values are checked when the plan is resolved,
as the prompt's own are: the types of its keys, the provider option maps, the
options its provider lacks (an effort level, an unknown option key). A bad one
is exit 2 from ``plan``, ``run``, ``repair`` and ``start`` in one sentence
naming ``recovery.failover[N].KEY`` and the file that set it -- not an argv the
failover CLI refuses hours into the run (planning/recovery.py).

Real ``prompt-runner`` subprocesses on packets with a real git repo and fake
``claude`` / ``codex`` CLIs on PATH (tests/runner/test_usage_limits.py's ``Run``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from tests.helpers.packets import FAST, write_front_matter
from tests.runner.test_usage_limits import PROMPT, Run, claude_success

BAD_VALUES = [
    ({"timeout": True}, "timeout", "not True"),
    ({"reasoning_effort": "ultra"}, "reasoning_effort", "'ultra' is not supported by codex"),
    ({"codex_opts": {"bogus_key": 1}}, "codex_opts.bogus_key", "unknown option 'bogus_key'"),
    ({"codex_opts": 3}, "codex_opts", "3 is not a mapping"),
    ({"model": 5}, "model", "5 (YAML reads unquoted digits as a number) is not a string"),
]


def failover_run(tmp_path: Path, failover: Any, *, in_prompt: bool = False) -> Run:
    """A claude packet whose ``recovery.failover`` is ``failover`` (in the manifest,
    or in prompt 01's front matter)."""
    prompt = {**PROMPT["01"]}
    manifest: dict[str, Any] = {"recovery": FAST}
    if in_prompt:
        prompt["recovery"] = {"failover": failover}
    else:
        manifest["recovery"] = {**FAST, "failover": failover}
    run = Run(tmp_path, [claude_success()], {"01": prompt}, manifest)
    run.env["PATH"] = f"{tmp_path / 'bin'}:/usr/bin:/bin"
    return run


def one_error_line(proc: Any) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return str(lines[0])


@pytest.mark.parametrize(("value", "key", "reason"), BAD_VALUES)
def test_a_bad_failover_value_is_refused_by_plan_and_run_before_any_session(
    tmp_path: Path, value: dict[str, Any], key: str, reason: str
) -> None:
    run = failover_run(tmp_path, [{"provider": "codex", "model": "gpt-5.5", **value}])
    for command in ("plan", "run"):
        line = one_error_line(run.cli(command, str(run.packet)))
        assert f"prompt_runner_packet.md: recovery.failover[0].{key}: " in line, line
        assert reason in line, line
    assert run.invocations() == []  # claude never started: nothing was spent
    assert not (tmp_path / "repo" / "hello.txt").exists()


@pytest.mark.parametrize(("value", "key", "reason"), BAD_VALUES)
def test_the_library_names_the_failover_key(
    tmp_path: Path, value: dict[str, Any], key: str, reason: str
) -> None:
    run = failover_run(tmp_path, [{"provider": "codex", **value}])
    with pytest.raises(UserError) as info:
        prompt_runner.plan(run.packet)
    assert info.value.key == f"recovery.failover[0].{key}"
    assert info.value.file is not None and info.value.file.endswith("prompt_runner_packet.md")
    assert reason in str(info.value)


def test_a_failover_set_in_a_prompt_names_the_prompt_file_and_its_index(tmp_path: Path) -> None:
    entries = [{"provider": "codex"}, {"provider": "codex", "reasoning_effort": "ultra"}]
    run = failover_run(tmp_path, entries, in_prompt=True)
    line = one_error_line(run.cli("plan", str(run.packet)))
    assert "01_step.prompt.md: recovery.failover[1].reasoning_effort: " in line, line


def test_repair_and_start_refuse_a_bad_failover_value_too(tmp_path: Path) -> None:
    run = failover_run(tmp_path, [{"provider": "codex", "codex_opts": {"bogus_key": 1}}])
    line = one_error_line(run.cli("repair", str(run.packet), "01"))
    assert "recovery.failover[0].codex_opts.bogus_key" in line, line
    proc = run.cli("start", str(run.packet), timeout=90)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "recovery.failover[0].codex_opts.bogus_key" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert run.invocations() == []


def test_a_lower_levels_map_refused_by_the_failover_provider_names_that_map(
    tmp_path: Path,
) -> None:
    """The packet's ``codex_opts`` reach only the codex failover target here (the
    prompt runs on claude): its unknown key was never checked before."""
    prompt = {**PROMPT["01"]}
    manifest = {
        "codex_opts": {"bogus_key": 1},
        "recovery": {**FAST, "failover": [{"provider": "codex", "model": "gpt-5.5"}]},
    }
    run = Run(tmp_path, [claude_success()], {"01": prompt}, manifest)
    line = one_error_line(run.cli("plan", str(run.packet)))
    assert "prompt_runner_packet.md: codex_opts.bogus_key: " in line, line
    assert "recovery.failover[0] runs on codex" in line, line


@pytest.mark.parametrize(
    ("failover", "key", "words"),
    [
        ([{"provdier": "codex"}], "recovery.failover[0].provdier", "did you mean 'provider'?"),
        ([{"model": "gpt-5.5"}], "recovery.failover[0].provider", "names no provider"),
        ("codex", "recovery.failover", "e.g. [{provider: codex}]"),
        (["codex"], "recovery.failover[0]", "e.g. [{provider: codex}]"),
        ({"provider": "codex"}, "recovery.failover", "e.g. [{provider: codex}]"),
        ([{"provider": "codex", "recovery": {}}], "recovery.failover[0].recovery", "remove it"),
    ],
)
def test_a_misshapen_failover_says_how_to_write_it(
    tmp_path: Path, failover: Any, key: str, words: str
) -> None:
    run = failover_run(tmp_path, failover)
    line = one_error_line(run.cli("plan", str(run.packet)))
    assert f"prompt_runner_packet.md: {key}: " in line, line
    assert words in line, line
    assert "got None" not in line and "e.g. [codex]" not in line, line


def test_the_advised_form_plans(tmp_path: Path) -> None:
    run = failover_run(tmp_path, [{"provider": "codex"}])
    proc = run.cli("plan", str(run.packet), "--json")
    assert proc.returncode == 0, proc.stderr
    (prompt,) = json.loads(proc.stdout)["prompts"]
    assert prompt["failover"] == [{"provider": "codex", "model": None}]


def test_good_failover_values_still_plan_and_reach_the_target(tmp_path: Path) -> None:
    entry = {
        "provider": "codex",
        "model": "gpt-5.5",
        "reasoning_effort": "high",
        "timeout": "unbounded",
        "max_turns": None,
        "codex_opts": {"skip_git_repo_check": False},
    }
    run = failover_run(tmp_path, [entry])
    proc = run.cli("plan", str(run.packet))
    assert proc.returncode == 0, proc.stderr
    (target,) = prompt_runner.plan(run.packet).prompts[0].failover
    assert (target.provider, target.model, target.reasoning_effort) == ("codex", "gpt-5.5", "high")
    assert target.timeout_ms is None and target.max_turns is None
    assert target.provider_options["skip_git_repo_check"] is False
    assert target.sources["reasoning_effort"] == "failover"


def test_an_unselected_prompts_failover_is_not_asked_its_provider(tmp_path: Path) -> None:
    """As the prompt's own options: only a selected prompt's provider is asked."""
    bad = {"recovery": {"failover": [{"provider": "codex", "reasoning_effort": "ultra"}]}}
    run = Run(
        tmp_path,
        [claude_success()],
        {"01": {**PROMPT["01"]}, "02": {**PROMPT["01"], **bad}},
        {"recovery": FAST},
    )
    assert run.cli("plan", str(run.packet), "01").returncode == 0
    line = one_error_line(run.cli("plan", str(run.packet), "02"))
    assert "recovery.failover[0].reasoning_effort" in line, line


def test_a_simulated_failover_target_refuses_an_option_it_would_ignore(tmp_path: Path) -> None:
    entry = {"provider": "simulated", "adapter_opts": {"extra_args": ["--x"]}}
    run = failover_run(tmp_path, [entry])
    line = one_error_line(run.cli("plan", str(run.packet)))
    assert "prompt_runner_packet.md: recovery.failover[0].adapter_opts.extra_args: " in line, line
    assert "reads only max_cost_usd" in line, line
    budget = {"provider": "simulated", "adapter_opts": {"max_cost_usd": 1.0}}
    good = failover_run(tmp_path / "good", [budget])
    proc = good.cli("plan", str(good.packet))
    assert proc.returncode == 0, proc.stderr


def test_a_failover_set_in_a_profile_names_the_profile(tmp_path: Path) -> None:
    profiles = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner" / "profiles"
    front = {
        "provider": "claude",
        "recovery": {"failover": [{"provider": "codex", "timeout": True}]},
    }
    write_front_matter(profiles / "fo.md", front, "# fo\n")
    run = Run(tmp_path, [claude_success()], {"01": {**PROMPT["01"]}}, {"profile": "fo"})
    line = one_error_line(run.cli("plan", str(run.packet)))
    assert f"{profiles / 'fo.md'}: recovery.failover[0].timeout: " in line, line
