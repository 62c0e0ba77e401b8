"""The pieces every command family's parser is built from.

:class:`Parser` raises :class:`~.exits.UsageError` instead of exiting; :class:`Commands`
adds a family's subcommands, each naming its handler; :func:`span` and :func:`count`
are the argparse types of a span of time and a number of things; :func:`add_packet`
and :func:`add_bounded_watch_flags` are the flags several commands share.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import UserError
from .exits import UsageError

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`status`)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

PACKET_HELP = "the packet directory (default: the current directory)"


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, the width argparse's help is wrapped
    to, without importing ``shutil`` (with ``zlib``, ``bz2`` and ``lzma``: ~2 ms of
    every command's start-up, since each ``add_argument`` builds a formatter):
    ``$COLUMNS`` when a positive number, else the terminal's width on the
    original stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, its width found by :func:`terminal_columns`
    (what argparse's own would find through ``shutil``)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = terminal_columns() - 2  # as argparse.HelpFormatter does
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are raised, not exited on (help formatted
    by :class:`HelpFormatter` unless another formatter is given)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, except that a flag this command does not know is named
        before a missing positional: ``packet new -x`` says ``-x`` is not a flag
        of ``packet new``, not that the name is missing (argparse checks the
        required arguments first, and ``-x`` is why the name looks absent).

        Raises:
            UsageError: the arguments do not parse.
        """
        try:
            return super().parse_known_args(args, namespace)
        except UsageError as exc:
            if "the following arguments are required" not in str(exc):
                raise
            unknown = self._unknown_flag(sys.argv[1:] if args is None else list(args))
            if unknown is None:
                raise
            self.error(f"unrecognized arguments: {unknown}")

    def _unknown_flag(self, args: list[str]) -> str | None:
        """The first of ``args`` that is written as a flag and matches none of this
        parser's (nor a unique abbreviation of one, as argparse allows), else ``None``."""
        known = self._option_string_actions
        for arg in args:
            if arg == "--":
                return None  # what follows is positional
            if (
                not arg.startswith("-")
                or arg == "-"
                or " " in arg  # argparse takes it as a positional
                or self._negative_number_matcher.match(arg)
            ):
                continue
            name = arg.split("=", 1)[0]
            if name in known:
                continue
            if not arg.startswith("--") and len(arg) > 2 and arg[:2] in known:
                continue  # -xVALUE or grouped short flags
            if self.allow_abbrev and any(option.startswith(name) for option in known):
                continue
            return arg
        return None

    def error(self, message: str) -> NoReturn:
        # One sentence naming the problem and where the usage is.
        raise UsageError(f"{message}; see `{self.prog} --help`")


def span(*, zero: bool = False) -> Callable[[str], float]:
    """An argparse ``type`` for a span of time: ``90s``, ``10m``, ``1h30m`` or bare
    seconds (``durations.parse_duration``), in seconds; negative, non-finite, over
    ``durations.MOST_S`` (30 days) and (unless ``zero``) zero spans are refused
    before the command does anything."""

    def convert(text: str) -> float:
        from ..durations import parse_duration  # lazy: only a command given a span parses one

        try:
            return parse_duration(text, key="", positive=not zero)
        except UserError as exc:
            raise argparse.ArgumentTypeError(f"{exc.reason}; {exc.fix}") from None

    convert.__name__ = "duration"
    return convert


