"""A bounded watch's check of the records of truth ``status`` and ``run`` refuse.

``status`` and ``run`` refuse a prompt log (``prompts/<id>.jsonl``) or a
``progress.log`` with a complete line that does not parse (exit 2, the file,
the line and the fix); a bounded watch passed such a run as healthy. Each
sample now checks them as those commands read them -- the store's own
validators, :func:`prompt_runner.state.prompt_log.fold_lines` and
:func:`prompt_runner.state.progress.parse_progress_lines` -- and a bad line
is the sample's ``state_error`` (``runtime_unhealthy``, reason
``state_unreadable``) with the same sentence.

Cost: each complete line is read and checked once per watch. A file's state
(its device and inode, how far it was checked, the line number there, the
last bytes before that point and, for a prompt log, its fold so far) is kept
between samples; a sample reads only what was appended since (nothing for an
unchanged file: one ``fstat``). A torn last line -- a live runner's line
being written, or a killed writer's -- is never read as corruption: the check
stops before it and takes it up once it ends. A file replaced (another
inode), shortened, or rewritten in place (written to while no longer than
what was checked, or its last checked bytes differ) is checked again from its
start; what this does not see is a rewrite in place that also grows the file
and keeps the last checked bytes where they were (an editor writes a new
file). Which prompt logs: every ``prompts/<id>.jsonl`` whose name the store
could have written (``status`` folds exactly those).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import StateError, StorageError
from ..state.layout import StateLayout
from ..state.progress import parse_progress_lines
from ..state.prompt_log import fold_lines, is_safe_name, new_prompt

_EDGE = 64
"""How many checked bytes before the check's point are read again, to tell an
append from a file rewritten in place."""

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class _Checked:
    """How far one file was checked (see the module docstring)."""

    __slots__ = ("ctime_ns", "dev", "edge", "fold", "ino", "line", "offset")

    def __init__(self, dev: int, ino: int, fold: dict[str, Any] | None) -> None:
        self.dev, self.ino, self.fold = dev, ino, fold
        self.ctime_ns = -1  # the ctime the file had when it was last checked
        self.offset = 0  # the end of the last complete line checked
        self.line = 1  # the number of the next line
        self.edge = b""  # the last checked bytes (up to _EDGE) before offset


class RecordsCheck:
    """The records of truth of one state root, checked across a watch's samples.

    One per watch (:class:`prompt_runner.watch.bounded.watch_for`'s target); a
    new one checks every file from its start.
    """

    def __init__(self) -> None:
        self._files: dict[str, _Checked] = {}

    def error(self, state: StateLayout) -> str | None:
        """The sentence ``status`` would refuse the first bad record with -- the
        prompt logs by name, then ``progress.log`` -- or ``None``."""
        try:
            for path in _prompt_logs(state.prompts_dir):
                self._check(path, prompt_log=True)
            self._check(state.progress_log, prompt_log=False)
        except (StateError, StorageError) as exc:  # status stops on either (exit 2, 3)
            return str(exc)
        return None

    def _check(self, path: Path, *, prompt_log: bool) -> None:
        key = os.fspath(path)
        seen = self._files.get(key)
        if seen is not None:  # unchanged since it was checked: one stat, nothing opened
            try:
                st = os.stat(key)
            except OSError:
                st = None
            if st is not None and _unchanged(seen, st):
                return
        try:
            fd = os.open(key, os.O_RDONLY | _O_CLOEXEC)
        except FileNotFoundError:
            self._files.pop(key, None)
            return
        except OSError as exc:
            raise StorageError(path, exc, doing="read") from exc
        try:
            self._check_open(key, path, fd, prompt_log=prompt_log)
        except StateError:
            self._files.pop(key, None)  # a file fixed later is checked from its start
            raise
        except OSError as exc:
            self._files.pop(key, None)
            raise StorageError(path, exc, doing="read") from exc
        finally:
            os.close(fd)

    def _check_open(self, key: str, path: Path, fd: int, *, prompt_log: bool) -> None:
        st = os.fstat(fd)
        seen = self._files.get(key)
        if (
            seen is None
            or (seen.dev, seen.ino) != (st.st_dev, st.st_ino)
            or st.st_size < seen.offset
        ):
            seen = _Checked(st.st_dev, st.st_ino, new_prompt() if prompt_log else None)
        if st.st_size == seen.offset and st.st_ctime_ns != seen.ctime_ns and seen.offset:
            # written, and no longer than what was checked: rewritten in place
            seen = _Checked(st.st_dev, st.st_ino, new_prompt() if prompt_log else None)
        seen.ctime_ns = st.st_ctime_ns
        if st.st_size == seen.offset:
            self._files[key] = seen
            return
        start = seen.offset - len(seen.edge)
        data = _read(fd, start, st.st_size - start)
        if not data.startswith(seen.edge):  # rewritten in place: check it all again
            seen = _Checked(st.st_dev, st.st_ino, new_prompt() if prompt_log else None)
            data = _read(fd, 0, st.st_size)
        else:
            data = data[len(seen.edge) :]
        end = data.rfind(b"\n") + 1  # 0: no complete line yet (a torn tail is not read)
        if end:
            lines = data[: end - 1].split(b"\n")
            if seen.fold is not None:
                fold_lines(path, seen.fold, lines, first=seen.line)
            else:
                parse_progress_lines(path, lines, first=seen.line)
            seen.edge = (seen.edge + data[:end])[-_EDGE:]
            seen.offset += end
            seen.line += len(lines)
        self._files[key] = seen


def _unchanged(seen: _Checked, st: os.stat_result) -> bool:
    return (seen.dev, seen.ino, seen.offset, seen.ctime_ns) == (
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_ctime_ns,
    )


def _prompt_logs(directory: Path) -> list[Path]:
    """The prompt logs ``status`` folds: ``<id>.jsonl`` with a name the store
    could have written, by name."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StorageError(directory, exc, doing="read") from exc
    suffix = ".jsonl"
    return [
        directory / name
        for name in sorted(names)
        if name.endswith(suffix) and is_safe_name(name[: -len(suffix)])
    ]


def _read(fd: int, offset: int, length: int) -> bytes:
    """``length`` bytes of ``fd`` from ``offset`` (fewer only at its end)."""
    parts: list[bytes] = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        parts.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return b"".join(parts)
