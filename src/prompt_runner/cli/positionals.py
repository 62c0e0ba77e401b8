"""Where the words of a command line go that argparse alone would misplace.

Prompt ids may follow flags (``run P --no-commit 03``): arguments argparse
leaves over are appended to the command's ids when it takes ids, and are an
error of that command otherwise (:func:`absorb_leftovers`). The packet
defaults to the current directory, as the reference's does, and a first word
that is no packet belongs to the positional after it (:func:`place_packet`).
"""

from __future__ import annotations

import argparse
import os


def command_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The (sub)parser of the command ``args`` was parsed for (``run``, ``profile new``...)."""
    current = parser
    for name in (getattr(args, "command", None), getattr(args, "subcommand", None)):
        if name is None:
            break
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                current = action.choices.get(name, current)
                break
    return current


def absorb_leftovers(
    parser: argparse.ArgumentParser, args: argparse.Namespace, leftovers: list[str]
) -> None:
    """Give leftover positional arguments to the command's unfilled positionals.

    argparse fills positionals only from the run of arguments before the first
    flag, so ``run P --no-commit 03`` and ``repair P --json 01`` leave the id
    over. Leftovers go, in order, to optional positionals still unset
    (``nargs="?"``), then onto a list positional (``ids``, ``nargs="*"``).

    Raises:
        UsageError: exit 2, one line naming the leftover flags, or the
            arguments no positional could take, and the command's ``--help``.
    """
    command = command_parser(parser, args)
    # After a "--" separator everything is positional (argparse leaves the "--" in).
    cut = leftovers.index("--") if "--" in leftovers else len(leftovers)
    unknown = [a for a in leftovers[:cut] if a.startswith("-")]
    if unknown:
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    pending = leftovers[:cut] + leftovers[cut + 1 :]
    for action in command._actions:
        if action.option_strings or not pending or not hasattr(args, action.dest):
            continue
        value = getattr(args, action.dest)
        if action.nargs == "?" and value is None:
            setattr(args, action.dest, pending.pop(0))
        elif action.nargs in ("*", "+") and isinstance(value, list):
            value.extend(pending)
            pending = []
    if pending:
        command.error(f"unrecognized arguments: {' '.join(pending)}")


_FOLLOWING = {
    ("run", None): "ids",
    ("plan", None): "ids",
    ("verify", None): "ids",
    ("repair", None): "id",
    ("control", "steer"): "text",
    ("control", "contract"): "id",
    ("control", "amend"): "id",
    ("control", "relax"): "id",
}
"""The positional after PACKET, which a first word that is no packet belongs to."""

_ONLY_INSIDE = {("template", "list")}
"""Commands that default to the current directory only when it is a packet
(elsewhere ``template list`` lists the home and built-in templates)."""


def _is_packet_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "prompt_runner_packet.md"))


def place_packet(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Decide the packet of a command that takes one, as the reference does.

    Its guides/cli.md: "If you omit the directory, Prompt Runner uses the
    current working directory." So ``PACKET`` (or ``--packet DIR`` where the
    reference has it) defaults to the current directory, and a first word that
    is no packet belongs to the positional after it: ``run 01 02`` inside a
    packet runs its 01 and 02, ``control steer "TEXT"`` steers the run here,
    ``repair 02`` and ``control amend 03 ...`` act on its prompt. A first word
    is kept as the packet when it exists, names a path (``/``), or when the
    current directory is no packet (then the error names that word).

    Raises:
        UsageError: exit 2 when ``--packet`` and a PACKET argument are both given
            and no positional can take the word.
    """
    if not hasattr(args, "packet"):
        return
    key: tuple[str, str | None] = (args.command, getattr(args, "subcommand", None))
    following = _FOLLOWING.get(key)
    given: str | None = args.packet
    flag: str | None = getattr(args, "packet_flag", None)
    if flag is not None:
        if given is not None and not (following and _shift(args, following, given)):
            command_parser(parser, args).error(_one_too_many(key, following, given, args, flag))
        args.packet = flag
        return
    here = os.getcwd()
    if given is None:
        if key not in _ONLY_INSIDE or _is_packet_dir(here):
            args.packet = here
        return
    if following is None or os.path.exists(given) or "/" in given or os.sep in given:
        return
    value = getattr(args, following, None)
    # a single positional (an id, a steer's text) takes the word wherever we are;
    # a list of ids only inside a packet (outside one the error names the word)
    if (value is None or _is_packet_dir(here)) and _shift(args, following, given):
        args.packet = here


def _one_too_many(
    key: tuple[str, str | None],
    following: str | None,
    given: str,
    args: argparse.Namespace,
    flag: str,
) -> str:
    """The error for a word ``--packet`` left over: with ``--packet`` every word
    is an id (or the text), so a second one is one too many, not a packet."""
    command = " ".join(part for part in key if part)
    taken = getattr(args, following, None) if following else None
    if following == "id":
        return (
            f"{command} takes one prompt id, and with --packet {flag!r} every word is an id "
            f"({given!r} and {taken!r}); give one id"
        )
    if following == "text":
        return (
            f"{command} takes one text, and with --packet {flag!r} every word is the text "
            f"({given!r} and {taken!r}); quote the whole text"
        )
    return f"the packet is given twice ({given!r} and --packet {flag!r}); give it once"


def give_following(args: argparse.Namespace, word: str) -> bool:
    """Give ``word`` (parsed as the packet) to the positional after PACKET, when
    the command has one and it is free (``--workspace`` names the packet)."""
    following = _FOLLOWING.get((args.command, getattr(args, "subcommand", None)))
    return following is not None and _shift(args, following, word)


def _shift(args: argparse.Namespace, dest: str, word: str) -> bool:
    """Give ``word`` to positional ``dest`` (first of a list); False when it is taken."""
    value = getattr(args, dest, None)
    if isinstance(value, list):
        value.insert(0, word)
        return True
    if value is None:
        setattr(args, dest, word)
        return True
    return False
