"""The library's keyword arguments, checked as strictly as the CLI checks its flags.

``run``, ``plan`` and ``repair`` take the fields of :class:`RunOptions` as
keyword arguments (``all`` is accepted for ``select_all``, the CLI's
``--all``). A wrong name or a value of the wrong shape is an
:class:`~prompt_runner.errors.ArgumentError` (a ``UserError`` that is also a
``TypeError``) whose sentence names the argument and the fix, never a
``TypeError`` from deep inside or a value silently misread (``ids="01"`` is
one id, not ``"0"`` and ``"1"``).
"""

from __future__ import annotations

import difflib
import functools
import os
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from .errors import ArgumentError
from .option_table import ALIASES
from .packet.loader import Packet, load_packet
from .planning import RunOptions

_ID_FIELDS = frozenset({"phase", "from_id", "through_id"})  # a number is taken as its text
_PATH_FIELDS = frozenset({"state_dir"})  # text, or a path (os.PathLike) taken as its text


@functools.cache
def _hints() -> dict[str, tuple[Any, ...]]:
    hints = typing.get_type_hints(RunOptions)
    return {f.name: _kinds(hints[f.name]) for f in fields(RunOptions)}


def _kinds(hint: Any) -> tuple[Any, ...]:
    """The types a field takes; one of a ``Literal``'s words is text here (which
    word is checked where the plan resolves it, as for the CLI's flags)."""
    kinds = typing.get_args(hint) or (hint,)
    return tuple(str if typing.get_origin(k) is typing.Literal else k for k in kinds)


def run_options(
    caller: str, options: Mapping[str, Any], *, named: Sequence[str] = ()
) -> RunOptions:
    """Build :class:`RunOptions` from a library call's keyword arguments.

    Args:
        caller: the public function's name (``run``, ``plan``...), for messages.
        options: the keyword arguments, by their Python names.
        named: the caller's own keyword arguments (``stream``, ``on_event``...):
            a misspelt one is suggested too.

    Raises:
        ArgumentError: an unknown argument, ``all`` together with
            ``select_all``, or a value of the wrong type.
    """
    hints = _hints()
    values: dict[str, Any] = {}
    given_as: dict[str, str] = {}  # option name -> the spelling given (``all`` or ``select_all``)
    for given, value in options.items():
        name = ALIASES.get(given, given)
        if name not in hints:
            close = difflib.get_close_matches(given, [*named, *hints, *ALIASES], n=1)
            hint = f"did you mean {close[0]}=...? " if close else ""
            own = f"{', '.join(named)} and " if named else ""
            raise ArgumentError(
                f"unknown argument {given!r}",
                key=f"{caller}()",
                fix=f"{hint}the arguments are {own}the fields of RunOptions: {', '.join(hints)}",
            )
        if name in values:
            raise ArgumentError(
                f"{given_as[name]} and {given} are the same option, given twice",
                key=f"{caller}()",
                fix=f"pass only {name}=...",
            )
        values[name] = _checked(caller, given, name, value, hints[name])
        given_as[name] = given
    return RunOptions(**values)


def packet_arg(caller: str, packet: Any) -> Packet:
    """``packet`` loaded: a packet directory (or its manifest file), or a loaded Packet as is.

    Raises:
        ArgumentError: neither a path nor a Packet.
        UserError: the packet does not load.
    """
    if isinstance(packet, Packet):
        return packet
    if not isinstance(packet, str | os.PathLike):
        raise ArgumentError(
            f"must be a packet directory (a path) or a loaded Packet, not {packet!r}",
            key=f"{caller}(packet=...)",
            fix="pass e.g. 'path/to/packet'",
        )
    return load_packet(Path(packet))


