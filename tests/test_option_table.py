"""One option table (issue 13): each run option is declared once -- name, flags,
choices, help -- and RunOptions, the packet models, the CLI and the library
all take it from there."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import ArgumentError, UserError
from prompt_runner.option_table import ALIASES, BY_NAME, RUN_OPTIONS
from prompt_runner.packet import model_types, models
from prompt_runner.planning import RunOptions
from tests.helpers.packets import make_packet


def test_every_run_option_is_one_field_of_run_options() -> None:
    names = [opt.name for opt in RUN_OPTIONS]
    assert len(names) == len(set(names))
    assert set(names) == {f.name for f in dataclasses.fields(RunOptions)}


def test_the_choices_are_the_literal_types_run_options_is_annotated_with() -> None:
    hints = typing.get_type_hints(RunOptions)
    for opt in RUN_OPTIONS:
        words = [
            typing.get_args(k)
            for k in typing.get_args(hints[opt.name])
            if typing.get_origin(k) is typing.Literal
        ]
        assert words == ([opt.choices] if opt.choices else []), opt.name


def test_the_packet_models_take_the_same_words() -> None:
    for name in ("PermissionMode", "LogMode", "EventsMode", "ToolOutput", "Thinking", "DiffMode"):
        assert getattr(models, name) is getattr(prompt_runner.option_table, name)
    meta = typing.get_args(model_types.LogMeta)[0]
    assert typing.get_args(meta) == BY_NAME["log_meta"].choices


def test_each_kind_of_option_is_well_formed() -> None:
    for opt in RUN_OPTIONS:
        assert all(flag.startswith("--") for flag in opt.flags), opt.name
        assert len(opt.flags) == (2 if opt.kind == "pair" else min(len(opt.flags), 1)), opt.name
        if opt.kind != "value":
            assert opt.choices is None and opt.bare is None and opt.metavar is None, opt.name
        if opt.bare is not None:
            assert opt.choices and opt.bare in opt.choices, opt.name


def test_the_library_takes_every_name_and_alias_of_the_table(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert prompt_runner.plan(packet, all=True).options.select_all is True
    assert set(ALIASES) == {"all"}
    plan = prompt_runner.plan(packet, **{opt.name: _given(opt.name) for opt in RUN_OPTIONS})
    assert plan.options.thinking == "show" and plan.options.from_id == "01"


def _given(name: str) -> object:
    """A value each option accepts on a one-prompt packet."""
    kind = BY_NAME[name]
    if kind.kind != "value":
        return name in ("no_commit", "dry_run", "verify_first")
    return {
        "profile": None,
        "provider": "simulated",
        "reasoning_effort": "low",  # one some provider accepts (the simulated plan checks)
        "timeout": 1000,
        "max_run_cost_usd": 1.5,
        "runtime_store": "memory",
        "committer": "noop",
        "phase": None,
        "from_id": "01",
        "through_id": "01",
        "ids": (),
    }.get(name, kind.choices[0] if kind.choices else "x")


@pytest.mark.parametrize("call", ["plan", "run", "repair"])
def test_the_library_refuses_a_name_the_table_lacks(tmp_path: Path, call: str) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    args = (packet, "01") if call == "repair" else (packet,)
    with pytest.raises(ArgumentError) as info:
        getattr(prompt_runner, call)(*args, thinkng="show")
    assert isinstance(info.value, UserError)
    assert f"{call}(): unknown argument 'thinkng'; did you mean thinking=...?" in str(info.value)
