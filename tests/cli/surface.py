"""Every (sub)command of a parser as data: its flags, their settings and its ``--help``.

``python -m tests.cli.surface > tests/cli/data/parser_surface.json`` recorded
the surface of the parser before the option table (issue 13) built the run
flags; ``test_parser_surface.py`` compares today's parser with it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from prompt_runner.cli.parser import build_parser

COLUMNS = "100"  # --help wraps at the terminal's width; the record is at this one


def _value(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    return getattr(value, "__name__", repr(value))


def _action(action: argparse.Action, group: str | None) -> dict[str, Any]:
    return {
        "flags": list(action.option_strings),
        "dest": action.dest,
        "action": type(action).__name__,
        "nargs": _value(action.nargs),
        "const": _value(action.const),
        "default": _value(action.default),
        "choices": _value(action.choices) if not isinstance(action.choices, dict) else None,
        "type": _value(action.type),
        "required": action.required,
        "help": action.help,
        "metavar": _value(action.metavar),
        "group": group,
    }


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


def _help(parser: argparse.ArgumentParser) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        parser.print_help()
    return out.getvalue()


def surface(parser: argparse.ArgumentParser | None = None) -> dict[str, Any]:
    """``{"python": "3.11", "commands": {"run": {...}, "profile new": {...}}}``.

    Each command has ``actions`` (every argument in parser order, with the title
    of its help group), ``defaults`` (``set_defaults`` values) and ``help`` (its
    ``--help`` at :data:`COLUMNS` columns).
    """
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = COLUMNS
    try:
        parser = parser or build_parser()
        commands = {}
        for path, command in _commands(parser):
            groups = {id(a): g.title for g in command._action_groups for a in g._group_actions}
            commands[" ".join(path)] = {
                "actions": [_action(a, groups.get(id(a))) for a in command._actions],
                "defaults": {k: _value(v) for k, v in sorted(command._defaults.items())},
                "help": _help(command),
            }
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    return {"python": f"{sys.version_info[0]}.{sys.version_info[1]}", "commands": commands}


if __name__ == "__main__":
    json.dump(surface(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