def prompt_ids(caller: str, value: Any, *, name: str = "ids") -> tuple[str, ...]:
    """``"01"``, ``1``, or a list/tuple of them, as a tuple of id strings.

    Raises:
        ArgumentError: anything else (a number with a fraction, a bool, a mapping...).
    """
    items = [value] if isinstance(value, str | int) else value
    if isinstance(items, list | tuple | set | frozenset):
        out = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, str | int):
                break
            out.append(str(item))
        else:
            return tuple(out)
    raise ArgumentError(
        f"must be a prompt id or a list of prompt ids, not {value!r}",
        key=f"{caller}({name}=...)",
        fix=f"pass e.g. {name}='01' or {name}=['01', '03']",
    )


def prompt_id_arg(caller: str, value: Any) -> str:
    """One prompt id (``"01"`` or ``1``) as a string.

    Raises:
        ArgumentError: anything else.
    """
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise ArgumentError(
        f"must be one prompt id, not {value!r}",
        key=f"{caller}(prompt_id=...)",
        fix="pass e.g. '02'",
    )


def _checked(caller: str, given: str, name: str, value: Any, allowed: tuple[Any, ...]) -> Any:
    if name == "ids":
        return prompt_ids(caller, value, name=given)
    if value is None and types.NoneType in allowed:
        return None
    if bool in allowed:
        if isinstance(value, bool):
            return value
        want = "True or False"
    elif isinstance(value, bool):
        want = _describe(name, allowed)
    elif name in _ID_FIELDS and isinstance(value, int | str):
        return str(value)
    elif name in _PATH_FIELDS and isinstance(value, os.PathLike):
        return os.fspath(value)  # a directory as a Path, as every other call takes one
    elif isinstance(value, _types(allowed)):
        return value
    else:
        want = _describe(name, allowed)
    raise ArgumentError(
        f"must be {want}, not {value!r}",
        key=f"{caller}({given}=...)",
        fix="see RunOptions for what each argument takes",
    )


def _types(allowed: tuple[Any, ...]) -> tuple[type, ...]:
    kinds = [t for t in allowed if isinstance(t, type) and t is not types.NoneType]
    return (*kinds, int) if float in kinds else tuple(kinds)  # a whole number of dollars


def callables(caller: str, callbacks: Mapping[str, Any]) -> None:
    """Refuse a callback argument that is neither ``None`` nor a plain callable.

    The run calls each callback on its own thread and never awaits what it
    returns, so an ``async def`` function (or an object whose ``__call__`` is
    one) would only make a coroutine that never runs: it is refused too.

    Raises:
        ArgumentError: naming the argument.
    """
    for name, value in callbacks.items():
        if value is not None and not callable(value):
            raise ArgumentError(
                f"must be a function or None, not {value!r}",
                key=f"{caller}({name}=...)",
                fix="pass a callable (prompt_runner.runner.context.Callbacks lists its arguments)",
            )
        if value is not None and _is_async(value):
            raise ArgumentError(
                "is an async function: the run calls its callbacks on its own thread "
                "and never awaits them, so its body would never run",
                key=f"{caller}({name}=...)",
                fix="pass a plain (def) function; to reach an event loop from it, use "
                "asyncio.run_coroutine_threadsafe(coro, loop) or loop.call_soon_threadsafe",
            )


def _is_async(value: Any) -> bool:
    """Whether calling ``value`` makes a coroutine (an ``async def`` function, a
    partial of one, or an object whose ``__call__`` is one)."""
    import inspect  # lazy: only a call that passes a callback pays for it

    target = value
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.iscoroutinefunction(target):
        return True
    call = getattr(type(target), "__call__", None)  # noqa: B004 - the method, not callable()
    return not inspect.isroutine(target) and inspect.iscoroutinefunction(call)


def _describe(name: str, allowed: tuple[Any, ...]) -> str:
    if name in _ID_FIELDS:
        return "a prompt id or phase (text or a number)"
    words = {str: "text", int: "an integer", float: "a number"}
    kinds = [words[t] for t in allowed if t in words]
    return " or ".join(kinds) or "a value"
