"""Output helpers for CLI handlers (the only place the CLI writes)."""

from __future__ import annotations

import os
import sys

from ..render.printable import printable

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`status`)
if TYPE_CHECKING:
    from typing import Any

_emitted = False  # this process already printed its one --json document


def emit_json(doc: Any, *, decoded: bool = False) -> str:
    """Print ``doc`` as ``json.dumps(doc, indent=2, ensure_ascii=False, default=str)``.

    ``decoded``: ``doc`` holds only what JSON decodes to (a state document
    read from files), so :func:`_indented` may print it -- the same text,
    ~20x faster than the standard library's pure-Python indenting encoder.
    Returns the text printed.
    """
    global _emitted
    _emitted = True
    text = json_text(doc, decoded=decoded)
    sys.stdout.write(text)
    return text


def json_text(doc: Any, *, decoded: bool = False) -> str:
    """The text :func:`emit_json` prints for ``doc``, its newline included."""
    text = _indented(doc) if decoded else None
    if text is None:
        import json  # lazy: `status --json` prints a kept text without it

        text = json.dumps(doc, indent=2, ensure_ascii=False, default=str)
    return text + "\n"


def emit_json_bytes(data: bytes) -> None:
    """Print ``data``, the UTF-8 text of this process's one ``--json`` document
    (as :func:`emit_json` printed it before: ``status --json``'s kept text).

    The bytes go to ``sys.stdout.buffer`` as they are where that is what writing
    the text would put there (a UTF-8 stream that leaves newlines alone); to
    any other stdout, as text.
    """
    global _emitted
    _emitted = True
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if buffer is not None and encoding == "utf8" and os.linesep == "\n":
        out.flush()
        buffer.write(data)
    else:
        out.write(data.decode("utf-8"))


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
    import json  # lazy: see json_text

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
