"""Every call :mod:`prompt_runner` exports checks its arguments before it runs.

:func:`public` wraps a library function so that a wrong call is an
:class:`~prompt_runner.errors.ArgumentError` (a ``UserError``, exit 2, that is
also a ``TypeError``) whose sentence names the argument and the fix, never
Python's bare ``TypeError`` nor a value silently misread:

- a keyword the function does not take (``did you mean write=...?``), a
  required argument left out, too many positional arguments;
- a value of the wrong type, read from the argument's annotation (a union of
  the parts below, ``None`` among them or not): ``bool`` must be ``True`` or
  ``False`` (``write="yes"`` is refused, not taken as true) and a bool is
  never a number (``int``, ``float``); ``str`` is text; ``Path`` and
  ``os.PathLike`` are a path (text or an ``os.PathLike``); ``Mapping[...]``
  and ``dict[...]`` a mapping; ``Sequence[X]``, ``Collection[X]``,
  ``list[X]`` and ``tuple[X, ...]`` a list or tuple (a collection for
  ``Collection``) whose items are each an ``X`` -- never a bare string, which
  would be read letter by letter (``drop="files_exist"`` is refused, saying
  to pass ``["files_exist"]``); ``Callable[...]`` anything callable.

An argument annotated with anything else (``Any``, an alias such as
``PacketArg``, a class such as ``Packet`` or ``Workspace``), and ``ids``
(one id or a list, ints among them), is left to the function, which checks
it itself, as ``run``/``plan``/``repair`` do their
``**options`` (:mod:`prompt_runner.api_options`). Standard library only, and
only ``_thread``, ``functools``, ``collections``, ``os`` and ``re`` at import, never ``typing``:
the CLI's ``status`` and ``control`` paths import modules this decorates
(``tests/test_cli_startup.py``).

:class:`NamedTuple` is the base of the results those paths return: the same
tuple class as ``typing.NamedTuple`` would make of the class body, without
importing ``typing`` (~4 ms of a command's start-up).
"""

from __future__ import annotations

import _thread
import collections
import functools
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from .errors import ArgumentError

TYPE_CHECKING = False  # typing costs import time on the CLI hot paths (`status`, `control`)
if TYPE_CHECKING:
    from typing import Any, ParamSpec, TypeVar, overload

    P = ParamSpec("P")
    R = TypeVar("R")
    T = TypeVar("T")


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
    kinds = _argument_kinds(func)
    code = getattr(func, "__code__", None)
    positional = code.co_varnames[: code.co_argcount] if code is not None else ()

    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        given = positional[: len(args)]
        for name, value in (*zip(positional, args, strict=False), *kwargs.items()):
            kind = kinds.get(name)
            # An argument given twice is left to the binding check's own sentence.
            if kind is not None and not (name in kwargs and name in given):
                _check(func.__name__, name, value, kind)
        try:
            return func(*args, **kwargs)
        except TypeError as exc:
            if isinstance(exc, ArgumentError):
                raise
            # Arguments that do not bind to func's signature (its __signature__ when
            # a wrapper such as api_authoring's passes more) raised it, whatever the
            # depth: func cannot have run with them. Else it came from inside func.
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


class _Kind:
    """What one annotation part takes: ``test(value)`` and the words naming it."""

    __slots__ = ("test", "words")

    def __init__(self, test: Callable[[Any], bool], words: str) -> None:
        self.test = test
        self.words = words


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


_KINDS: dict[str, _Kind] = {
    "None": _Kind(lambda value: value is None, "None"),
    "bool": _Kind(_is_bool, "True or False"),
    "int": _Kind(_is_int, "an integer"),
    "float": _Kind(_is_number, "a number"),
    "str": _Kind(_is_str, "text (a str)"),
    "Callable": _Kind(callable, "a function"),
}
for _name in ("Path", "PathLike", "os.PathLike", "PathLike[str]", "os.PathLike[str]"):
    _KINDS[_name] = _Kind(_is_path, "a path (a str or an os.PathLike)")
_PAIR = "a pair (a 2-item tuple)"
_PLURALS = {"text (a str)": "str", "a path (a str or an os.PathLike)": "paths", _PAIR: "pairs"}


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside brackets, each part stripped."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        depth += (char == "[") - (char == "]")
        if char == sep and depth == 0:
            parts.append(text[start:at].strip())
            start = at + 1
    parts.append(text[start:].strip())
    return parts


def _kind_of(part: str) -> _Kind | None:
    """The kind an annotation part names (``None``: not one this module checks)."""
    if part in _KINDS:
        return _KINDS[part]
    head, bracket, rest = part.partition("[")
    inner = rest[:-1] if bracket and rest.endswith("]") else ""
    if head in ("Mapping", "dict") or part in ("Mapping", "dict"):
        return _Kind(_is_mapping, "a mapping (a dict)")
    if head == "Callable":
        return _KINDS["Callable"]
    if head == "tuple" and inner.endswith(", ..."):
        head, inner = "Sequence", inner[: -len(", ...")]
    if head in ("Sequence", "Collection", "list") and inner:
        item = _union_kind(inner)
        return _collection_kind(head, item) if item is not None else None
    if head == "tuple" and inner:  # a fixed-length tuple: a list or tuple of that many items
        items = [_union_kind(each) for each in _split(inner, ",")]
        return _tuple_kind(items)
    return None


def _not_text(value: Any) -> bool:
    return not isinstance(value, (str, bytes, bytearray, Mapping))


