"""Output helpers for CLI handlers (the only place the CLI writes).

A stdout whose encoding cannot carry a character (``PYTHONIOENCODING=ascii``,
a Latin-1 locale) never ends a command in an error: a JSON document is then
written with every non-ASCII character as its JSON escape (``\\u00fc``, a
surrogate pair past U+FFFF) -- the same document to any JSON reader, in any
ASCII-compatible encoding -- and a human line with the characters the
encoding lacks as Python's ``backslashreplace`` escapes (``\\xfc``) -- also
where the stream's error handler would have replaced or dropped them
(``PYTHONIOENCODING=ascii:replace``). A stdout that can carry the text gets it
unchanged.
"""

from __future__ import annotations

import codecs
import errno
import os
import sys

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`status`)
if TYPE_CHECKING:
    from typing import Any

    from ..state.status_cache import Kept

_emitted = False  # this process already printed its one --json document

codecs.register_error("prompt-runner-json", lambda exc: _json_escapes(exc))


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
    _write_json(text)
    return text


_LOSSY = frozenset({"replace", "ignore"})
"""Error handlers (``PYTHONIOENCODING=ascii:replace``) that would write a
character the encoding lacks as ``?`` or drop it, without an error to catch."""


def _lossy(stream: Any, text: str) -> bool:
    """``stream`` would silently lose some character of ``text``."""
    if text.isascii() or getattr(stream, "errors", None) not in _LOSSY:
        return False
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def _write_json(text: str) -> None:
    """``text`` (a JSON document) on stdout; ASCII-escaped where its encoding fails."""
    if _lossy(sys.stdout, text):
        sys.stdout.write(ascii_json(text))
        return
    try:
        sys.stdout.write(text)  # the whole text is encoded before any of it is written
    except UnicodeEncodeError:
        sys.stdout.write(ascii_json(text))


def ascii_json(text: str) -> str:
    """``text``, a JSON document, with every non-ASCII character (a lone surrogate
    included) as its ``\\uXXXX`` escape: the same document, in ASCII.

    Non-ASCII characters can only be inside JSON strings, where the escape means
    the character itself."""
    return text.encode("ascii", "prompt-runner-json").decode("ascii")


def _json_escapes(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    parts: list[str] = []
    for char in exc.object[exc.start : exc.end]:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            parts.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            parts.append(f"\\u{code:04x}")
    return "".join(parts), exc.end


def _write_text(stream: Any, text: str) -> None:
    """``text`` on ``stream``; characters its encoding lacks as ``backslashreplace`` escapes."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    if _lossy(stream, text):
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
        return
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))


def json_text(doc: Any, *, decoded: bool = False) -> str:
    """The text :func:`emit_json` prints for ``doc``, its newline included."""
    text = _indented(doc) if decoded else None
    if text is None:
        import json  # lazy: `status --json` prints a kept text without it

        text = json.dumps(doc, indent=2, ensure_ascii=False, default=str)
    return text + "\n"


def emit_json_kept(kept: Kept) -> None:
    """Print the kept text of this process's one ``--json`` document (``status
    --json``, state/status_cache.py): copied by the kernel from the file to a
    UTF-8 stdout that leaves newlines alone (``os.sendfile``), read and
    written where stdout is no such descriptor, and as text to any other.

    Raises:
        OSError: stdout cannot be written (as any print), or the file was cut
            while it was copied.
    """
    global _emitted
    _emitted = True
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None or not _utf8_as_is(out):
        _write_json(kept.read().decode("utf-8"))
        return
    out.flush()
    buffer.flush()
    try:
        target = buffer.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's capture)
        buffer.write(kept.read())
        return
    at, left = kept.offset, kept.length
    while left > 0:
        try:
            sent = os.sendfile(target, kept.fd, at, left)
        except OSError as exc:
            if at != kept.offset or exc.errno not in _NO_SENDFILE:
                raise
            buffer.write(kept.read())  # a descriptor sendfile cannot write to
            return
        if sent == 0:
            raise OSError(f"a kept status text ended {left} bytes early")
        at += sent
        left -= sent


_NO_SENDFILE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})


def _utf8_as_is(out: Any) -> bool:
    """Writing text to ``out`` puts its UTF-8 bytes there unchanged."""
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    return encoding == "utf8" and os.linesep == "\n"


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

    _write_json(json.dumps(doc, ensure_ascii=False) + "\n")


def json_emitted() -> bool:
    """Whether :func:`emit_json` already printed this process's document."""
    return _emitted


def say(text: str = "") -> None:
    """A human line on stdout; control characters shown escaped (render/printable.py)."""
    from ..render.printable import printable  # lazy: a --json document needs none

    _write_text(sys.stdout, printable(text) + "\n")


def say_all(lines: list[str]) -> str:
    """:func:`say` each of ``lines``, in one write; returns the text written (when
    stdout's encoding carries it: then it is the command's whole stdout)."""
    from ..render.printable import printable  # lazy: a --json document needs none

    text = "".join(printable(line) + "\n" for line in lines)
    _write_text(sys.stdout, text)
    return text


def warn(text: str) -> None:
    """A human line on stderr, made printable like :func:`say`'s."""
    from ..render.printable import printable  # lazy: a --json document needs none

    _write_text(sys.stderr, printable(text) + "\n")
