"""``profile new`` refuses, before writing anything, an option value the plan
would refuse: a ``reasoning_effort`` outside what the provider accepts (or,
with no provider, outside every provider's), a ``permission_mode`` the provider
cannot map, a key it cannot honour (packet/profiles.py ``new_profile``,
planning/provider_options.py ``check_authored_options``).

The CLI half runs the real ``prompt-runner``; the library half calls
``prompt_runner.new_profile`` in this process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.packet.profiles import load_profile
from tests.helpers.cli import cli


def _profile(name: str) -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner" / "profiles" / f"{name}.md"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--reasoning", "huge"],
            "reasoning_effort: 'huge' is not a value any provider accepts; use one of "
            "none, minimal, low, medium, high, xhigh, max (claude: ",
        ),
        (
            ["--provider", "simulated", "--reasoning", "huge"],
            "reasoning_effort: 'huge' is not a value any provider accepts; use one of ",
        ),
        (
            ["--provider", "codex", "--reasoning", "max"],
            "reasoning_effort: reasoning_effort 'max' is not supported by codex; use one of "
            "none, minimal, low, medium, high, xhigh.",
        ),
        (
            ["--provider", "gemini", "--reasoning", "high"],
            "reasoning_effort: provider gemini has no reasoning effort setting",
        ),
        (
            ["--provider", "amp", "--permission", "plan"],
            "permission_mode: permission_mode 'plan' is not supported by provider amp; "
            "use one of default, bypass.",
        ),
        (["--provider", "amp", "--model", "x"], "model: provider amp cannot honour model"),
    ],
)
def test_a_value_the_provider_refuses_is_one_sentence_and_writes_nothing(
    tmp_path: Path, args: list[str], said: str
) -> None:
    done = cli("profile", "new", "bad", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {_profile('bad')}: {said}"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not _profile("bad").exists()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"reasoning_effort": "low"},
        {"provider": "simulated", "reasoning_effort": "max"},
        {"provider": "codex", "reasoning_effort": "none", "cli_confirmation": "require"},
        {"provider": "claude", "reasoning_effort": "max", "permission_mode": "bypass"},
        {"provider": "antigravity", "reasoning_effort": "high", "model": "any free text"},
    ],
)
def test_a_value_the_provider_accepts_is_written(kwargs: dict[str, str]) -> None:
    path = prompt_runner.new_profile("good", **kwargs)
    assert path == _profile("good") and path.exists()
    assert load_profile("good").reasoning_effort == kwargs["reasoning_effort"]


def test_the_library_names_the_file_the_key_and_the_allowed_values() -> None:
    with pytest.raises(UserError) as caught:
        prompt_runner.new_profile("lib", provider="antigravity", reasoning_effort="xhigh")
    err = caught.value
    assert err.file is not None and Path(err.file).resolve() == _profile("lib").resolve()
    assert err.key == "reasoning_effort" and err.fix == "use one of low, medium, high", err
    assert not _profile("lib").exists()


def test_an_existing_profile_is_left_as_it_was_when_force_meets_a_bad_value() -> None:
    first = prompt_runner.new_profile("kept", provider="codex", reasoning_effort="high")
    before = first.read_text()
    with pytest.raises(UserError):
        prompt_runner.new_profile("kept", provider="codex", reasoning_effort="huge", force=True)
    assert first.read_text() == before
