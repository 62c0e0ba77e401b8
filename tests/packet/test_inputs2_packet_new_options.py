"""``packet new`` refuses, before writing anything, an option value the plan
would refuse for the packet's provider (``--provider``, else the profile's),
judged on the profile's settings with the flags over them: a
``reasoning_effort`` outside the provider's efforts, a ``permission_mode`` it
cannot map, a key it cannot honour, an unknown provider (packet/scaffold.py
``new_packet``, planning/provider_options.py ``check_authored_options``).

The CLI half runs the real ``prompt-runner`` in a subprocess; the library half
calls ``prompt_runner.new_packet`` in this process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.cli import cli


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--provider", "codex", "--reasoning", "huge"],
            "reasoning_effort: reasoning_effort 'huge' is not supported by codex; use one of "
            "none, minimal, low, medium, high, xhigh.",
        ),
        (
            ["--reasoning", "huge"],  # simulated-default: every provider's efforts
            "reasoning_effort: 'huge' is not a value any provider accepts; use one of "
            "none, minimal, low, medium, high, xhigh, max (claude: ",
        ),
        (
            ["--provider", "amp", "--permission", "plan"],
            "permission_mode: permission_mode 'plan' is not supported by provider amp; "
            "use one of default, bypass.",
        ),
        (
            ["--provider", "gemini"],  # the effort is simulated-default's, not a flag's
            "reasoning_effort: provider gemini has no reasoning effort setting (profile "
            "'simulated-default' sets reasoning_effort: 'low'); name a --profile that does not "
            "set reasoning_effort, or another --provider.",
        ),
        (
            ["--profile", "codex-default", "--provider", "antigravity"],
            "reasoning_effort: reasoning_effort 'xhigh' is not supported by antigravity "
            "(profile 'codex-default' sets reasoning_effort: 'xhigh'); give --reasoning to set "
            "it (use one of low, medium, high), or name another --profile.",
        ),
        (
            ["--provider", "nope"],
            "--provider: unknown provider 'nope'; use one of simulated, claude, codex, ",
        ),
    ],
)
def test_a_value_the_provider_refuses_is_one_sentence_and_writes_nothing(
    tmp_path: Path, args: list[str], said: str
) -> None:
    root = tmp_path / "R"
    done = cli("packet", "new", "pk", "--root", root, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    # the CLI names a path under its working directory relative to it
    assert done.stderr.startswith(f"error: R/pk/prompt_runner_packet.md: {said}"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not root.exists()  # not even --root, which packet new creates when it writes


@pytest.mark.parametrize(
    "kwargs",
    [
        {"provider": "codex", "reasoning_effort": "high"},
        {"provider": "claude", "reasoning_effort": "max", "permission_mode": "plan"},
        {"profile": "codex-default", "provider": "claude", "reasoning_effort": "low"},
        {"profile": "codex-default"},
        {"reasoning_effort": "max"},  # simulated ignores effort; claude accepts max
    ],
)
def test_a_value_the_provider_accepts_is_written(tmp_path: Path, kwargs: dict[str, str]) -> None:
    made = prompt_runner.new_packet("pk", root=tmp_path, **kwargs)
    manifest = load_packet(made).manifest
    assert manifest.provider == kwargs.get("provider")
    assert manifest.reasoning_effort == kwargs.get("reasoning_effort")


def test_the_library_names_the_manifest_the_key_and_the_allowed_values(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        prompt_runner.new_packet("pk", root=tmp_path, provider="antigravity", model="m")
    err = caught.value
    # allowed_tools comes from simulated-default, before the model is judged
    assert err.file is not None and Path(err.file) == tmp_path / "pk" / "prompt_runner_packet.md"
    assert err.key == "allowed_tools" and "profile 'simulated-default' sets" in err.reason, err
    assert not (tmp_path / "pk").exists()
