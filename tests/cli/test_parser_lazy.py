"""The parser built for one command line (``build_parser(argv)``: only the command
it names) is, for that command, the whole parser: the same arguments, defaults
and ``--help``, the same parse and the same errors."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Iterator
from typing import Any

import pytest

from prompt_runner.cli.exits import UsageError
from prompt_runner.cli.parser import build_parser
from tests.cli.surface import surface

WHOLE = surface()["commands"]


@pytest.fixture(autouse=True)
def _columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # the record's --help width


def _paths() -> list[str]:
    return [name for name in WHOLE if name]


@pytest.mark.parametrize("name", _paths())
def test_the_parser_built_for_a_command_has_that_command_as_the_whole_one_does(
    name: str,
) -> None:
    words = name.split()
    leaf = not any(other.startswith(f"{name} ") for other in WHOLE)
    for argv in ([*words, "--json"], [*words, "PACKET"]) if leaf else ([*words, "--json"],):
        lazy = surface(build_parser(argv))["commands"]
        assert lazy[name] == WHOLE[name], argv
        for depth in range(1, len(words)):  # and the groups on the way, as far as built
            group = " ".join(words[:depth])
            assert lazy[group]["actions"] == WHOLE[group]["actions"], argv
        assert len(lazy) < len(WHOLE), argv  # it did leave the others out


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> Any:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            args, leftovers = parser.parse_known_args(argv)
    except UsageError as exc:
        return ("error", str(exc))
    except SystemExit as exc:  # --help
        return ("exit", exc.code, out.getvalue())
    return ("parsed", vars(args), leftovers, out.getvalue())


LINES = [
    ["status", "P", "--json"],
    ["status", "--json", "P"],
    ["status"],
    ["status", "P", "--bogus"],
    ["status", "P", "Q", "R"],
    ["control", "status", "P", "--json"],
    ["control", "status", "--workspace", "W"],
    ["control", "bogus"],
    ["control"],
    ["control", "--json"],
    ["control", "steer", "P", "text", "--author", "me"],
    ["control", "events", "--from", "nowhere"],
    ["watch", "P", "--once", "--json"],
    ["watch", "P", "--interval", "-3"],
    ["watch", "P", "--for", "1h", "--every", "1m"],
    ["run", "P", "01", "--no-commit", "--provider", "nope"],
    ["list", "P"],
    ["fleet", "worker", "--address", "h:1", "--tls", "--no-tls"],
    ["packet", "lint", "P", "--strict"],
    ["profile", "new", "x", "--retry-jitter"],
    ["bogus", "P"],
    ["stat", "P"],
    ["--version"],
    ["--debug", "status"],
    ["-h"],
    ["status", "--help"],
    ["control", "status", "-h"],
    ["control", "-h"],
]


@pytest.mark.parametrize("argv", LINES, ids=" ".join)
def test_a_command_line_parses_as_with_the_whole_parser(argv: list[str]) -> None:
    assert _outcome(build_parser(argv), argv) == _outcome(build_parser(), argv)


@pytest.mark.parametrize(
    "argv", [["bogus"], ["control", "bogus"], ["control"], ["-h"], [], ["control", "--help"]]
)
def test_no_command_or_an_unknown_one_gets_every_command(argv: list[str]) -> None:
    parser = build_parser(argv)
    whole = surface(parser)["commands"]
    group = [w for w in argv if not w.startswith("-")][:1]
    if group and group[0] == "control":
        assert whole["control"] == WHOLE["control"]  # its help lists every subcommand
    else:
        assert whole == WHOLE


def _children(parser: argparse.ArgumentParser) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices


def test_a_command_line_of_one_command_builds_that_one_only() -> None:
    assert list(_children(build_parser(["status", "P", "--json"]))) == ["status"]
    control = build_parser(["control", "status", "P"])
    assert list(_children(control)) == ["control"]
    (action,) = (a for a in control._actions if isinstance(a, argparse._SubParsersAction))
    assert list(_children(action.choices["control"])) == ["status"]
    assert os.environ["COLUMNS"] == "100"
