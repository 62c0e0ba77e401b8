"""A short child started with ``os.posix_spawn``: no ``subprocess``, no thread.

:func:`start_quick` starts the child and returns at once, so a caller can
start several (``watch``'s ``git status`` and ``git rev-list``) and do its
own work while they run; :meth:`Quick.result` then collects each one's
output and exit as a :class:`~.values.ProcResult`, exactly the result
:func:`~.complete.run` gives for the same child. Importing ``subprocess``
(with ``threading``, ``signal``, ``selectors``) costs ~8 ms of a short
command's start-up, more than the git it runs; this module imports only
``os``, ``select`` and ``time``. The committer's ``git add`` and ``git
commit`` start here too: a ``Popen`` costs ~0.3 ms of Python more per child
than this, twice per prompt.

The same rules as every other child (:mod:`prompt_runner.proc`):

* it starts in a new session (``setsid``), so it and its children share one
  process group; the deadline holds for that whole group, what the leader
  left in it when it exited is ended at once, and the group is ended when the
  caller is interrupted while it waits -- all through
  :meth:`~.group.ProcessGroup.stop`, loaded only when a group must be ended;
* stdin is ``/dev/null`` or the bytes given (written as the child reads
  them), stdout and stderr are captured whole (both pipes are read as output
  arrives, so neither can fill and stall the child);
* ``argv[0]`` is looked up on ``env["PATH"]``; a missing executable is a
  result (``missing``), never an exception; the environment is explicit.

What differs from :func:`~.complete.run`: there is no ``cwd`` (``posix_spawn``
has no directory to change to before Python 3.13's ``chdir`` action), so the
child runs in the caller's directory and a program that takes its directory
as an argument is told it that way (``git -C DIR``); and descriptors the
caller made inheritable on purpose are inherited (``subprocess`` closes every
descriptor above 2; Python makes its own non-inheritable).
"""

from __future__ import annotations

import os
import select
import time

from .values import DEFAULT_GRACE_S, EXIT_DRAIN_S, ProcResult, decode

TYPE_CHECKING = False  # typing costs import time on the watch path
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

READ_CHUNK = 1 << 16
"""Bytes read from a pipe per call (whatever is available, up to this)."""

PIPE_CHUNK = 1 << 16
"""Bytes of stdin offered to the child per write (a Linux pipe holds 64 KiB)."""


def available() -> bool:
    """Whether this platform can start a :func:`start_quick` child (``posix_spawn``
    with ``setsid``: Linux with glibc 2.26+, macOS); callers fall back to
    :func:`~.complete.run` where it cannot."""
    return hasattr(os, "posix_spawn") and hasattr(os, "POSIX_SPAWN_DUP2")


