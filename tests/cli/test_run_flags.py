"""The run flags read back as the library's keyword arguments, under the table's names."""

from __future__ import annotations

import pytest

from prompt_runner.cli.parser import build_parser
from prompt_runner.cli.run_flags import given_options
from prompt_runner.option_table import FLAGGED, Opt


def _argv(opt: Opt) -> tuple[list[str], object]:
    """The flag on a command line, and the value the library gets for it."""
    if opt.kind == "switch":
        return [opt.flags[0]], True
    if opt.kind == "pair":
        return [opt.flags[1]], False  # the --no- flag is an explicit False
    value = opt.choices[-1] if opt.choices else "7"
    return [opt.flags[0], value], value


@pytest.mark.parametrize("command", ["run", "plan", "repair"])
@pytest.mark.parametrize("opt", FLAGGED, ids=lambda opt: opt.name)
def test_each_flag_is_the_keyword_of_its_name(command: str, opt: Opt) -> None:
    flag, value = _argv(opt)
    args = build_parser().parse_args([command, "P", *flag])
    assert given_options(args) == {opt.name: value}


def test_flags_left_out_are_left_out_and_ids_are_ids() -> None:
    args = build_parser().parse_args(["run", "P", "01", "02"])
    assert given_options(args) == {"ids": ("01", "02")}
    args = build_parser().parse_args(["run", "P", "--verify-first", "--log-meta"])
    assert given_options(args) == {"verify_first": True, "log_meta": "full"}
