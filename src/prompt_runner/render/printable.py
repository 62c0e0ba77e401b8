"""Text from agents and the files they name, made safe to print on a terminal.

An agent's message, a tool's output, a patch or a file name can carry raw
control characters: ``ESC [ 2 J`` clears the screen, ``ESC ] ... BEL`` sets
the window title or writes a hyperlink, ``\\r`` overwrites the line it is on.
Every line Prompt Runner prints for a human goes through :func:`printable`,
which shows each such character as its escape (``\\x1b``), so nothing from an
agent can drive the terminal. Newlines and tabs stay (rendered lines may span
several lines); a name or a value shown inside one line (a file name, a tool
name) goes through :func:`printable_line`, which escapes them too, so it
cannot start a line that looks like the runner's own. The runner's own styling
is added afterwards. JSON output needs none of this: ``json.dumps`` escapes
control characters itself.

Standard library only: the CLI's hot paths import it.
"""

from __future__ import annotations

_KEEP = frozenset("\n\t")
_TABLE = {
    code: f"\\x{code:02x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if chr(code) not in _KEEP
}
# Bidirectional overrides and isolates reorder what a line appears to say.
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TABLE.update({code: f"\\u{code:04x}" for code in _BIDI})
_LINE = {ord("\n"): "\\x0a", ord("\t"): "\\x09"}


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab escaped (``\\x1b``).

    C0 controls (``\\x00``-``\\x1f``), DEL, the C1 controls (``\\x80``-``\\x9f``,
    which some terminals also obey) and the bidirectional overrides
    (``\\u202a``-``\\u202e``, ``\\u2066``-``\\u2069``) are replaced; everything
    else is kept. A Windows line end (``\\r\\n``) is a plain newline.
    """
    if text.isprintable():
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_TABLE)


def printable_line(text: str) -> str:
    """``text`` with every control character escaped, newline and tab included.

    For a name or value shown inside one line (``'new\\nline.txt'`` ->
    ``'new\\\\x0aline.txt'``), in the form :func:`printable` gives ESC
    (``\\x1b``); a printable text is returned as it is.
    """
    if text.isprintable():
        return text
    return printable(text.translate(_LINE))  # newline first: no "\r\n" is made one newline