def _pidfd(pid: int) -> int:
    """A pidfd of ``pid`` (Linux 5.3+), readable once it exits; -1 where none can
    be opened (the pipes' end then marks the child's end, as before)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _which(program: str, env: Mapping[str, str] | None) -> str | None:
    """``program`` as ``execvpe`` would find it on ``env``'s ``PATH`` (a name with
    a ``/`` as given), or ``None`` when no directory has it executable."""
    if os.sep in program:
        return program
    for directory in _exec_path(env):
        path = os.path.join(directory, program)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


def _exec_path(env: Mapping[str, str] | None) -> list[str]:
    """``os.get_exec_path(env)``: the directories of ``env``'s ``PATH`` (``os.defpath``
    without one) -- without the ``warnings`` import that function makes (~0.3 ms
    of ``watch --once``); an environment with a ``b"PATH"`` key takes it as is."""
    source = os.environ if env is None else env
    try:
        has_bytes_key = b"PATH" in source  # type: ignore[comparison-overlap]
    except TypeError:  # os.environ refuses a bytes key
        has_bytes_key = False
    if has_bytes_key:
        return os.get_exec_path(env)
    path_list = source.get("PATH")
    return (os.defpath if path_list is None else path_list).split(os.pathsep)


class Quick:
    """A child :func:`start_quick` started; :meth:`result` waits for it.

    Attributes:
        pid: its pid, which is also its session and process-group id.
        argv: what was started.
    """

    def __init__(
        self,
        argv: tuple[str, ...],
        pid: int,
        pipes: tuple[int, int],
        *,
        deadline: float | None,
        grace_s: float,
        started: float,
        stdin: tuple[int, bytes] | None = None,
    ) -> None:
        self.pid = pid
        self.argv = argv
        self._pipes = pipes
        self._open = set(pipes)  # closed once at their end (a number closed twice may be another's)
        self._stdin = stdin
        """The write end of the child's stdin and the bytes still to write to it."""
        if stdin is not None:
            self._open.add(stdin[0])
        self._deadline = deadline
        self._grace_s = grace_s
        self._started = started
        self._status: int | None = None
        self._result: ProcResult | None = None

    def result(self) -> ProcResult:
        """Wait until the child has exited and both pipes are at their end, or
        the deadline passed (the group is then ended: TERM, then KILL after the
        grace); its :class:`ProcResult` (``timeout="deadline"`` when the deadline
        passed). Called again, the same result.

        Raises:
            BaseException: whatever interrupted the wait (``KeyboardInterrupt``),
                after the child's whole group was ended.
        """
        if self._result is not None:
            return self._result
        try:
            out, err, timed_out = self._collect()
        except BaseException:
            self._stop(self._grace_s)
            self._close()
            raise
        self._result = ProcResult(
            self.argv,
            os.waitstatus_to_exitcode(self._status) if self._status is not None else None,
            stdout=decode(out),
            stderr=decode(err),
            timeout="deadline" if timed_out else None,
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )
        return self._result

    def abandon(self) -> None:
        """End the child's whole group now (TERM, then KILL after the grace) and reap
        it, without its result: for a caller interrupted before it asked for one."""
        if self._result is None and self._status is None:
            self._stop(self._grace_s)
        self._close()

    def _collect(self) -> tuple[bytes, bytes, bool]:
        chunks: dict[int, list[bytes]] = {fd: [] for fd in self._pipes}
        poller = select.poll()
        for fd in self._pipes:
            poller.register(fd, select.POLLIN)
        feed_fd, feed = self._stdin if self._stdin is not None else (-1, b"")
        if feed_fd >= 0:
            poller.register(feed_fd, select.POLLOUT)
        open_fds = self._open
        exit_fd = _pidfd(self.pid)  # readable once the leader exits (-1: none to be had)
        if exit_fd >= 0:
            poller.register(exit_fd, select.POLLIN)
        drain_until: float | None = None  # set once the leader exited, pipes still open
        ended_leftovers = False
        timed_out = False
        while open_fds:
            wait_ms = self._left_ms() if not timed_out else None
            if wait_ms == 0:
                timed_out = True
                self._stop(self._grace_s)  # the group is gone: the pipes end
                if feed_fd in open_fds:
                    poller.unregister(feed_fd)
                    open_fds.discard(feed_fd)
                    os.close(feed_fd)
                continue
            if drain_until is not None:
                drain_ms = int((drain_until - time.monotonic()) * 1000) + 1
                if drain_ms <= 0:
                    if ended_leftovers:
                        break  # held by a process outside its group: stop reading
                    self._leftovers()  # they hold the pipes: end them, then read the rest
                    ended_leftovers = True
                    drain_until = time.monotonic() + EXIT_DRAIN_S
                    continue
                wait_ms = drain_ms if wait_ms is None else min(wait_ms, drain_ms)
            for fd, _ in poller.poll(wait_ms):
                if fd == exit_fd:
                    poller.unregister(exit_fd)
                    os.close(exit_fd)
                    exit_fd = -1
                    self._reaped()
                    drain_until = time.monotonic() + EXIT_DRAIN_S
                    continue
                if fd == feed_fd:
                    feed = self._feed(feed_fd, feed)
                    if not feed:  # all written, or the child closed its stdin
                        poller.unregister(feed_fd)
                        open_fds.discard(feed_fd)
                        os.close(feed_fd)
                    continue
                data = os.read(fd, READ_CHUNK)
                if data:
                    chunks[fd].append(data)
                else:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    os.close(fd)
        if exit_fd >= 0:
            os.close(exit_fd)
        self._close()  # pipes still open only when held from outside the group
        if not timed_out and not self._reaped(wait=True):
            timed_out = True  # both pipes closed, the leader still there at the deadline
            self._stop(self._grace_s)
        if self._status is None:
            _, self._status = os.waitpid(self.pid, 0)
        if not timed_out:
            self._leftovers()
        out, err = (b"".join(chunks[fd]) for fd in self._pipes)
        return out, err, timed_out

    @staticmethod
    def _feed(fd: int, data: bytes) -> bytes:
        """Write what the pipe takes of ``data`` (the fd is non-blocking); returns
        the rest, ``b""`` when done or when the child no longer reads (it exited
        or closed its stdin: what it did not read it did not want, as
        ``communicate`` treats a broken pipe)."""
        try:
            written = os.write(fd, data[:PIPE_CHUNK])
        except BlockingIOError:
            return data
        except (BrokenPipeError, OSError):
            return b""
        return data[written:]

    def _left_ms(self) -> int | None:
        """Milliseconds to the deadline (rounded up; 0 once passed), ``None`` without one."""
        if self._deadline is None:
            return None
        left = self._deadline - time.monotonic()
        return int(left * 1000) + 1 if left > 0 else 0

    def _reaped(self, *, wait: bool = False) -> bool:
        """Whether the leader has exited and been reaped (``wait``: wait for that
        until the deadline, on a pidfd where there is one)."""
        if self._status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0 and wait:
                self._wait_exit()
                if self._status is not None:
                    return True
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:
                return False
            self._status = status
        return True

    def _wait_exit(self) -> None:
        """Block until the leader exits or the deadline passes (at once without a pidfd)."""
        try:
            fd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            if self._deadline is None:
                _, self._status = os.waitpid(self.pid, 0)
            return
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            left = self._left_ms()
            poller.poll(None if left is None else min(left, 2**31 - 1))
        finally:
            os.close(fd)

    def _leftovers(self) -> None:
        """End at once whatever the exited leader left in its group (as :func:`.run` does)."""
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            return  # the common case: nothing left, and nothing more to load
        except PermissionError:
            pass
        self._stop(0)

    def _stop(self, grace_s: float) -> None:
        # lazy: signal and the group's escalation load only when a group must be ended
        from .group import ProcessGroup

        ProcessGroup(self.pid, exited=self._reaped).stop(grace_s=grace_s)
        if self._status is None:
            _, self._status = os.waitpid(self.pid, 0)

    def _close(self) -> None:
        while self._open:
            fd = self._open.pop()
            try:  # noqa: SIM105 -- contextlib is one more import on the watch path
                os.close(fd)
            except OSError:
                pass


