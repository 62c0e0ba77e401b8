"""The command line keeps its surface: every (sub)command's flags, their settings
and its ``--help`` are what they were before the option table built the run
flags (``data/parser_surface.json``, recorded from the old parser)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.surface import surface

RECORD = Path(__file__).with_name("data") / "parser_surface.json"


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def current() -> dict[str, Any]:
    return surface()


def test_the_same_commands(recorded: dict[str, Any], current: dict[str, Any]) -> None:
    assert set(current["commands"]) == set(recorded["commands"])  # their order: the help


def test_every_command_has_the_same_arguments(
    recorded: dict[str, Any], current: dict[str, Any]
) -> None:
    for name, command in recorded["commands"].items():
        now = current["commands"][name]
        assert now["actions"] == command["actions"], name
        assert _handler_function(now["defaults"]) == _handler_function(command["defaults"]), name


def _handler_function(defaults: dict[str, Any]) -> dict[str, Any]:
    """``set_defaults`` with the handler's module left out: a handler may move between
    the modules of cli/ (``basic:cmd_init`` is ``store:cmd_init``), not change."""
    handler = defaults.get("handler")
    return {**defaults, "handler": handler.split(":")[1]} if handler else defaults


@pytest.mark.skipif(
    f"{sys.version_info[0]}.{sys.version_info[1]}"
    != json.loads(RECORD.read_text(encoding="utf-8"))["python"],
    reason="argparse lays --help out differently in another Python version",
)
def test_every_help_is_the_same(recorded: dict[str, Any], current: dict[str, Any]) -> None:
    for name, command in recorded["commands"].items():
        assert current["commands"][name]["help"] == command["help"], name


def test_the_run_flags_come_from_the_option_table(current: dict[str, Any]) -> None:
    """A new run option in the table is a new flag of run, plan and repair."""
    from prompt_runner.option_table import FLAGGED

    table = [flag for opt in FLAGGED for flag in opt.flags]
    for name in ("run", "plan", "repair"):
        group = [
            flag
            for action in current["commands"][name]["actions"]
            if action["group"] == "override flags (same for run and plan)"
            for flag in action["flags"]
        ]
        assert group == table, name
