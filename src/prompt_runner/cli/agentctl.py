"""``agent-control ...``: directives and progress from inside an agent session (SPEC 7).

Hot path: the agent runs these commands inside its session, so this module
imports only :mod:`prompt_runner.agent.client` (standard library
only). A success prints its JSON receipt on stdout and exits 0; a refusal
prints one ``error:`` line on stderr and exits 1 (refused: a directive already
exists, the invocation ended), 2 (bad input: missing environment, blank
``--cursor``/``--summary``/``--reason``) or 3 (the file could not be written).

:func:`main` is a complete entry point with its own small parser, so the
top-level CLI can dispatch ``agent-control`` before building its full parser
(building every subcommand's parser costs more than the command itself).
"""

from __future__ import annotations

import getopt
import json
import os
import sys

from ..agent import client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

USAGE = """usage: prompt-runner agent-control SUBCOMMAND [options]

subcommands:
  progress --cursor C [--unit U] --summary S   record the agent's cursor (repeatable)
  continue [--reason R]                        complete this prompt and advance
  repeat [--reason R]                          record this iteration, start a fresh session
  finish --reason R                            the packet is complete (checked by the runner)
  blocked --reason R                           stop the run with this reason
"""


class Args:
    """Parsed ``agent-control`` arguments (what the handlers read)."""

    def __init__(self, subcommand: str, values: dict[str, str]) -> None:
        self.subcommand = subcommand
        self.action = subcommand
        self.cursor = values.get("cursor")
        self.unit = values.get("unit")
        self.summary = values.get("summary")
        self.reason = values.get("reason")


def _emit(receipt: dict[str, object]) -> int:
    sys.stdout.write(json.dumps(receipt, indent=2, ensure_ascii=False) + "\n")
    return 0


def _refused(exc: client.AgentControlError) -> int:
    sys.stderr.write(f"error: {exc.message}\n")
    return exc.exit_code


def _usage_error(message: str) -> int:
    sys.stderr.write(USAGE.splitlines()[0] + "\n")
    sys.stderr.write(f"error: {message}\n")
    return 2


def cmd_progress(args: Args) -> int:
    """``agent-control progress --cursor C [--unit U] --summary S``."""
    try:
        receipt = client.record_progress(
            os.environ, cursor=args.cursor or "", summary=args.summary or "", unit=args.unit
        )
    except client.AgentControlError as exc:
        return _refused(exc)
    return _emit(receipt)


def cmd_directive(args: Args) -> int:
    """``agent-control continue|repeat|finish|blocked [--reason R]``."""
    try:
        receipt = client.issue_directive(os.environ, args.action, args.reason)
    except client.AgentControlError as exc:
        return _refused(exc)
    return _emit(receipt)


def parse(argv: Sequence[str]) -> Args | int:
    """Parse ``argv`` with the standard library's ``getopt`` (argparse costs more to
    import than the whole command takes). Returns :class:`Args`, or an exit code
    after printing help (0) or a usage error (2)."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2  # help asked for: 0; no subcommand at all: a usage error
    sub = argv[0]
    if sub == "progress":
        long_opts = ["cursor=", "unit=", "summary=", "help"]
    elif sub in client.DIRECTIVES:
        long_opts = ["reason=", "help"]
    else:
        return _usage_error(
            f"unknown subcommand {sub!r}; use progress, {', '.join(client.DIRECTIVES)}"
        )
    try:
        opts, rest = getopt.getopt(list(argv[1:]), "h", long_opts)
    except getopt.GetoptError as exc:
        return _usage_error(f"{sub}: {exc.msg}")
    if rest:
        return _usage_error(f"{sub}: unexpected argument {rest[0]!r}")
    values: dict[str, str] = {}
    for flag, value in opts:
        if flag in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        values[flag.lstrip("-")] = value
    if sub == "progress":
        missing = [f"--{k}" for k in ("cursor", "summary") if k not in values]
        if missing:
            return _usage_error(
                f"progress: the following arguments are required: {', '.join(missing)}"
            )
    return Args(sub, values)


def main(argv: Sequence[str]) -> int:
    """``prompt-runner agent-control ARGV...``; returns the exit code."""
    parsed = parse(argv)
    if isinstance(parsed, int):
        return parsed
    if parsed.subcommand == "progress":
        return cmd_progress(parsed)
    return cmd_directive(parsed)
