"""Every regex a contract carries runs here, under a deadline.

Clauses with regexes: ``matches`` (one file), ``commands``' ``stdout_matches``
(one command's stdout) and ``source_absent`` (each file it scans). A pattern
that backtracks without end (``^(a|aa)+$`` against sixty ``a`` and a ``!``)
must not hang the verifier whatever the prompt's ``timeout`` says, so:

* **Engine**: the ``regex`` module (PyPI), a drop-in for the standard ``re``
  whose searches accept ``timeout=``; it also runs many patterns that ``re``
  backtracks on forever (``^(a+)+$``) in linear time. Patterns are validated
  at load time with this same engine, so a pattern that loads also runs.
* **Deadline**: each search gets :data:`BASE_TIMEOUT_S` seconds plus one
  second per :data:`BYTES_PER_EXTRA_S` bytes of text it searches, so a big
  file or log is not cut short. Expiry raises :class:`RegexTimeout`, which a
  clause reports as ``verifier_timeout`` (the run halts, no repair is spent).

``re`` stays in use for the runner's own fixed patterns (glob translation,
markdown headings), which are not user input. The ``regex`` module is imported
on the first pattern compiled (~8 ms), so a run whose contracts carry no
pattern never loads it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, AnyStr

if TYPE_CHECKING:
    import regex
BASE_TIMEOUT_S = 2.0
"""Seconds every regex search may take, whatever the text's size."""
BYTES_PER_EXTRA_S = 10_000_000
"""Each this many bytes (characters) of searched text add one second to the deadline."""


class RegexTimeout(Exception):
    """A search ran past its deadline.

    Attributes:
        pattern: the pattern as written in the contract.
        seconds: the deadline that expired.
        path: the file being searched, when the caller records it.
    """

    def __init__(self, pattern: str, seconds: float) -> None:
        super().__init__(f"/{pattern}/ did not finish within {seconds:.1f} s")
        self.pattern = pattern
        self.seconds = seconds
        self.path: str | None = None

    def details(self, where: str) -> str:
        """The item's details: ``verifier_timeout: /P/ did not finish ... on WHERE; ...``."""
        return (
            f"verifier_timeout: regex /{self.pattern}/ did not finish within "
            f"{self.seconds:.1f} s on {where}; it backtracks without end -- rewrite it "
            "without nested or overlapping quantifiers such as (a+)+ or (a|aa)+"
        )


def nested_quantifier(pattern: str) -> bool:
    """True when a repeated part of ``pattern`` itself holds a repeat, as in
    ``(a+)+`` or ``(\\w+\\s?)*``: the shape that can backtrack without end.

    A possessive repeat (``a++``) or an atomic group (``(?>...)``) never
    backtracks, so nothing inside one counts. ``packet lint`` warns on it
    (``regex_nested_quantifier``); an unparsable pattern gives ``False``.
    """
    try:
        from re import _constants as c  # type: ignore[attr-defined]
        from re import _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern)
    except Exception:  # a private parser, or syntax only the engine knows: no finding
        return False
    repeats = (c.MAX_REPEAT, c.MIN_REPEAT)

    def children(op: Any, av: Any) -> list[Any]:
        if op in repeats:
            return [av[2]]
        if op is c.SUBPATTERN:
            return [av[3]]
        if op is c.BRANCH:
            return list(av[1])
        if op in (c.ASSERT, c.ASSERT_NOT):
            return [av[1]]
        if op is c.GROUPREF_EXISTS:
            return [sub for sub in av[1:] if sub is not None]
        return []  # literals, classes, possessive repeats, atomic groups

    def has_repeat(items: Any) -> bool:
        return any(
            (op in repeats and av[1] > 1 and av[0] != av[1])  # a variable-length repeat
            or any(has_repeat(sub) for sub in children(op, av))
            for op, av in items
        )

    def nested(items: Any) -> bool:
        for op, av in items:
            if op in repeats and av[1] > 1 and has_repeat(av[2]):
                return True
            if any(nested(sub) for sub in children(op, av)):
                return True
        return False

    return nested(parsed)


