"""Append-only line files: one ``os.write`` per line, torn-tail repair, group commit.

Both JSONL files (journal, prompt logs, control logs) and the plain
``progress.log`` are *line files*: records are only ever appended, each record
is one line ending in ``\\n``, and each record is written by one ``os.write`` of
one buffer on a descriptor opened with ``O_APPEND``.

A writer killed mid-write (SIGKILL, power loss, full disk) can leave a *torn*
final line: bytes after the last ``\\n``. If the next writer simply appended,
that fragment would be glued to the next record and corrupt it. So before the
first append, :class:`LineAppender` calls :func:`repair_torn_tail`, which copies
the fragment to ``<name>.torn.<UTC stamp>`` next to the file (evidence, never
discarded) and truncates the file back to its last newline.

Readers never repair: a torn final line is simply not returned until a newline
completes it, because a live writer may be in the middle of writing it.

Files that several processes append to without holding the run lock (the
amendments and interventions audit files, the control log when a ``control``
command records a refusal) use :func:`append_line_shared` instead: it never
cuts anything, it only ends a torn line with a newline before its own record.

Only the standard library and the light ``state`` helpers are imported: the
``control`` and ``agent-control`` commands append through this module.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from prompt_runner.errors import StorageError
from prompt_runner.state._clock import file_stamp
from prompt_runner.state._closing import Closing
from prompt_runner.state.atomic import fsync_dir, write_all, write_bytes_atomic

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from concurrent.futures import ThreadPoolExecutor

_CHUNK = 64 * 1024
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def last_newline_offset(fd: int, size: int) -> int:
    """Return the offset just past the last ``\\n`` in the first ``size`` bytes of ``fd``.

    Scans backwards in 64 KiB chunks, so the cost is proportional to the length
    of the torn tail, not of the file. Returns 0 when there is no newline.
    """
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - start, start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        end = start
    return 0


def repair_torn_tail(path: Path) -> Path | None:
    """Move a torn final line of ``path`` aside and truncate the file to its last newline.

    The fragment is written (atomically, fsynced) to ``<name>.torn.<stamp>`` in the
    same directory *before* the truncation, so no byte is ever lost. Only call
    this while holding the right to write ``path`` (the run lock): a concurrent
    writer's line in flight would otherwise be cut.

    Returns:
        The path of the ``.torn.`` file, or ``None`` when the file is missing,
        empty, or already ends in ``\\n``.

    Raises:
        OSError: the file could not be read, the fragment could not be saved or
            the file could not be truncated.
    """
    try:
        fd = os.open(path, os.O_RDWR | _O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return None
        keep = last_newline_offset(fd, size)
        fragment = os.pread(fd, size - keep, keep)
        torn = _free_torn_name(path)
        write_bytes_atomic(torn, fragment)
        os.ftruncate(fd, keep)
        os.fsync(fd)
    finally:
        os.close(fd)
    return torn


def _free_torn_name(path: Path) -> Path:
    base = f"{path.name}.torn.{file_stamp()}"
    candidate = path.with_name(base)
    counter = 1
    while candidate.exists():
        candidate = path.with_name(f"{base}.{counter}")
        counter += 1
    return candidate


class LineAppender(Closing):
    """Append whole lines to one file, durably.

    Args:
        path: the file; created (with its parent directories) when missing.
        fsync_interval_ms: group commit window in milliseconds (a float is
            fine). ``0`` (default)
            fsyncs after every append. ``N > 0`` fsyncs at most once per ``N`` ms
            (the first append after the window has passed fsyncs), plus on
            :meth:`flush` and :meth:`close`. Appends made inside a window stay
            unsynced until one of those, so a writer that goes idle should call
            :meth:`flush`. A crash can lose unsynced appends, but never tears or
            reorders the ones that survive (after repair).

    A torn tail left by an earlier writer is repaired (see module doc) when the
    appender opens, and again before the next append if one of ours failed
    half-way. A file the appender creates has its directory fsynced right
    after its own first fsync (one journal commit covers both). Not
    thread-safe; one appender per file per process.
    """

    def __init__(self, path: Path, *, fsync_interval_ms: float = 0) -> None:
        if fsync_interval_ms < 0:
            raise ValueError("fsync_interval_ms must be >= 0")
        self.path = path
        self.torn_path: Path | None = None
        self._interval_s = fsync_interval_ms / 1000.0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.torn_path = repair_torn_tail(path)
            existed = path.exists()
            self._fd: int | None = os.open(
                path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC, 0o666
            )
        except StorageError:
            raise
        except OSError as exc:
            raise StorageError(path, exc) from exc
        # A new file's directory entry is made durable with its first fsync
        # (see _sync): one journal commit then covers both, and nothing in the
        # file is durable before that anyway.
        self._dir_unsynced = not existed
        self.created = not existed
        """Whether this appender created the file (it did not exist as it opened)."""
        self._dirty = False
        self._suspect_tail = False
        self._last_sync = time.monotonic()
        self.bytes_written = 0

    def append_line(self, line: bytes) -> None:
        """Append ``line`` (which must end with exactly one ``\\n``, its only newline).

        Raises:
            ValueError: ``line`` is not exactly one newline-terminated line.
            StorageError: the write or fsync failed (an ``OSError`` naming the
                file and the cause); the next append repairs any torn tail.
        """
        if not line.endswith(b"\n") or line.count(b"\n") != 1:
            raise ValueError("a line must end with its only newline")
        self._write(line)

    def append_lines(self, block: bytes) -> None:
        """Append ``block``, one or more whole lines, in one ``os.write`` (a batch).

        The caller vouches that each line is one record (the control plane's
        event batches, encoded once); only the final newline is checked.

        Raises:
            ValueError: ``block`` is empty or does not end with ``\\n``.
            StorageError: as :meth:`append_line`.
        """
        if not block.endswith(b"\n"):
            raise ValueError("a block of lines must end with a newline")
        self._write(block)

    def _write(self, data: bytes) -> None:
        fd = self._require_open()
        if self._suspect_tail:
            repaired = repair_torn_tail(self.path)
            self.torn_path = repaired or self.torn_path
            self._suspect_tail = False
        try:
            written = os.write(fd, data)
            while written < len(data):  # short write: disk full or signal, rare
                written += os.write(fd, data[written:])
        except BaseException as exc:
            self._suspect_tail = True
            if isinstance(exc, OSError):
                raise StorageError(self.path, exc) from exc
            raise
        self.bytes_written += len(data)
        self._dirty = True
        now = time.monotonic()
        if self._interval_s == 0 or now - self._last_sync >= self._interval_s:
            self._sync(fd, now)

    @property
    def dirty(self) -> bool:
        """True while appends wait for their fsync (group commit)."""
        return self._dirty

    def flush(self) -> None:
        """``fsync`` any appends not yet synced."""
        if self._fd is not None and self._dirty:
            self._sync(self._fd, time.monotonic())

    def close(self) -> None:
        """Flush and close; idempotent."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self._dirty:
                self._sync(fd, time.monotonic())
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._fd is None

    def _sync(self, fd: int, now: float) -> None:
        try:
            for step in self._sync_steps(fd):
                step()
        except OSError as exc:
            raise StorageError(self.path, exc) from exc
        self._synced(now)

    def _sync_steps(self, fd: int) -> list[Callable[[], None]]:
        """What makes the appends durable: the file's fsync, then (a file this
        appender created) its directory's."""
        steps: list[Callable[[], None]] = [lambda: os.fsync(fd)]
        if self._dir_unsynced:
            steps.append(lambda: fsync_dir(self.path.parent))
        return steps

    def _synced(self, now: float) -> None:
        self._dir_unsynced = False
        self._dirty = False
        self._last_sync = now

    def _require_open(self) -> int:
        if self._fd is None:
            raise ValueError(f"{self.path}: appender is closed")
        return self._fd


