"""Whether a bounded watch's packet loads: a sample's ``packet_error``.

``status`` shows a packet that does not load (two prompt files giving one id,
a front matter that does not parse) with one ``warning:`` line, the loader's
own sentence, and shows every recorded prompt (none taken for removed, as its
ids cannot be known); a bounded watch judges it the same way: each sample
carries ``packet_error`` (that sentence, or ``None``), shown, not judged -- a
live run holds the packet it loaded, and its records of truth are valid; the
next ``run`` refuses the packet with that sentence.

The answer is :func:`prompt_runner.packet.prompt_ids_text.packet_ids`' (the
ids read as text, the loader only where the text cannot tell), kept while the
manifest and every entry of the prompt directory hold their inode, size,
mtime and ctime: a sample of an unchanged packet costs a listing and a stat
per prompt file, not a read of every front matter.
"""

from __future__ import annotations

import os

from ..packet.prompt_ids_text import MANIFEST_NAME, packet_ids, prompt_dir_text


def _stats(root: str) -> tuple[object, ...] | None:
    """The manifest's and the prompt directory's entries' identities and times
    (``None``: the prompt directory cannot be known as text or listed; then
    nothing is kept)."""
    directory = prompt_dir_text(root)
    if directory is None:
        return None
    parts: list[object] = []
    for path in (os.path.join(root, MANIFEST_NAME), directory):
        try:
            st = os.stat(path)
        except OSError:
            parts.append((path, None))
            continue
        parts.append((path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    try:
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                try:
                    st = entry.stat()
                except OSError:
                    parts.append((entry.name, None))
                    continue
                parts.append((entry.name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    except FileNotFoundError:
        parts.append(("-",))
    except OSError:
        return None
    return tuple(parts)


class PacketCheck:
    """A bounded watch's :meth:`error` of its packet, kept across samples while
    the packet's files are unchanged (one per watch)."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._error: str | None = None

    def error(self, root: str | os.PathLike[str]) -> str | None:
        """The loader's sentence when the packet at ``root`` does not load, else
        ``None``."""
        text = os.fspath(root)
        key = _stats(text)
        if key is not None and key == self._key:
            return self._error
        self._error = packet_ids(text)[1]
        self._key = key
        return self._error