def start_quick(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    timeout_ms: int | None = None,
    grace_s: float = DEFAULT_GRACE_S,
    stdin: bytes | None = None,
    restore_signals: bool = False,
) -> Quick | ProcResult:
    """Start ``argv`` (no shell) in a new session, output piped.

    Args:
        argv: program and arguments; ``argv[0]`` is looked up on ``env["PATH"]``.
        env: the full environment (``None`` = the caller's own).
        timeout_ms: deadline in milliseconds for the whole process group,
            counted from now; ``None`` = no deadline.
        grace_s: seconds between SIGTERM and SIGKILL when the group is ended.
        stdin: bytes fed to the child's stdin (written as it reads them, while
            its output is read, then closed); ``None`` = stdin is ``/dev/null``.
        restore_signals: start the child with ``SIGPIPE`` and ``SIGXFSZ`` at
            their default actions (Python ignores them; ``subprocess`` restores
            them the same way): for a child that runs other programs -- a
            ``git commit`` runs the user's hooks, which must see the signals
            as from a shell.

    Returns:
        The running :class:`Quick` (call :meth:`Quick.result`), or a
        :class:`ProcResult` with ``returncode=None`` and ``start_error``
        (``missing`` for an executable found nowhere on the ``PATH``) when it
        could not start. Never raises ``OSError``.
    """
    args = tuple(str(a) for a in argv)
    started = time.monotonic()
    program = _which(args[0], env)
    if program is None:
        return ProcResult(
            args, None, missing=True, start_error=f"No such file or directory: {args[0]}"
        )
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if stdin is not None else (-1, -1)
    stdin_action = (
        (os.POSIX_SPAWN_DUP2, in_r, 0)
        if stdin is not None
        else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
    )
    defaults: tuple[int, ...] = ()
    if restore_signals:
        import signal  # lazy: only a child that runs others' programs needs it

        defaults = (signal.SIGPIPE, signal.SIGXFSZ)
    try:
        pid = os.posix_spawn(
            program,
            args,
            os.environ if env is None else env,
            file_actions=[
                stdin_action,
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
            setsid=True,
            setsigdef=defaults,
        )
    except OSError as exc:
        for fd in (out_r, err_r, in_w):
            if fd >= 0:
                os.close(fd)
        missing = isinstance(exc, FileNotFoundError)
        return ProcResult(
            args,
            None,
            missing=missing,
            start_error=f"{exc.strerror or exc}: {exc.filename or args[0]}",
        )
    finally:
        for fd in (out_w, err_w, in_r):
            if fd >= 0:
                os.close(fd)
    fed = None
    if stdin is not None:
        os.set_blocking(in_w, False)
        fed = (in_w, stdin)
    deadline = None if timeout_ms is None else started + timeout_ms / 1000.0
    return Quick(
        args, pid, (out_r, err_r), deadline=deadline, grace_s=grace_s, started=started, stdin=fed
    )