def _collection_kind(head: str, item: _Kind) -> _Kind:
    outer: Any = Collection if head == "Collection" else Sequence
    if head == "list":
        outer = list

    def test(value: Any) -> bool:
        return isinstance(value, outer) and _not_text(value) and all(map(item.test, value))

    noun = "a collection" if head == "Collection" else "a list"
    return _Kind(test, f"{noun} of {_PLURALS.get(item.words, item.words)}")


def _tuple_kind(items: list[_Kind | None]) -> _Kind:
    def test(value: Any) -> bool:
        return (
            isinstance(value, Sequence)
            and _not_text(value)
            and len(value) == len(items)
            and all(kind is None or kind.test(one) for kind, one in zip(items, value, strict=True))
        )

    return _Kind(test, _PAIR if len(items) == 2 else f"a {len(items)}-item tuple")


def _union_kind(text: str) -> _Kind | None:
    """The kind a whole annotation names, a union of parts (``None``: one part
    is not a kind this module checks, so the function checks the argument)."""
    kinds = [_kind_of(part) for part in _split(text, "|")]
    if not kinds or any(kind is None for kind in kinds):
        return None
    checked: list[_Kind] = [kind for kind in kinds if kind is not None]
    if len(checked) == 1:
        return checked[0]
    tests = tuple(kind.test for kind in checked)
    named = [kind.words for kind in checked]
    if _KINDS["Path"].words in named:  # a path is already said to be a str or a PathLike
        named = [words for words in named if words != _KINDS["str"].words]
    words = " or ".join(dict.fromkeys(named))
    return _Kind(lambda value: any(test(value) for test in tests), words)


def _argument_kinds(func: Callable[..., Any]) -> dict[str, _Kind]:
    """Argument name -> the kind its annotation names, for the arguments
    annotated only with the parts the module doc lists."""
    out: dict[str, _Kind] = {}
    for name, annotation in getattr(func, "__annotations__", {}).items():
        if name in ("return", "ids"):  # ids: run_options and verify check them (ints too)
            continue
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        kind = _union_kind(text) if text else None
        if kind is not None:
            out[name] = kind
    return out


def _check(caller: str, name: str, value: Any, kind: _Kind) -> None:
    if kind.test(value):
        return
    fix = f"see help(prompt_runner.{caller}) for what each argument takes"
    if isinstance(value, str) and re.search(r"\ba (list|collection) of (str|paths)\b", kind.words):
        fix = f"pass a list, even of one: {name}=[{value!r}]"
    raise ArgumentError(
        f"must be {kind.words}, not {_shown(value)}",
        key=f"{caller}({name}=...)",
        fix=fix,
    )


def _shown(value: Any) -> str:
    """``value`` as a refusal names it: its type and a short repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    if value is None or isinstance(value, bool):
        return text
    return f"{type(value).__name__} {text}"


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


_STATE_DIR_LOCK = _thread.RLock()


class StateDirScope:
    """``with StateDirScope(state_dir):`` -- a library call's ``state_dir=``, with
    the meaning ``--state-dir DIR`` has on the CLI.

    While the block runs, ``$PROMPT_RUNNER_STATE_DIR``
    (:data:`~prompt_runner.state.layout.STATE_DIR_ENV`) names ``state_dir``
    made absolute (:func:`~prompt_runner.state.layout.relocated_state_dir`,
    the resolution ``run(state_dir=...)`` uses), exactly as the CLI exports
    ``--state-dir`` for its process: every reader in the call, and every process
    it starts (a verify command), finds the run's state there. The previous
    value is restored afterwards. Blocks of different threads are serialized
    (one lock), so two calls with different ``state_dir`` never see each
    other's; a call *without* ``state_dir`` made meanwhile in another thread
    reads the environment as it is at that moment.

    Args:
        state_dir: a directory (text or path); ``None`` or ``""``: nothing changes.
    """

    def __init__(self, state_dir: str | os.PathLike[str] | None) -> None:
        self._dir = None if state_dir is None or os.fspath(state_dir) == "" else state_dir
        self._saved: str | None = None

    def __enter__(self) -> StateDirScope:
        if self._dir is None:
            return self
        from .state.layout import STATE_DIR_ENV, relocated_state_dir

        path = relocated_state_dir(self._dir)
        _STATE_DIR_LOCK.acquire()
        self._saved = os.environ.get(STATE_DIR_ENV)
        os.environ[STATE_DIR_ENV] = str(path)
        return self

    def __exit__(self, *_: object) -> None:
        if self._dir is None:
            return
        from .state.layout import STATE_DIR_ENV

        if self._saved is None:
            os.environ.pop(STATE_DIR_ENV, None)
        else:
            os.environ[STATE_DIR_ENV] = self._saved
        _STATE_DIR_LOCK.release()


def in_state_dir(state_dir: str | os.PathLike[str] | None, items: Iterator[T]) -> Iterator[T]:
    """``items`` -- a generator that resolves its state root at its first
    ``next()`` (``control_events``, ``control_log``: the control store, opened
    once) -- with that first ``next()`` run inside :class:`StateDirScope`
    ``(state_dir)``. The later items read the root resolved then, outside the
    scope, so a follow that waits long for its next record holds no lock and
    leaves the environment as the caller has it (only a follow of a stream
    still empty waits for its first record inside the scope)."""
    with StateDirScope(state_dir):
        try:
            first = next(items)
        except StopIteration:
            return
    yield first
    yield from items
