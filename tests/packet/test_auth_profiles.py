"""``profile new`` / ``new_profile`` refuse what the plan or ``prompt new`` would
refuse later, before writing the profile; ``prompt new`` ids are ASCII numbers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.packet.scaffold import new_packet
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter


def _home() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"


@pytest.mark.parametrize(
    ("recovery", "key", "words"),
    [
        ({"failover": [{"provider": "nope"}]}, "recovery.failover[0].provider", "nope"),
        (
            {"failover": [{"provider": "simulated", "model": 5}]},
            "recovery.failover[0].model",
            "not a string",
        ),
        (
            {"retry": {"class_attempts": {"not_a_class": 3}}},
            "recovery.retry.class_attempts.not_a_class",
            "unknown failure class",
        ),
        ({"failover": "codex"}, "recovery.failover", "not a list"),
        (
            {"failover": [{"provider": "codex", "modle": "x"}]},
            "recovery.failover[0].modle",
            "model",
        ),
    ],
)
def test_new_profile_refuses_a_recovery_block_the_plan_refuses(
    tmp_path: Path, recovery: dict[str, Any], key: str, words: str
) -> None:
    with pytest.raises(prompt_runner.UserError) as caught:
        prompt_runner.new_profile("p", provider="simulated", recovery=recovery)
    assert caught.value.key == key
    assert words in str(caught.value)
    assert "profiles/p.md" in str(caught.value)
    assert not (_home() / "profiles" / "p.md").exists()


def test_a_recovery_block_new_profile_writes_is_one_the_plan_takes(tmp_path: Path) -> None:
    recovery = {
        "failover": [{"provider": "simulated", "model": "m2"}],
        "retry": {"class_attempts": {"provider_capacity": 2}},
    }
    prompt_runner.new_profile("good", provider="simulated", recovery=recovery)
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a"]}}})
    done = cli("plan", packet, "--profile", "good")
    assert done.returncode == 0, done.stderr


def test_profile_new_refuses_an_unknown_prompt_template(tmp_path: Path) -> None:
    done = cli("profile", "new", "tp", "--provider", "simulated", "--prompt-template", "nope")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "profiles/tp.md" in done.stderr and "--prompt-template" in done.stderr
    assert "'nope'" in done.stderr and "default" in done.stderr
    assert not (_home() / "profiles" / "tp.md").exists()
    ok = cli("profile", "new", "tp", "--provider", "simulated", "--prompt-template", "from-adr")
    assert ok.returncode == 0, ok.stderr


def test_a_profile_template_gone_later_is_named_by_the_profile_file(tmp_path: Path) -> None:
    write_front_matter(
        _home() / "profiles" / "tp.md", {"provider": "simulated", "prompt_template": "gone"}, ""
    )
    packet = new_packet("demo", root=tmp_path, profile="tp", repos=[("app", "/x")])
    with pytest.raises(prompt_runner.UserError) as caught:
        prompt_runner.new_prompt(packet, "01")
    assert caught.value.key == "prompt_template"
    assert str(caught.value).startswith(str(_home() / "profiles" / "tp.md"))
    assert "'gone'" in str(caught.value) and "--template" in str(caught.value)


def test_prompt_new_refuses_a_non_ascii_digit_id(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path, repos=[("app", "/x")])
    done = cli("prompt", "new", "\u0663", "--packet", packet, "--name", "n")
    assert done.returncode == 2
    assert "'\u0663' is not a number" in done.stderr
    assert "built-in template" not in done.stderr and "0\u0663" not in done.stderr
