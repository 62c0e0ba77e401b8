"""Every call :mod:`prompt_runner` exports checks its arguments before it runs.

:func:`public` wraps a library function so that a wrong call is an
:class:`~prompt_runner.errors.ArgumentError` (a ``UserError``, exit 2, that is
also a ``TypeError``) whose sentence names the argument and the fix, never
Python's bare ``TypeError`` nor a value silently misread:

- a keyword the function does not take (``did you mean write=...?``), a
  required argument left out, too many positional arguments;
- a value of the wrong type for an argument annotated ``bool``, ``int`` or
  ``float`` (each optionally ``| None``): a bool must be ``True`` or
  ``False`` (``write="yes"`` is refused, not taken as true), and a bool is
  never a number.

What the other annotations take (paths, ids, mappings) each function checks
itself, as do ``run``/``plan``/``repair`` their ``**options``
(:mod:`prompt_runner.api_options`). Standard library only, and only
``functools`` and ``collections`` at import, never ``typing``: the CLI's
``status`` and ``control`` paths import modules this decorates
(``tests/test_cli_startup.py``).

:class:`NamedTuple` is the base of the results those paths return: the same
tuple class as ``typing.NamedTuple`` would make of the class body, without
importing ``typing`` (~4 ms of a command's start-up).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Mapping

from .errors import ArgumentError

TYPE_CHECKING = False  # typing costs import time on the CLI hot paths (`status`, `control`)
if TYPE_CHECKING:
    from typing import Any, ParamSpec, TypeVar, overload

    P = ParamSpec("P")
    R = TypeVar("R")

_SCALARS: dict[str, type] = {"bool": bool, "int": int, "float": float}


class _NamedTupleMeta(type):
    """Makes a class body into a :func:`collections.namedtuple`, as ``typing.NamedTuple`` does."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]
    ) -> _NamedTupleMeta:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, namespace)
        annotations: dict[str, Any] = namespace.get("__annotations__", {})
        fields = list(annotations)
        defaults = [namespace[field] for field in fields if field in namespace]
        if any(field not in namespace for field in fields[len(fields) - len(defaults) :]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        factory: Any = collections.namedtuple  # a call mypy reads as a literal type
        made = factory(name, fields, defaults=defaults, module=namespace["__module__"])
        made.__annotations__ = dict(annotations)
        made.__doc__ = namespace.get("__doc__")
        made.__qualname__ = namespace.get("__qualname__", name)
        for key, value in namespace.items():
            if key in fields or key in _KEPT:
                continue
            if key in _PROTECTED:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            setattr(made, key, value)
        result: _NamedTupleMeta = made
        return result


_KEPT = frozenset({"__annotations__", "__doc__", "__module__", "__qualname__"})
_PROTECTED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields"})
_PROTECTED |= {"_field_defaults", "_make", "_replace", "_asdict", "_source"}


class NamedTuple(metaclass=_NamedTupleMeta):
    """Subclass with annotated fields (and optional trailing defaults), as of
    ``typing.NamedTuple``: the subclass *is* a ``collections.namedtuple`` with
    the body's methods and docstring. Modules import it only at run time and
    ``typing.NamedTuple`` under ``TYPE_CHECKING``, so type checkers see the same
    class."""


if TYPE_CHECKING:

    @overload
    def public(func: Callable[P, R]) -> Callable[P, R]: ...

    @overload
    def public(*, instead: Mapping[str, str]) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def public(func: Callable[P, R] | None = None, *, instead: Mapping[str, str] | None = None) -> Any:
    """Decorate a public library function (``@public`` or ``@public(instead=...)``).

    Args:
        func: the function; its signature, docstring and name are kept.
        instead: keyword a caller may mistake for a missing argument -> what to
            say (``{"ids": "repair re-runs one prompt: pass its id as prompt_id"}``).

    Returns:
        The wrapped function: its arguments checked as the module doc says,
        then ``func`` called with them unchanged.
    """
    if func is None:
        return functools.partial(public, instead=instead)
    return _wrap(func, dict(instead or {}))


def _wrap(func: Callable[P, R], instead: dict[str, str]) -> Callable[P, R]:
    kinds = _scalar_kinds(func)
    code = getattr(func, "__code__", None)
    positional = code.co_varnames[: code.co_argcount] if code is not None else ()

    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        for name, value in (*zip(positional, args, strict=False), *kwargs.items()):
            allowed = kinds.get(name)
            if allowed is not None:
                _check(func.__name__, name, value, allowed)
        try:
            return func(*args, **kwargs)
        except TypeError as exc:
            tb = exc.__traceback__
            # Raised by the call itself (binding the arguments), not from inside func.
            if isinstance(exc, ArgumentError) or tb is None or tb.tb_next is not None:
                raise
            problem = _binding_problem(func, args, kwargs, instead)
            if problem is None:
                raise
            raise problem from None

    return call


def keyword_names(func: Callable[..., Any]) -> tuple[str, ...]:
    """The names ``func`` (or the function a :func:`public` wraps) takes by
    keyword, in order; ``**options`` not included."""
    code = getattr(_innermost(func), "__code__", None)
    if code is None:
        return ()
    names: tuple[str, ...] = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return names


def _innermost(func: Any) -> Any:
    """The innermost function under ``functools.wraps`` layers."""
    while hasattr(func, "__wrapped__"):
        func = func.__wrapped__
    return func


def _scalar_kinds(func: Callable[..., Any]) -> dict[str, tuple[type | None, ...]]:
    """Argument name -> the types it takes, for the arguments annotated only
    with ``bool``, ``int``, ``float`` and ``None`` (``None`` in the tuple: it may be None)."""
    out: dict[str, tuple[type | None, ...]] = {}
    for name, annotation in getattr(func, "__annotations__", {}).items():
        if name == "return":
            continue
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        parts = [part.strip() for part in text.split("|")]
        if parts and all(part in _SCALARS or part == "None" for part in parts):
            kinds = tuple(_SCALARS.get(part) for part in parts)
            if any(kinds):
                out[name] = kinds
    return out


def _check(caller: str, name: str, value: Any, allowed: tuple[type | None, ...]) -> None:
    if value is None and None in allowed:
        return
    numbers = (int, float) if float in allowed else (int,) if int in allowed else ()
    if isinstance(value, bool):
        if bool in allowed:
            return
    elif isinstance(value, numbers):
        return
    wants = [
        "True or False" if bool in allowed else "",
        ("a number" if float in allowed else "an integer") if numbers else "",
        "None" if None in allowed else "",
    ]
    raise ArgumentError(
        f"must be {' or '.join(w for w in wants if w)}, not {value!r}",
        key=f"{caller}({name}=...)",
        fix=f"see help(prompt_runner.{caller}) for what each argument takes",
    )


def _binding_problem(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    instead: Mapping[str, str],
) -> ArgumentError | None:
    """Why ``func(*args, **kwargs)`` cannot bind, as an ArgumentError (``None``:
    it binds, so the TypeError was something else)."""
    import difflib  # only a wrong call gets here
    import inspect

    caller = func.__name__
    signature = inspect.signature(func)
    params = signature.parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    keywords = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    shown = ", ".join(keywords) or "none"
    for given in kwargs:
        if given not in keywords and not takes_any:
            close = difflib.get_close_matches(given, keywords, n=1)
            hint = f"did you mean {close[0]}=...? " if close else ""
            return ArgumentError(
                f"unknown argument {given!r}",
                key=f"{caller}()",
                fix=f"{hint}the arguments of {caller} are: {shown}"
                if keywords
                else f"{caller} takes no arguments",
            )
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError as exc:
        most = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params.values())
        if len(args) <= most:  # an argument given twice, by position and by keyword
            return ArgumentError(str(exc), key=f"{caller}()", fix="give each argument once")
        return ArgumentError(
            f"takes at most {most} positional argument(s), got {len(args)}",
            key=f"{caller}()",
            fix=f"pass the others by keyword (the arguments of {caller} are: {shown})",
        )
    for name, param in params.items():
        if param.default is param.empty and param.kind in (
            param.POSITIONAL_OR_KEYWORD,
            param.KEYWORD_ONLY,
        ):
            if name in bound.arguments:
                continue
            said = [instead[k] for k in kwargs if k in instead]
            required = [n for n, p in params.items() if p.default is p.empty and n in keywords]
            more = ", ..." if len(params) > len(required) else ""
            return ArgumentError(
                f"missing argument {name!r}",
                key=f"{caller}({name}=...)",
                fix="; ".join([*said, f"call {caller}({', '.join(required)}{more})"]),
            )
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        return ArgumentError(str(exc), key=f"{caller}()", fix=f"see help(prompt_runner.{caller})")
    return None