def count(text: str) -> int:
    """An argparse ``type`` for a number of things: a whole number, 1 or more."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return int(text)


class Commands:
    """The subcommands of one parser: ``add`` a command, or a ``group`` of them.

    ``only`` (the words of a command line, e.g. ``("control", "status")``) builds
    just the command they name: every other :meth:`add` returns :data:`SKIPPED`,
    which takes the builder's calls and builds nothing. The parser that results
    parses that command line as the whole one does (``build_parser(argv)``);
    ``missed`` says the words named no command here (then build the whole one).
    """

    def __init__(
        self, parent: argparse.ArgumentParser, *, top: bool = False, only: tuple[str, ...] = ()
    ) -> None:
        dest, metavar = ("command", "COMMAND") if top else ("subcommand", "SUBCOMMAND")
        self._sub = parent.add_subparsers(dest=dest, metavar=metavar, parser_class=Parser)
        self._top = top  # a top-level command's help is also its --help description
        self._only = only
        self._built: list[Commands | None] = []  # what was built (a group: its Commands)

    def add(self, name: str, handler: str, help_text: str) -> argparse.ArgumentParser:
        if self._only and name != self._only[0]:
            return SKIPPED
        if self._top:
            parser = self._sub.add_parser(name, help=help_text, description=help_text)
        else:
            parser = self._sub.add_parser(name, help=help_text)
        parser.set_defaults(handler=handler)
        self._built.append(None)
        return parser

    def group(self, name: str, help_text: str) -> Commands:
        parser = self.add(name, "basic:cmd_group_help", help_text)
        if parser is SKIPPED:
            return _SKIPPED_GROUP
        group = Commands(parser, only=self._only[1:])
        self._built[-1] = group
        return group

    @property
    def missed(self) -> bool:
        """Built with ``only`` and its words named no command (or no subcommand of a
        group): the parser lacks what the command line asks for."""
        if not self._only:
            return False
        return not self._built or any(g is not None and g.missed for g in self._built)


class _Skipped(Parser):
    """A command left out of a parser built for another one (:class:`Commands`,
    ``only``): every builder call is taken and dropped. Never parses (its
    ``__init__`` never ran, so anything else it is asked fails loudly)."""

    def __init__(self) -> None:  # deliberately not ArgumentParser's: nothing to build
        pass

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        return None

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def add_mutually_exclusive_group(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def set_defaults(self, **kwargs: Any) -> None:
        return None


SKIPPED: argparse.ArgumentParser = _Skipped()
"""What :meth:`Commands.add` returns for a command left out of the parser."""


class _SkippedGroup(Commands):
    """The :class:`Commands` of a group left out of the parser: adds nothing."""

    def __init__(self) -> None:  # no subparsers to make
        self._only = ()
        self._built = []

    def add(self, name: str, handler: str, help_text: str) -> argparse.ArgumentParser:
        return SKIPPED

    def group(self, name: str, help_text: str) -> Commands:
        return self


_SKIPPED_GROUP = _SkippedGroup()


def add_packet(p: argparse.ArgumentParser, *, flag: bool = False, workspace: bool = False) -> None:
    """The optional ``PACKET`` positional (the current directory when left out,
    see ``cli/positionals.py``); ``flag`` adds ``--packet DIR`` as the reference has;
    ``workspace`` adds ``--workspace W`` and ``--state-dir DIR`` (``cli/state_args.py``)."""
    p.add_argument("packet", nargs="?", metavar="PACKET", help=PACKET_HELP)
    if flag:
        p.add_argument(
            "--packet",
            dest="packet_flag",
            metavar="DIR",
            help="the packet (then every word is an id or the text)",
        )
    if workspace:
        p.add_argument(
            "--workspace",
            metavar="W",
            help="the workspace's packet and state (a manifest, a registered id, or found here)",
        )
        p.add_argument(
            "--state-dir",
            metavar="DIR",
            help="the run's state is in DIR, not in <packet>/.prompt_runner "
            "(default: $PROMPT_RUNNER_STATE_DIR)",
        )


def add_bounded_watch_flags(p: argparse.ArgumentParser) -> None:
    """``watch --for D --every D [--require-running] [--require-progress
    --progress-timeout D]`` (``cli/watching.py``; durations as ``90s``, ``10m``, ``4h``)."""
    g = p.add_argument_group("bounded watch (acceptance evidence)")
    g.add_argument(
        "--for", dest="for_", metavar="DURATION", help="watch this long, then pass (e.g. 4h)"
    )
    g.add_argument("--every", metavar="DURATION", help="between samples (default 10m)")
    g.add_argument(
        "--require-running", action="store_true", help="a run that is not running fails it"
    )
    g.add_argument("--require-progress", action="store_true", help="a silent running run fails it")
    g.add_argument(
        "--progress-timeout", metavar="DURATION", help="silent for longer than this (default 60m)"
    )
