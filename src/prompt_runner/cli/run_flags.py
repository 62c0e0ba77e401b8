"""The ``run``/``plan``/``repair`` flags, built from the option table.

:data:`prompt_runner.option_table.RUN_OPTIONS` declares each run option once
(name, flags, choices, help); :func:`add_run_flags` turns it into argparse
arguments and :func:`given_options` reads them back as the keyword arguments
of :func:`prompt_runner.run`, :func:`~prompt_runner.plan` and
:func:`~prompt_runner.repair`.
"""

from __future__ import annotations

from ..option_table import FLAGGED, Opt

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

RUN_FLAGS_HELP = "override flags (same for run and plan)"


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Add every flagged run option to ``parser``, in the table's order, as one group."""
    group = parser.add_argument_group(RUN_FLAGS_HELP)
    for opt in FLAGGED:
        _add(group, opt)


def _add(group: argparse._ArgumentGroup, opt: Opt) -> None:
    if opt.kind == "switch":
        group.add_argument(*opt.flags, dest=opt.name, action="store_true", help=opt.help)
    elif opt.kind == "pair":
        yes, no = opt.flags
        group.add_argument(yes, dest=opt.name, action="store_true", default=None, help=opt.help)
        group.add_argument(no, dest=opt.name, action="store_false")
    elif opt.bare is not None:
        group.add_argument(
            *opt.flags,
            dest=opt.name,
            nargs="?",
            const=opt.bare,
            choices=opt.choices,
            metavar=opt.metavar,
            help=opt.help,
        )
    else:
        group.add_argument(
            *opt.flags, dest=opt.name, choices=opt.choices, metavar=opt.metavar, help=opt.help
        )


def given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options given on the command line, as library keyword arguments.

    A flag left out is left out (the plan's precedence decides); a ``pair``
    given as its ``--no-`` flag is ``False``; the command's prompt ids are
    ``ids`` when there are any.
    """
    options: dict[str, Any] = {}
    for opt in FLAGGED:
        value = getattr(args, opt.name, None)
        if value is None or (value is False and opt.kind != "pair"):
            continue
        options[opt.name] = value
    ids = tuple(getattr(args, "ids", ()) or ())
    if ids:
        options["ids"] = ids
    return options
