"""The commands a message suggests (``prompt-runner stop PACKET``...), as typed.

Every sentence that tells the user what to run next builds its command here,
so it is one that works typed in the user's current directory: the words
joined by single spaces, an empty word (a run named by the current directory)
left out, never a double space or a trailing one. The words naming the run
(``PACKET``, ``--workspace W``, ``--state-dir D``) come quoted for the shell
already (:func:`shlex.quote`), as the caller spelled them.
"""

from __future__ import annotations

__all__ = ["command"]


def command(*words: str) -> str:
    """``prompt-runner WORD...``: the non-empty ``words`` (each stripped) joined
    by single spaces, e.g. ``command("stop", "")`` is ``prompt-runner stop`` and
    ``command("control", "events", "--workspace w", "--follow")`` is
    ``prompt-runner control events --workspace w --follow``."""
    return " ".join(["prompt-runner", *(w.strip() for w in words if w.strip())])
