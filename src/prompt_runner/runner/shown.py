"""Names from the user's repos as the runner's one-line messages show them.

A file name may hold any character but ``/`` and NUL: a newline in one would
split a warning's line (and could start a line that looks like the runner's
own), a tab would misalign it. :func:`one_line` shows every control character
as its escape -- newline and tab too (``\\x0a``, ``\\x09``), in the same form
:func:`~prompt_runner.render.printable.printable` gives ESC (``\\x1b``), which
keeps newline and tab for multi-line text.

Standard library only (with ``render.printable``): the run's start imports it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..render.printable import printable_line


def one_line(text: str) -> str:
    """``text`` with every control character escaped, newline and tab included
    (``'new\\nline.txt'`` -> ``'new\\\\x0aline.txt'``); a printable text is
    returned as it is."""
    return printable_line(text)


def listed(paths: Iterable[str], limit: int = 8) -> str:
    """The first ``limit`` of ``paths`` (in their order), each :func:`one_line`,
    joined by ``", "``, with ``" ..."`` when there were more."""
    items = list(paths)
    shown = ", ".join(one_line(p) for p in items[:limit])
    return shown + (" ..." if len(items) > limit else "")
