"""The run lock ``.prompt_runner/run.pid`` and process identities (SPEC 6, catalog C1/J2).

File format: ``<pid> <starttime>\\n``, where ``starttime`` is field 22 of
``/proc/<pid>/stat`` (clock ticks since boot). The pair names one process for
its whole life: a recycled pid has another start time, so it never reads as the
original run. A legacy file holding only ``<pid>`` is honoured as alive while
that pid lives (refusing is the safe side).

Where ``/proc`` is missing (macOS, BSD), the start time is
``int(psutil.Process(pid).create_time() * 100)`` -- centiseconds since the epoch.
It is not comparable with a Linux tick count, but a pid file is only ever read
on the machine that wrote it.

Lifecycle: :meth:`RunLock.acquire` publishes the file atomically; the file
exists exactly while the lock is held. It is removed by :meth:`RunLock.release`
(call it in ``finally``, or use the lock as a context manager) and, as a last
resort, by an ``atexit`` hook registered on acquire. Neither runs on SIGKILL or
a power loss: the file is then *stale*, and the next :meth:`RunLock.acquire`
recognises that (dead pid, or a live pid with another start time) and takes the
lock over. Default SIGTERM handling also skips ``atexit``; the CLI should turn
SIGTERM into ``SystemExit`` so the ``finally`` runs.
"""

from __future__ import annotations

import atexit
import errno
import os

from prompt_runner.errors import InfrastructureError, LockHeldError, StorageError
from prompt_runner.proc.values import Frozen
from prompt_runner.state._closing import Holding

TYPE_CHECKING = False  # pathlib costs ~5 ms of watch's start-up (it reads run.pid as text)
if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

_PROC = "/proc"
_DEAD_STATES = frozenset({"Z", "X", "x"})
_MAX_TAKEOVERS = 50


class PidIdentity(Frozen):
    """One process, named by pid and start time (a frozen value: a plain class,
    not a dataclass, so ``watch``'s start-up does not import ``dataclasses``).

    Attributes:
        pid: the OS process id.
        start_time: ``/proc/<pid>/stat`` field 22 (clock ticks since boot), or
            ``None`` for a legacy pid file without it.
    """

    _fields = ("pid", "start_time")
    __slots__ = _fields
    pid: int
    start_time: int | None

    def __init__(self, pid: int, start_time: int | None) -> None:
        object.__setattr__(self, "pid", pid)
        object.__setattr__(self, "start_time", start_time)

    def render(self) -> str:
        """The pid-file text: ``"<pid> <start_time>\\n"`` (or ``"<pid>\\n"`` if legacy)."""
        if self.start_time is None:
            return f"{self.pid}\n"
        return f"{self.pid} {self.start_time}\n"


def parse_pid_text(text: str) -> PidIdentity | None:
    """Parse pid-file text; ``None`` for anything but ``<pid>[ <start>]``."""
    parts = text.split()
    if not 1 <= len(parts) <= 2 or not all(p.isascii() and p.isdigit() for p in parts):
        return None
    pid = int(parts[0])
    if pid <= 0:
        return None
    start = int(parts[1]) if len(parts) == 2 else None
    return PidIdentity(pid, start)


