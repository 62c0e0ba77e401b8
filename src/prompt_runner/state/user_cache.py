"""Where the user's cache directory is: the one rule the parsed-packet cache
(``packet/cache.py``) and ``list``'s kept output (``cli/kept_output.py``) share.

Standard library ``os`` only, and text rather than :class:`pathlib.Path`:
``list``'s kept output answers before ``pathlib`` is imported.
"""

from __future__ import annotations

import os

CACHE_ENV = "PROMPT_RUNNER_CACHE_DIR"
"""Overrides the cache directory; set to the empty string to turn the cache off."""


def cache_dir() -> str | None:
    """The cache directory as an absolute path (not created), or ``None`` when off.

    ``$PROMPT_RUNNER_CACHE_DIR`` when it is an absolute path (``~`` expanded);
    empty turns the cache off; a relative value is ignored and the next place is
    used: ``$XDG_CACHE_HOME/prompt-runner`` when that is absolute (the XDG Base
    Directory specification says a relative value is to be ignored), else
    ``~/.cache/prompt-runner``. ``None`` (off) when ``$HOME`` is relative or no
    home directory can be found: a relative place would put the cache in
    whatever directory a command runs from -- often a work tree, where a commit
    of every change would take it in.
    """
    explicit = os.environ.get(CACHE_ENV)
    if explicit == "":
        return None
    if explicit is not None:
        chosen = os.path.expanduser(explicit)
        if os.path.isabs(chosen):
            return chosen
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "prompt-runner")
    home = os.path.expanduser("~")
    if not os.path.isabs(home):  # no HOME and no passwd entry leaves "~" as it was
        return None
    return os.path.join(home, ".cache", "prompt-runner")