_POOL: ThreadPoolExecutor | None = None


def _fsync_pool() -> ThreadPoolExecutor:
    """Two threads kept for :func:`sync_together` (started on its first use):
    a thread started per fsync cost more than the fsync on a busy CPU."""
    global _POOL
    if _POOL is None:
        # lazy: only a group-committed store's flush uses it; the control
        # commands append through this module
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="prompt-runner-fsync")
    return _POOL


def sync_together(appenders: Iterable[LineAppender]) -> None:
    """Make what several appenders hold back durable, with their fsyncs in flight at once.

    A prompt's end makes its prompt log, the new log's directory entry and its
    ``progress.log`` line durable. One after another, each fsync waits for its
    own journal commit or disk cache flush (a few milliseconds each on a busy
    disk); issued together -- the caller's thread and two kept ones -- the file
    system serves them with one. The guarantee is exactly :meth:`LineAppender.flush`'s for each
    appender -- when this returns, every append made through any of them is
    durable -- only the order in which the files become durable is not fixed
    (the callers need none: each file is a record on its own). Appenders with
    nothing held back (or closed) are skipped; a single fsync runs on the
    calling thread.

    Raises:
        StorageError: an fsync failed: the first failure, naming its file, once
            every fsync has ended; appenders whose fsyncs all succeeded are clean,
            a failed one keeps its appends held back (the next flush tries again).
    """
    jobs: list[tuple[LineAppender, Callable[[], None]]] = []
    for appender in appenders:
        if appender._fd is not None and appender._dirty:
            jobs.extend((appender, step) for step in appender._sync_steps(appender._fd))
    if not jobs:
        return
    failed: dict[int, tuple[LineAppender, OSError]] = {}

    def run(index: int) -> None:
        appender, step = jobs[index]
        try:
            step()
        except OSError as exc:
            failed[index] = (appender, exc)

    if len(jobs) > 1:
        pending = []
        for index in range(1, len(jobs)):
            try:
                pending.append(_fsync_pool().submit(run, index))
            except RuntimeError:  # no thread to be had (shutting down): in turn, here
                run(index)
        run(0)
        for future in pending:
            future.result()
    else:
        run(0)
    now = time.monotonic()
    broken = {id(appender) for appender, _ in failed.values()}
    for appender in {id(a): a for a, _ in jobs}.values():
        if id(appender) not in broken:
            appender._synced(now)
    if failed:
        appender, exc = failed[min(failed)]
        raise StorageError(appender.path, exc) from exc


def read_complete_lines(path: Path) -> tuple[list[bytes], bool]:
    """Return the complete lines of ``path`` (without ``\\n``) and whether a torn tail follows.

    A missing file yields ``([], False)``.

    Raises:
        StorageError: ``path`` exists but cannot be read (or a directory on the
            way is a file).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], False
    except OSError as exc:
        raise StorageError(path, exc, doing="read") from exc
    lines = raw.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    return lines, bool(tail)


def append_line_shared(path: Path, line: bytes) -> None:
    """Append ``line`` to a file other processes append to as well, and fsync it.

    For audit files with several writers and no lock (amendments,
    interventions, a ``control`` command's entry in the control log): nothing
    is ever cut, because another writer's line may be in flight. A torn last
    line left by a crash is ended with a newline first, so the record is
    never glued to it (readers skip the fragment). One ``O_APPEND`` write.
    Creates the file and its parent directories when missing.

    Raises:
        ValueError: ``line`` does not end with ``\\n``.
        OSError: the line cannot be written or synced.
    """
    if not line.endswith(b"\n"):
        raise ValueError("a line must end with a newline")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | _O_CLOEXEC, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        write_all(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
