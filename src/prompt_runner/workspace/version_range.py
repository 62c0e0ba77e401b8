"""``requires.prompt_runner``: a version range such as ``>=0.1, <0.2`` (or ``>= 0.1 and < 0.2``).

Each clause is an operator (``>=``, ``>``, ``<=``, ``<``, ``==``, ``!=``) and a
release number of dot-separated integers; clauses are joined by ``,`` or
``and`` and must all hold. Releases compare as integer tuples padded with
zeros (``0.1 == 0.1.0``); a pre-release or local suffix is not accepted (the
reference writes ranges the same way, e.g. ``">= 0.11.0 and < 0.12.0"``).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*$")
_OPS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}

Range = tuple[tuple[str, tuple[int, ...]], ...]


def parse_range(text: str) -> Range:
    """The clauses of ``text``.

    Raises:
        ValueError: a clause is not ``OP RELEASE`` (the message names it).
    """
    clauses = []
    for part in re.split(r",|\band\b", text):
        m = _CLAUSE.match(part)
        if m is None:
            raise ValueError(f"{part.strip()!r} is not a version clause (write e.g. '>=0.1, <0.2')")
        clauses.append((m.group(1), tuple(int(n) for n in m.group(2).split("."))))
    return tuple(clauses)


def release(version: str) -> tuple[int, ...]:
    """``"0.1.0"`` -> ``(0, 1, 0)``; a suffix after the numbers is ignored (``0.2.0rc1``)."""
    m = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(n) for n in m.group(0).split(".")) if m else (0,)


def matches(version: str, text: str) -> bool:
    """True when ``version`` satisfies every clause of the range ``text``.

    Raises:
        ValueError: ``text`` is not a range.
    """
    have = release(version)
    for op, want in parse_range(text):
        width = max(len(have), len(want))
        if not _OPS[op](have + (0,) * (width - len(have)), want + (0,) * (width - len(want))):
            return False
    return True