def syntax_error(pattern: str, *, as_bytes: bool = False) -> str | None:
    """Why ``pattern`` does not compile (as UTF-8 bytes with ``as_bytes``), or ``None``."""
    import regex  # lazy: ~8 ms of start-up, only a contract with a pattern needs it

    try:
        compiled(pattern.encode() if as_bytes else pattern)
    except regex.error as exc:
        return str(exc)
    return None


_ANY_TEXT_PROBES = ("", "x", "\n", "Az 09 _-.\n\n\u00e9")


def matches_any_text(pattern: str) -> bool:
    """Whether ``pattern`` finds a match in any text, the empty one included:
    it can match the empty string wherever it is tried (an empty alternative,
    ``forbidden|``; every part optional, ``a*``; a bare ``^`` or ``$``).

    Such a pattern cannot tell one text from another: ``matches`` with it
    always passes and ``source_absent`` fails on every file that is not
    empty. Told by searching a few unlike texts (empty, a letter, a line
    break, a mix); ``^$`` (an empty line) matches the empty text but not
    ``x``, so it is no such pattern. Raises ``regex.error`` for a pattern that
    does not compile (call :func:`syntax_error` first).
    """
    rx = compiled(pattern)
    try:
        return all(rx.search(text, timeout=BASE_TIMEOUT_S) is not None for text in _ANY_TEXT_PROBES)
    except TimeoutError:  # a pattern that backtracks on these is no empty match
        return False


@functools.lru_cache(maxsize=512)
def compiled(pattern: AnyStr) -> regex.Pattern[AnyStr]:
    """``pattern`` compiled with ``MULTILINE`` (cached). Raises ``regex.error``."""
    import regex  # lazy: ~8 ms of start-up, only a contract with a pattern needs it

    return regex.compile(pattern, regex.MULTILINE)


@functools.lru_cache(maxsize=64)
def compiled_literal(literal: bytes) -> regex.Pattern[bytes]:
    """A case-insensitive search for the bytes ``literal`` itself (cached).

    Folding is ASCII-only, as for every bytes pattern and as ``bytes.lower``
    does, so it finds exactly where ``literal.lower() in text.lower()`` would.
    A literal cannot backtrack, so its searches need no deadline.
    """
    import regex  # lazy: ~8 ms of start-up, only a contract with a pattern needs it

    return regex.compile(regex.escape(literal), regex.IGNORECASE)


def timeout_s(size: int) -> float:
    """The deadline in seconds for searching ``size`` bytes (or characters) of text."""
    return BASE_TIMEOUT_S + size / BYTES_PER_EXTRA_S


def search(pattern: str, text: str) -> regex.Match[str] | None:
    """The first match of ``pattern`` in ``text``, or ``None``.

    Raises:
        RegexTimeout: the search ran past :func:`timeout_s` of ``len(text)``.
    """
    seconds = timeout_s(len(text))
    try:
        return compiled(pattern).search(text, timeout=seconds)
    except TimeoutError:
        raise RegexTimeout(pattern, seconds) from None


def find_all(pattern: str, data: AnyStr, limit: int) -> list[regex.Match[AnyStr]]:
    """Up to ``limit`` matches of ``pattern`` in ``data``, in order: compiled as
    UTF-8 bytes for ``bytes`` data, as text for ``str``.

    Raises:
        RegexTimeout: the search ran past :func:`timeout_s` of ``len(data)``.
    """
    seconds = timeout_s(len(data))
    found: list[regex.Match[AnyStr]] = []
    source: Any = pattern.encode() if isinstance(data, bytes) else pattern
    try:
        for m in compiled(source).finditer(data, timeout=seconds):
            found.append(m)
            if len(found) >= limit:
                break
    except TimeoutError:
        raise RegexTimeout(pattern, seconds) from None
    return found