def read_pid_file(path: Path | str) -> PidIdentity | None:
    """Read a pid file (a path or its text); ``None`` when it is missing,
    unreadable or garbage. Never raises."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (OSError, ValueError):
        return None
    try:
        return parse_pid_text(raw.decode("ascii"))
    except UnicodeDecodeError:
        return None


def parse_proc_stat(text: str) -> tuple[str, int] | None:
    """Return ``(state, starttime)`` from the text of ``/proc/<pid>/stat``.

    The command name (field 2) is in parentheses and may itself contain spaces
    and parentheses, so the fields are split after the *last* ``)``. Returns
    ``None`` if the text does not have that shape.
    """
    close = text.rfind(")")
    if close < 0:
        return None
    fields = text[close + 1 :].split()
    # fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    if len(fields) < 20 or not fields[19].isdigit():
        return None
    return fields[0], int(fields[19])


def _proc_available() -> bool:
    return os.path.exists(f"{_PROC}/self/stat")


def _proc_stat(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"{_PROC}/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return parse_proc_stat(text)


def process_start_time(pid: int) -> int | None:
    """Return the start time of live process ``pid``, or ``None`` if it is not alive.

    Linux: ``/proc/<pid>/stat`` field 22; a zombie (``Z``) or dead (``X``)
    process counts as not alive. Elsewhere: psutil (see module doc).
    """
    if pid <= 0:
        return None
    if _proc_available():
        stat = _proc_stat(pid)
        if stat is None or stat[0] in _DEAD_STATES:
            return None
        return stat[1]
    return _psutil_start_time(pid)  # pragma: no cover - non-Linux


def _psutil_start_time(pid: int) -> int | None:  # pragma: no cover - non-Linux
    import psutil

    try:
        process = psutil.Process(pid)
        if process.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            return None
        return int(process.create_time() * 100)
    except (psutil.Error, OSError):
        return None


def current_identity() -> PidIdentity:
    """The identity of this process (start time read the same way as for others)."""
    pid = os.getpid()
    return PidIdentity(pid, process_start_time(pid))


def identity_alive(ident: PidIdentity) -> bool:
    """True if ``ident`` names a live process.

    Alive means: the pid runs (not a zombie) AND either the identity has no
    start time (legacy file: assume alive, to be safe) or it equals the live
    process's start time. ``<live pid> 0`` is therefore *not* alive.
    """
    live_start = process_start_time(ident.pid)
    if live_start is None:
        return False
    return ident.start_time is None or ident.start_time == live_start


class RunLock(Holding):
    """The exclusive run lock, held through the pid file at ``path``.

    Args:
        path: the pid file, normally ``<packet>/.prompt_runner/run.pid``.

    Use ``with RunLock(path):`` or pair :meth:`acquire` with :meth:`release` in
    ``finally``. Not re-entrant.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._held: PidIdentity | None = None

    @property
    def held(self) -> bool:
        """True between a successful :meth:`acquire` and :meth:`release`."""
        return self._held is not None

    def acquire(self) -> None:
        """Take the lock, or fail because a live run holds it.

        The pid file is published atomically: our identity is written to a
        temporary file which is then hard-linked to ``path`` (exclusive creation
        like ``O_CREAT|O_EXCL``, but a reader never sees an empty or half-written
        file). Starters serialise on an ``flock`` of the directory while they
        inspect and replace a stale file, and a stale file is renamed aside and
        compared byte for byte before it is deleted, so two racing starters never
        both win.

        Raises:
            LockHeldError: a live process holds the lock (exit 3); the pid file is
                left byte-identical.
            InfrastructureError: the file could not be created or a stale file
                could not be taken over.
        """
        if self._held is not None:
            raise InfrastructureError(f"{self.path}: this run already holds the lock")
        me = current_identity()
        payload = me.render().encode("ascii")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(self.path.parent, exc, doing="created") from exc
        with _DirGuard(self.path.parent):
            for _ in range(_MAX_TAKEOVERS):
                if self._publish(payload):
                    self._held = me
                    atexit.register(self.release)
                    return
                try:
                    seen = self.path.read_bytes()
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise InfrastructureError(
                        f"{self.path}: cannot read the pid file ({exc})"
                    ) from exc
                ident = _parse_bytes(seen)
                if ident is not None and identity_alive(ident):
                    raise LockHeldError(self.path, ident.pid)
                self._remove_stale(seen)
        raise InfrastructureError(
            f"{self.path}: could not take over a stale pid file; remove it if no run is active"
        )

    def release(self) -> None:
        """Remove the pid file if it still holds our identity; idempotent.

        Does nothing in a forked child (only the process that acquired releases),
        and never removes a file another run wrote after ours vanished.
        """
        me = self._held
        if me is None or me.pid != os.getpid():
            return
        self._held = None
        atexit.unregister(self.release)
        # lazy: a reader of run.pid (watch, status) loads neither; only a lock's writes do
        import contextlib

        from prompt_runner.state.atomic import fsync_dir

        with contextlib.suppress(OSError), _DirGuard(self.path.parent):
            if self.path.read_bytes() == me.render().encode("ascii"):
                self.path.unlink()
                fsync_dir(self.path.parent)

    def _publish(self, payload: bytes) -> bool:
        """Create ``path`` holding ``payload`` unless it exists; True when created."""
        # lazy: a reader of run.pid (watch, status) loads neither; only a lock's writes do
        import contextlib

        from prompt_runner.state.atomic import fsync_dir, temp_name

        tmp = temp_name(self.path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise
                return self._publish_exclusive(payload)  # no hard links on this fs
        except OSError as exc:
            raise StorageError(self.path, exc, doing="created") from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        fsync_dir(self.path.parent)
        return True

    def _publish_exclusive(self, payload: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def _remove_stale(self, seen: bytes) -> None:
        """Delete the pid file only if it still holds exactly ``seen``."""
        # lazy: a reader of run.pid (watch, status) loads neither; only a lock's writes do
        import contextlib

        from prompt_runner.state.atomic import fsync_dir, temp_name

        aside = temp_name(self.path.with_name(self.path.name + ".stale"))
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise InfrastructureError(f"{self.path}: cannot move a stale pid file ({exc})") from exc
        try:
            if aside.read_bytes() == seen:
                return
            # Someone replaced it between our read and our rename: put it back.
            try:
                os.link(aside, self.path)
            except FileExistsError as exc:
                raise InfrastructureError(
                    f"{self.path}: the pid file changed while it was being taken over; run again"
                ) from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(aside)
            fsync_dir(self.path.parent)


def _parse_bytes(raw: bytes) -> PidIdentity | None:
    try:
        return parse_pid_text(raw.decode("ascii"))
    except UnicodeDecodeError:
        return None


class _DirGuard:
    """An exclusive ``flock`` on a directory for the duration of a ``with`` block.

    Serialises starters of the same packet while they inspect and replace the
    pid file. The kernel drops the flock when its holder dies, so it can never
    go stale. A no-op where ``fcntl`` is unavailable.
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._fd: int | None = None

    def __enter__(self) -> _DirGuard:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return self
        fd = os.open(self._directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            return self  # file systems without flock: the rename-and-compare still holds
        self._fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None
