"""Atomic whole-file writes and checked JSON reads.

Every file that is *replaced* rather than appended to (``state.json``,
``runs/current.json``, ``control/snapshot.json``...) is written here:

1. the bytes go to a temporary file in the same directory, named
   ``.<name>.tmp.<pid>.<random hex>`` (same file system, so the rename is atomic);
2. the temporary file is flushed and ``fsync``-ed;
3. ``os.replace`` puts it in place -- a reader sees the old or the new complete
   document, never a mix;
4. the directory is ``fsync``-ed so the rename itself survives a power loss.

On any error the temporary file is removed before the error propagates. A
process killed with SIGKILL between steps 1 and 3 can leave a temporary file
behind; :func:`remove_stale_temps` deletes those whose writer pid is gone.

Schema versions: every JSON *object* Prompt Runner writes carries
``"schema_version": 1`` at its top level. Adding it is the caller's job (the
writer here stores whatever it is given), so that the owner of a format also
owns its version.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from prompt_runner.errors import StateError, StorageError
from prompt_runner.state.untrusted_json import JsonNestingError, loads

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1
"""The ``schema_version`` every JSON object written by Prompt Runner carries."""

_TMP_MARK = ".tmp."
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def fsync_dir(path: Path) -> None:
    """``fsync`` the directory ``path`` so renames and creations inside it are durable.

    A no-op on platforms that cannot open a directory (Windows) or that reject
    ``fsync`` on one (``EINVAL``); other ``OSError`` propagate.
    """
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(path, flags)
    except (PermissionError, IsADirectoryError):  # pragma: no cover - Windows
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def temp_name(path: Path) -> Path:
    """Return a fresh temporary sibling of ``path``: ``.<name>.tmp.<pid>.<hex>``."""
    return path.with_name(f".{path.name}{_TMP_MARK}{os.getpid()}.{os.urandom(4).hex()}")


def is_temp_name(name: str) -> bool:
    """True for a dotfile name a writer uses while writing: ``.<name>.tmp.<pid>.<hex>``
    (:func:`temp_name`) or an older ``.<name>.tmp``."""
    return name.startswith(".") and (_TMP_MARK in name or name.endswith(".tmp"))


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (looping over short writes).

    Raises:
        OSError: a write failed (what was written stays written).
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def create_file(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Create ``path`` exclusively and write ``data`` to it, fsynced unless ``durable=False``.

    A file that could not be written whole is removed again, so a reader
    never meets a partial one. The directory is not fsynced (callers that
    rename or link the file fsync the directory that names it).

    Raises:
        FileExistsError: ``path`` exists (it is left alone).
        OSError: the file cannot be created or written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o666)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def write_bytes_atomic(path: Path, data: bytes, *, durable: bool = True) -> int:
    """Replace ``path`` with ``data`` atomically and durably (see module doc).

    Creates missing parent directories. Returns the number of bytes written.
    ``durable=False`` skips both fsyncs: still atomic for every reader (a whole
    old or new file), but a power loss may lose the update -- for derived
    files that are rebuilt from a record of truth (``state.json``).

    Raises:
        StorageError: the write failed (read-only or full file system, a
            directory on the way that is a file...); an ``OSError`` naming
            ``path`` and the cause. ``path`` is untouched and no temporary file
            is left.
    """
    tmp = temp_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        create_file(tmp, data, durable=durable)
    except StorageError:
        raise
    except OSError as exc:
        raise StorageError(path, exc) from exc
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, StorageError):
            raise StorageError(path, exc) from exc
        raise
    if durable:
        try:
            fsync_dir(path.parent)
        except OSError as exc:
            raise StorageError(path.parent, exc) from exc
    return len(data)


_DEFERRED: dict[str, DeferredReplace] = {}
"""The deferred writers of this process by absolute path (:func:`wait_deferred`)."""
_AT_EXIT = False  # _flush_all is registered with atexit


def wait_deferred(path: Path) -> None:
    """Return once the newest bytes handed to a :class:`DeferredReplace` of ``path``
    in this process are on disk (at once when it has none); never raises.

    :func:`read_json` calls it, so a reader in the writer's own process never
    sees an older file than the one handed last (a write error is the writer's
    to report: its next :meth:`DeferredReplace.replace` or
    :meth:`DeferredReplace.flush` raises it).
    """
    writer = _DEFERRED.get(os.path.abspath(path))
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.flush(report=False)


class DeferredReplace:
    """Replaces one derived file (``durable=False``) from a kept writer thread.

    For a file that is a view, rewritten often and never fsynced (the control
    snapshot): :meth:`replace` encodes nothing and waits for nothing -- it
    hands the bytes over and returns, so the kernel's work for the rename (on
    ext4, ``auto_da_alloc`` allocates and starts writing the new file's blocks
    when it replaces an existing one) runs while the caller goes on.

    Rules:

    * Newest wins: the thread always writes the last bytes handed over; bytes
      replaced before the thread took them are never written (each would be
      replaced at once). The file never goes back to an older content, and
      every reader still sees a whole old or new file (:func:`write_bytes_atomic`).
    * A reader in this process waits for the newest bytes first
      (:func:`read_json` calls :func:`wait_deferred`); another process sees the
      file as a view that may lag the caller by the write in progress.
    * :meth:`flush` waits until the newest bytes are on disk, :meth:`close` also
      ends the thread (a closed writer restarts its thread on the next
      :meth:`replace`). The thread is a daemon; an interpreter that exits with
      bytes not yet written writes them at exit (``atexit``).
    * A failed write (a full disk, a directory removed) is kept and raised,
      once, by the next :meth:`replace` or :meth:`flush`; the file keeps its
      last content.

    Args:
        path: the file replaced.
    """

    def __init__(self, path: Path) -> None:
        import threading  # lazy: only a runner writes deferred; the status paths read

        self.path = Path(path)
        self._key = os.path.abspath(path)
        self._cond = threading.Condition()
        self._thread_type = threading.Thread
        self._thread: threading.Thread | None = None
        self._pending: bytes | None = None
        self._handed = 0  # how many replace() calls handed bytes over
        self._done = 0  # the count of the newest bytes written (or failed)
        self._error: BaseException | None = None
        self._closing = False

    def replace(self, data: bytes) -> None:
        """Hand ``data`` over to be written as the file's new content; returns at once.

        Raises:
            StorageError: an earlier write failed (it is raised once; ``data`` is
                still handed over).
        """
        with self._cond:
            error, self._error = self._error, None
            self._pending = data
            self._handed += 1
            if self._thread is None:
                self._start()
            self._cond.notify_all()
        if error is not None:
            raise error

    def flush(self, *, report: bool = True) -> None:
        """Wait until the newest bytes handed over are written (at once when they are).

        Raises:
            StorageError: a write failed since the last report (only with
                ``report=True``; ``report=False`` leaves it for the next call).
        """
        with self._cond:
            while self._done < self._handed and self._thread is not None:
                self._cond.wait()
            if not report:
                return
            error, self._error = self._error, None
        if error is not None:
            raise error

    def close(self) -> None:
        """:meth:`flush`, then end the thread; idempotent.

        Raises:
            StorageError: as :meth:`flush` (the thread is ended all the same).
        """
        try:
            self.flush()
        finally:
            with self._cond:
                thread, self._closing = self._thread, True
                self._cond.notify_all()
            if thread is not None:
                thread.join()
            with self._cond:
                self._thread = None
                self._closing = False
                if _DEFERRED.get(self._key) is self:
                    del _DEFERRED[self._key]

    def _start(self) -> None:
        global _AT_EXIT
        if not _AT_EXIT:
            import atexit  # lazy: with the first deferred writer of the process

            atexit.register(_flush_all)
            _AT_EXIT = True
        _DEFERRED[self._key] = self
        self._thread = self._thread_type(
            target=self._run, name=f"replace {self.path.name}", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        cond = self._cond
        while True:
            with cond:
                while self._pending is None and not self._closing:
                    cond.wait()
                if self._pending is None:
                    return
                data, count, self._pending = self._pending, self._handed, None
            try:
                write_bytes_atomic(self.path, data, durable=False)
                error: BaseException | None = None
            except BaseException as exc:  # kept for the caller's next call
                error = exc
            with cond:
                self._done = count
                if error is not None:
                    self._error = error
                cond.notify_all()


def _flush_all() -> None:
    for writer in list(_DEFERRED.values()):
        with contextlib.suppress(Exception):
            writer.flush(report=False)


def write_text_atomic(path: Path, text: str) -> int:
    """Replace ``path`` with ``text`` (UTF-8) atomically; returns bytes written."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def encode_json(obj: Any) -> bytes:
    """Encode ``obj`` as the pretty UTF-8 JSON document form used on disk.

    Raises:
        TypeError / ValueError: ``obj`` is not JSON-safe (NaN and infinities are refused).
    """
    return (json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def write_json_atomic(path: Path, obj: Any, *, durable: bool = True) -> int:
    """Replace ``path`` with ``obj`` as indented JSON, atomically; returns bytes written.

    ``obj`` is encoded before anything touches the disk, so an unencodable object
    raises ``TypeError``/``ValueError`` and leaves no file behind. Objects should
    carry ``"schema_version": 1`` (see module doc).
    """
    return write_bytes_atomic(path, encode_json(obj), durable=durable)


def read_json(path: Path, *, fix: str = "restore it from a backup, or move it aside") -> Any:
    """Read and decode the JSON document at ``path``.

    Args:
        fix: what the error for a file that is not valid JSON tells the user
            to do (the owner of a format knows how to recover from it).

    Raises:
        FileNotFoundError: ``path`` does not exist (callers decide what absence means).
        StateError: the file exists but cannot be read or is not valid UTF-8 JSON
            (nesting too deep to decode included, see
            :mod:`prompt_runner.state.untrusted_json`); the message names the
            file and says how to recover.
    """
    if _DEFERRED:
        wait_deferred(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StateError(
            f"cannot be read ({exc.strerror or exc})",
            file=path,
            fix="check its permissions",
        ) from exc
    try:
        return loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, JsonNestingError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            where = f" at line {exc.lineno}"
        else:
            where = f" ({exc})" if isinstance(exc, JsonNestingError) else ""
        raise StateError(
            f"is not valid JSON{where}",
            file=path,
            fix=fix,
        ) from exc


def read_json_object(
    path: Path, *, fix: str = "restore it from a backup, or move it aside"
) -> dict[str, Any] | None:
    """Read the JSON object at ``path``; ``None`` when the file does not exist.

    Raises:
        StateError: the file cannot be read, is not valid JSON, or holds
            something other than an object; the message names the file and ``fix``.
    """
    try:
        value = read_json(path, fix=fix)
    except FileNotFoundError:
        return None
    if not isinstance(value, dict):
        raise StateError("is not a JSON object", file=path, fix=fix)
    return value


def remove_stale_temps(directory: Path) -> list[Path]:
    """Delete temporary files left in ``directory`` by writers that no longer run.

    Only names of the shape ``.<name>.tmp.<pid>.<hex>`` whose ``pid`` is not a live
    process are removed; a live writer's file is never touched. Returns the
    removed paths. A missing directory yields ``[]``.
    """
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except FileNotFoundError:
        return removed
    for entry in entries:
        pid = _temp_owner(entry.name)
        if pid is None or _pid_exists(pid):
            continue
        with contextlib.suppress(FileNotFoundError):
            entry.unlink()
            removed.append(entry)
    return removed


def _temp_owner(name: str) -> int | None:
    if not name.startswith(".") or _TMP_MARK not in name:
        return None
    tail = name.rsplit(_TMP_MARK, 1)[1]
    pid_text, _, rand = tail.partition(".")
    if not pid_text.isdigit() or not rand:
        return None
    return int(pid_text)


def _pid_exists(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True
