"""Numeric keys take numbers: a bool is not an integer, and a string is not one
either outside ``recovery`` (whose ``"5"`` the reference normalises to 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from tests.helpers.packets import FAST, make_packet


def plan_error(
    tmp_path: Path, prompt: dict[str, Any], manifest: dict[str, Any] | None = None
) -> UserError:
    packet = make_packet(tmp_path, {"01": prompt}, manifest=manifest)
    with pytest.raises(UserError) as caught:
        api.plan(packet)
    return caught.value


@pytest.mark.parametrize("value", [True, False, "1", "600000", 1.5])
def test_timeout_takes_whole_milliseconds_only(tmp_path: Path, value: object) -> None:
    error = plan_error(tmp_path, {"timeout": value})
    assert error.key == "timeout" and error.file is not None
    assert error.file.endswith("01_step.prompt.md")
    assert "milliseconds" in str(error) and "unbounded" in str(error)
    assert "more problem" not in str(error)


@pytest.mark.parametrize("value", ["unbounded", "Infinity", 60_000])
def test_timeout_still_takes_milliseconds_and_the_unbounded_words(
    tmp_path: Path, value: object
) -> None:
    packet = make_packet(tmp_path, {"01": {"timeout": value}})
    assert api.plan(packet).prompts[0].timeout_ms == (value if isinstance(value, int) else None)


@pytest.mark.parametrize(
    ("prompt", "manifest", "key"),
    [
        ({"max_turns": True}, None, "max_turns"),
        ({"max_turns": "3"}, None, "max_turns"),
        ({}, {"max_turns": True}, "max_turns"),
        ({}, {"agent_control": {"max_iterations": True}}, "agent_control.max_iterations"),
        ({}, {"agent_control": {"max_iterations": "5"}}, "agent_control.max_iterations"),
        ({"simulate": {"attempts": [{"delay_ms": True}]}}, None, "simulate.attempts[0].delay_ms"),
        ({"simulate": {"attempts": [{"delay_ms": "5"}]}}, None, "simulate.attempts[0].delay_ms"),
        ({"simulate": {"attempts": [{"cost_usd": True}]}}, None, "simulate.attempts[0].cost_usd"),
        ({"simulate": {"attempts": [{"cost_usd": "0.5"}]}}, None, "simulate.attempts[0].cost_usd"),
        ({"recovery": {"resume_attempts": True}}, None, "recovery.resume_attempts"),
        ({"recovery": {"max_steers": False}}, None, "recovery.max_steers"),
        ({"recovery": {"retry": {"max_attempts": True}}}, None, "recovery.retry.max_attempts"),
        ({"recovery": {"retry": {"base_delay_ms": True}}}, None, "recovery.retry.base_delay_ms"),
        (
            {"recovery": {"retry": {"class_attempts": {"unknown": True}}}},
            None,
            "recovery.retry.class_attempts.unknown",
        ),
        ({"recovery": {"repair": {"max_attempts": True}}}, None, "recovery.repair.max_attempts"),
        (
            {"recovery": {"usage_limit": {"pace_above": True}}},
            None,
            "recovery.usage_limit.pace_above",
        ),
        (
            {},
            {"recovery": {**FAST, "usage_limit": {"pace_above": True}}},
            "recovery.usage_limit.pace_above",
        ),
    ],
)
def test_a_bool_or_a_string_is_not_a_number(
    tmp_path: Path, prompt: dict[str, Any], manifest: dict[str, Any] | None, key: str
) -> None:
    error = plan_error(tmp_path, prompt, manifest)
    assert error.key == key, str(error)
    assert "more problem" not in str(error)


def test_recovery_numbers_written_as_strings_load_as_the_reference_normalises_them(
    tmp_path: Path,
) -> None:
    recovery = {
        **FAST,
        "resume_attempts": "5",
        "repair": {"enabled": "false"},
        "usage_limit": {"pace_above": "0.9"},
    }
    packet = make_packet(tmp_path, {"01": {}}, manifest={"recovery": recovery})
    config = api.plan(packet).prompts[0].recovery
    assert config.resume_attempts == 5 and config.repair.enabled is False
    assert config.usage_limit.pace_above == 0.9


def test_pace_above_true_is_refused_with_the_sentence_of_every_recovery_number(
    tmp_path: Path,
) -> None:
    error = plan_error(tmp_path, {"recovery": {"usage_limit": {"pace_above": True}}})
    # in YAML's words, not Python's True (session 12)
    said = "true (YAML reads an unquoted yes, on or true as a boolean) is not a number"
    assert error.reason == said
    assert str(error).endswith(f"recovery.usage_limit.pace_above: {said}; correct the value.")


def test_a_wrong_max_attempts_is_one_problem_not_one_per_failure_class(tmp_path: Path) -> None:
    # max_attempts is every class's budget: it was copied into the nine classes
    # first, and each copy counted as another problem
    error = plan_error(tmp_path, {"recovery": {"retry": {"max_attempts": "three"}}})
    assert error.key == "recovery.retry.max_attempts"
    assert error.reason == "'three' is not an integer"


def test_a_wrong_recovery_value_names_the_level_that_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files from here: demo/...
    # the manifest's value was named in the prompt file, which also set recovery
    packet = make_packet(
        tmp_path,
        {"01": {"recovery": {"resume_attempts": 1}}},
        manifest={"recovery": {**FAST, "max_steers": True}},
    )
    with pytest.raises(UserError) as caught:
        api.plan(packet)
    assert caught.value.key == "recovery.max_steers"
    assert caught.value.file == "demo/prompt_runner_packet.md"
