"""The commands that load nothing: ``version``, and a command group given no subcommand."""

from __future__ import annotations

import argparse

from .. import __version__
from ..errors import UserError
from ._out import emit_json, say


def cmd_group_help(args: argparse.Namespace) -> int:
    raise UserError(
        f"`{args.command}` needs a subcommand", fix=f"run `prompt-runner {args.command} --help`"
    )


def cmd_version(args: argparse.Namespace) -> int:
    if args.json:
        emit_json({"version": __version__})
    else:
        say(__version__)
    return 0
