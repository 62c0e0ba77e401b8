"""Turn pydantic validation errors into one-sentence :class:`UserError` values."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import UserError, shown_value

M = TypeVar("M", bound=BaseModel)


class FixedValueError(ValueError):
    """A model validator's ``ValueError`` that carries its own fix (else the
    error's fix is "correct the value")."""

    def __init__(self, message: str, *, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def key_path(loc: Sequence[int | str], prefix: str = "") -> str:
    """``("verify", "commands", 0, "exec")`` -> ``verify.commands[0].exec``."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


def validate_model(model: type[M], data: Any, *, file: str, prefix: str = "") -> M:
    """Validate ``data`` into ``model`` or raise one :class:`UserError`.

    The error names ``file``, the key path of the first problem (prefixed with
    ``prefix``) and a fix; further problems are counted in the message.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise to_user_error(exc, model, file=file, prefix=prefix) from None


def _fields_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        annotation = fields[part].annotation
        current = model_in(annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", None)
    # a field's name as written: its alias (``schema``), not the attribute (``schema_``)
    return sorted(info.alias or name for name, info in fields.items()) if fields else []


def model_in(annotation: Any) -> Any:
    """The pydantic model class in ``annotation`` (itself, or one of its type
    arguments, depth first), or ``None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = model_in(arg)
        if found is not None:
            return found
    return None


_UNION_TAGS = ("function-", "int", "str", "float", "bool", "none", "list", "dict", "literal[")


def _field_loc(loc: Sequence[int | str]) -> tuple[int | str, ...]:
    """``loc`` without pydantic's union-member and validator tags."""
    return tuple(p for p in loc if not (isinstance(p, str) and p.startswith(_UNION_TAGS)))


def to_user_error(
    exc: ValidationError, model: type[BaseModel], *, file: str, prefix: str = ""
) -> UserError:
    """Convert the first error of ``exc`` into a :class:`UserError`.

    The key is the error's key path (``prefix`` first); when pydantic found
    more problems, the message counts them.
    """
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = list(_field_loc(first["loc"]))
    kind = first["type"]
    key = key_path(loc, prefix) or prefix or None
    # pydantic reports one error per union member it tried: count distinct keys.
    others = len({_field_loc(e["loc"]) for e in errors}) - 1
    more = f" (and {others} more problem(s))" if others > 0 else ""
    if kind == "extra_forbidden":
        return UserError(f"unknown key{more}", file=file, key=key, fix=_unknown_key_fix(model, loc))
    if kind == "missing":
        return UserError(f"is required but missing{more}", file=file, key=key, fix="add it")
    if loc and loc[-1] == "[key]" and len(loc) >= 2:
        message, fix = _not_a_name(first.get("input"))
        return UserError(
            f"{message}{more}", file=file, key=key_path(loc[:-2], prefix) or prefix or None, fix=fix
        )
    message, fix = _describe(first)
    return UserError(f"{message}{more}", file=file, key=key, fix=fix)


_YAML_WORDS: dict[object, tuple[str, ...]] = {
    True: ("on", "yes", "true"),
    False: ("off", "no", "false"),
    None: ("null", "~"),
}
"""What YAML 1.1 reads unquoted as each non-string scalar a key may become."""


def non_string_key(written: Any) -> tuple[str, str]:
    """``(message, word)`` for a mapping key YAML did not read as a string:
    ``"key `on` (or `yes`, `true`) is not a string (YAML reads it unquoted as
    True)"`` and the first word it was written as (``on``), for the fix.

    The key's text is gone once YAML has read it, so a boolean or null key is
    named by the words that become it (``on``, ``yes`` or ``true`` for True).
    Shared by the packet's and the workspace manifest's loaders.
    """
    words = _YAML_WORDS.get(written) if isinstance(written, bool) or written is None else None
    if words:
        shown = f"`{words[0]}` (or {', '.join(f'`{w}`' for w in words[1:])})"
        read_as = f"YAML reads it unquoted as {written!r}"
    else:
        words = (str(written),)
        shown = f"`{written}`"
        read_as = f"YAML reads it as the {type(written).__name__} {written!r}"
    return f"key {shown} is not a string ({read_as})", words[0]


def _not_a_name(written: Any) -> tuple[str, str]:
    """``(message, fix)`` for a mapping key YAML did not read as a string."""
    message, word = non_string_key(written)
    return message, f'quote the key, e.g. "{word}":'


def _unknown_key_fix(model: type[BaseModel], loc: Sequence[int | str]) -> str:
    """The fix for an unknown key: the known key it is closest to, or all of them."""
    known = _fields_at(model, loc)
    name = str(loc[-1]) if loc else "?"
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    fix = f"{hint}remove it or fix its spelling"
    if known and not close:
        fix += f" (known keys: {', '.join(known)})"
    return fix


def _describe(error: Any) -> tuple[str, str]:
    """``(message, fix)`` for one pydantic error about a value."""
    kind = error["type"]
    message = str(error.get("msg", "is invalid"))
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    got = error.get("input")
    shown = shown_value(got)
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "literal_error":
        return f"{shown} is not an accepted value", message.replace("Input should be", "use")
    if kind in ("list_type", "tuple_type") and isinstance(got, str):
        example = ", ".join(got.split()) or "..."
        return f"{shown} is a string, not a list", f"write it as a YAML list, e.g. [{example}]"
    if kind in _TYPES:
        words, fix = _TYPES[kind]
        if kind == "string_type" and isinstance(got, int | float) and not isinstance(got, bool):
            # id: 010 arrives as 8: say the number is YAML's reading of the text
            shown += " (YAML reads unquoted digits as a number)"
        return words.format(shown=shown), fix
    if kind in _BOUNDS:
        words, fix = _BOUNDS[kind]
        return f"must be {words.format(**ctx)} (got {shown})", fix
    if kind in _LENGTHS:
        return _length(kind, ctx)
    if kind == "string_pattern_mismatch":
        return f"{shown} does not match the pattern {ctx.get('pattern')!r}", "correct the value"
    if message.startswith("Input should be "):
        message = "must be " + message[len("Input should be ") :]
    given = ctx.get("error")
    if isinstance(given, FixedValueError):
        return message, given.fix
    return message, "correct the value"


def _length(kind: str, ctx: dict[str, Any]) -> tuple[str, str]:
    """``(message, fix)`` for a value that is too short or too long."""
    words = _LENGTHS[kind]
    size = ctx.get("min_length", ctx.get("max_length"))
    if size == 1 and "least" in words:
        return "must not be empty", "give it a value"
    noun = "character" if kind.startswith("string_") else "item"
    message = f"{words} {size} {noun}{'' if size == 1 else 's'}"
    return message, "shorten it" if "most" in words else "add to it"


_TYPES: dict[str, tuple[str, str]] = {
    "int_parsing": ("{shown} is not an integer", "write a whole number"),
    "int_type": ("{shown} is not an integer", "write a whole number"),
    "int_from_float": ("{shown} is not an integer", "write a whole number"),
    "float_parsing": ("{shown} is not a number", "write a number"),
    "float_type": ("{shown} is not a number", "write a number"),
    "bool_parsing": ("{shown} is not a boolean", "write true or false"),
    "bool_type": ("{shown} is not a boolean", "write true or false"),
    "string_type": ("{shown} is not a string", "quote the value"),
    "list_type": ("{shown} is not a list", "write it as a YAML list"),
    "tuple_type": ("{shown} is not a list", "write it as a YAML list"),
    "dict_type": ("{shown} is not a mapping", "write it as 'key: value' entries"),
    "model_type": ("{shown} is not a mapping", "write it as 'key: value' entries"),
    "model_attributes_type": ("{shown} is not a mapping", "write it as 'key: value' entries"),
}
"""pydantic type errors -> (our wording with the value shown, fix)."""

_BOUNDS: dict[str, tuple[str, str]] = {
    "greater_than_equal": ("{ge} or more", "use a larger number"),
    "greater_than": ("more than {gt}", "use a larger number"),
    "less_than_equal": ("{le} or less", "use a smaller number"),
    "less_than": ("less than {lt}", "use a smaller number"),
}
"""pydantic bound errors -> (our wording with the bound from ``ctx``, fix)."""

_LENGTHS: dict[str, str] = {
    "too_short": "must have at least",
    "too_long": "must have at most",
    "string_too_short": "must have at least",
    "string_too_long": "must have at most",
}
"""pydantic length errors -> our wording (the size comes from ``ctx``)."""
