"""``agent-control ...``: directives and progress from inside an agent session (SPEC 7).

Hot path: the agent runs these commands inside its session, so this module
imports only :mod:`prompt_runner.runner.agent_control_client` (standard library
only). A success prints its JSON receipt on stdout and exits 0; a refusal
prints one ``error:`` line on stderr and exits 1 (refused: a directive already
exists, the invocation ended), 2 (bad input: missing environment, blank
``--cursor``/``--summary``/``--reason``) or 3 (the file could not be written).

:func:`main` is a complete entry point with its own small parser, so the
top-level CLI can dispatch ``agent-control`` before building its full parser
(building every subcommand's parser costs more than the command itself).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from ..runner import agent_control_client as client


def _emit(receipt: dict[str, object]) -> int:
    sys.stdout.write(json.dumps(receipt, indent=2, ensure_ascii=False) + "\n")
    return 0


def _refused(exc: client.AgentControlError) -> int:
    sys.stderr.write(f"error: {exc.message}\n")
    return exc.exit_code


def cmd_progress(args: argparse.Namespace) -> int:
    """``agent-control progress --cursor C [--unit U] --summary S``."""
    try:
        receipt = client.record_progress(
            os.environ, cursor=args.cursor, summary=args.summary, unit=args.unit
        )
    except client.AgentControlError as exc:
        return _refused(exc)
    return _emit(receipt)


def cmd_directive(args: argparse.Namespace) -> int:
    """``agent-control continue|repeat|finish|blocked [--reason R]``."""
    try:
        receipt = client.issue_directive(os.environ, args.action, args.reason)
    except client.AgentControlError as exc:
        return _refused(exc)
    return _emit(receipt)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def build_parser(prog: str = "prompt-runner agent-control") -> argparse.ArgumentParser:
    """The ``agent-control`` subcommands (the same surface ``cli/main.py`` declares)."""
    parser = _Parser(prog=prog, description="directives from inside an agent session")
    sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = sub.add_parser("progress", help="record the agent's cursor (repeatable)")
    p.set_defaults(func=cmd_progress)
    p.add_argument("--cursor", required=True)
    p.add_argument("--unit")
    p.add_argument("--summary", required=True)
    for name in client.DIRECTIVES:
        p = sub.add_parser(name, help=f"directive: {name}")
        p.set_defaults(func=cmd_directive, action=name)
        p.add_argument("--reason")
    return parser


def main(argv: Sequence[str]) -> int:
    """``prompt-runner agent-control ARGV...``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv))
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = func(args)
    return code
