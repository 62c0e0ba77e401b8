"""Output helpers for CLI handlers (the only place the CLI writes)."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..render.printable import printable

_emitted = False  # this process already printed its one --json document


def emit_json(doc: Any, *, decoded: bool = False) -> None:
    """Print ``doc`` as ``json.dumps(doc, indent=2, ensure_ascii=False, default=str)``.

    ``decoded``: ``doc`` holds only what JSON decodes to (a state document
    read from files), so :func:`_indented` may print it -- the same text,
    ~20x faster than the standard library's pure-Python indenting encoder.
    """
    global _emitted
    _emitted = True
    text = _indented(doc) if decoded else None
    if text is None:
        text = json.dumps(doc, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(text + "\n")


_NUMBER = frozenset(b"0123456789.eE+-")


def _indented(doc: Any) -> str | None:
    """``doc`` indented by orjson, or ``None`` where that text could differ from
    ``json.dumps``': a value orjson refuses or changes (NaN and infinities become
    ``null``; checked by decoding the text back), and a float under 1e-4 (orjson
    writes ``0.00001`` and ``1e-7`` where ``json`` writes ``1e-05`` and ``1e-07``).
    """
    import orjson  # lazy: only documents big enough to matter reach here

    try:
        out = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    except TypeError:
        return None
    for marker in (b"e-", b"0.0000"):
        at = out.find(marker)
        while at >= 0:
            start = at
            while start > 0 and out[start - 1] in _NUMBER:
                start -= 1
            if out[start - 1 : start] == b" " and out[start] in b"-0123456789":
                return None  # a number token, not text inside a string
            at = out.find(marker, at + 1)
    if orjson.loads(out) != doc:
        return None
    return out.decode("utf-8")


def emit_error(doc: dict[str, Any]) -> None:
    """The one-line error document a failed ``--json`` command prints on stdout."""
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")


def json_emitted() -> bool:
    """Whether :func:`emit_json` already printed this process's document."""
    return _emitted


def say(text: str = "") -> None:
    """A human line on stdout; control characters shown escaped (render/printable.py)."""
    sys.stdout.write(printable(text) + "\n")


def warn(text: str) -> None:
    """A human line on stderr, made printable like :func:`say`'s."""
    sys.stderr.write(printable(text) + "\n")
