"""A long-lived child (an agent CLI) whose stdout is read line by line, under time bounds.

:func:`spawn` starts the child and returns a :class:`Spawned` handle at once.
Two reader threads take its stdout (whole lines, decoded per read) and the
tail of its stderr; a watchdog thread enforces the request's bounds (the run
deadline, and the idle bound: no output on either stream for that long),
ends the group when one passes, reaps whatever the leader left in its group
when it exits, and then records the :class:`ProcResult` and hands it to
``on_exit``. Interrupting the child (SIGINT, then TERM and KILL if it does not
end) and terminating it go through :meth:`ProcessGroup.stop` like everything
else. A child that could not start is a handle that has already ended, its
result saying why.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .complete import READ_CHUNK, write_stdin
from .group import ProcessGroup
from .request import (
    DEFAULT_GRACE_S,
    INTERRUPT_GRACE_S,
    ProcRequest,
    ProcResult,
    Timeout,
    start,
)

TICK_S = 0.05
"""Seconds between the watchdog's checks of the bounds."""

LEFTOVER_GRACE_S = 0.5
"""Seconds given to what an exited leader left in its group, between TERM and KILL."""

READER_JOIN_S = 5.0
"""Seconds the watchdog waits for the readers once the group is gone."""

Lines = Callable[[list[str]], None]


class Spawned:
    """A long-lived child in its own process group (see :func:`spawn`).

    Attributes:
        popen: the underlying process (``None`` when it never started).
        stderr_tail: the last lines of stderr (bounded), for diagnostics.
        result: how it ended, once it has (see :meth:`wait`).
    """

    def __init__(
        self,
        request: ProcRequest,
        deliver: Lines,
        *,
        stderr_tail_lines: int,
        on_exit: Callable[[ProcResult], None] | None,
    ) -> None:
        self.request = request
        self.stderr_tail: list[str] = []
        self.result: ProcResult | None = None
        self.popen: subprocess.Popen[bytes] | None = None
        self._deliver = deliver
        self._tail_lines = stderr_tail_lines
        self._on_exit = on_exit
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._interrupted = False
        self._terminated = False
        self._timeout: Timeout | None = None
        self._started = self._last_output = time.monotonic()
        started = start(request)
        if isinstance(started, ProcResult):
            self._end(started)
            return
        self.popen = popen = started
        self._group = ProcessGroup(popen.pid, exited=lambda: popen.poll() is not None)
        self._readers = [
            threading.Thread(target=target, daemon=True)
            for target in (self._read_stdout, self._read_stderr)
        ]
        for thread in self._readers:
            thread.start()
        # The bounds hold from here on, also for a child that never reads its stdin.
        threading.Thread(target=self._watch, daemon=True, name="proc-watchdog").start()
        write_stdin(popen, request.stdin_text)

    @property
    def pid(self) -> int | None:
        """The child's pid, which is also its process-group id (``None`` if it never started)."""
        return self.popen.pid if self.popen is not None else None

    def poll(self) -> int | None:
        """Exit status, or ``None`` while running (or when it never started)."""
        return self.popen.poll() if self.popen is not None else None

    def wait(self, timeout_s: float | None = None) -> ProcResult | None:
        """Wait up to ``timeout_s`` seconds (``None`` = until it ended) for the result.

        Returns the :class:`ProcResult` once the child has exited, its group is
        gone, its output has been read and ``on_exit`` has run; ``None`` while
        it still runs.
        """
        if not self._done.wait(timeout_s):
            return None
        return self.result

    def interrupt(self) -> None:
        """End the current turn: SIGINT to the group, TERM and KILL if it does not end.

        Returns at once (the escalation runs on its own thread, the graces of
        the request apply); a second call, or one after the child ended, does
        nothing.
        """
        with self._lock:
            if self.popen is None or self.result is not None or self._interrupted:
                return
            self._interrupted = True
        threading.Thread(
            target=self._group.stop,
            kwargs={
                "grace_s": self.request.grace_s,
                "interrupt_grace_s": self.request.interrupt_grace_s,
            },
            daemon=True,
            name="proc-interrupt",
        ).start()

    def terminate(self, grace_s: float | None = None) -> None:
        """End the whole group now (TERM, then KILL after ``grace_s`` seconds) and reap it.

        ``grace_s`` defaults to the request's. Blocks until the result is
        recorded (or ``grace_s`` + 10 s have passed).
        """
        popen = self.popen
        if popen is None:
            return
        grace = self.request.grace_s if grace_s is None else grace_s
        with self._lock:
            if self.result is None:
                self._terminated = True
        self._group.stop(grace_s=grace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=grace + 5)
        self._done.wait(grace + 10)

    # -- threads ----------------------------------------------------------------------

    def _read_stdout(self) -> None:
        # Whatever the pipe holds is read at once and decoded per batch of whole
        # lines (a newline byte never sits inside a UTF-8 sequence), not per line.
        assert self.popen is not None and isinstance(self.popen.stdout, io.BufferedReader)
        stdout = self.popen.stdout
        read, deliver, clock = stdout.read1, self._deliver, time.monotonic
        partial: list[bytes] = []  # an unfinished last line, in pieces
        with stdout:
            while chunk := read(READ_CHUNK):
                self._last_output = clock()
                cut = chunk.rfind(b"\n")
                if cut < 0:
                    partial.append(chunk)
                    continue
                whole = b"".join([*partial, chunk[:cut]]) if partial else chunk[:cut]
                partial = [chunk[cut + 1 :]] if cut + 1 < len(chunk) else []
                text = whole.decode("utf-8", errors="replace")
                deliver([line.rstrip("\r") for line in text.split("\n")])
            if partial:
                deliver([b"".join(partial).decode("utf-8", errors="replace").rstrip("\r")])

    def _read_stderr(self) -> None:
        assert self.popen is not None and self.popen.stderr is not None
        tail = self.stderr_tail
        with self.popen.stderr:
            for raw in self.popen.stderr:
                self._last_output = time.monotonic()
                tail.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
                if len(tail) > self._tail_lines:
                    del tail[0]

    def _overdue(self, now: float) -> Timeout | None:
        request = self.request
        if request.deadline_ms is not None and now - self._started >= request.deadline_ms / 1000:
            return "deadline"
        if request.idle_ms is not None and now - self._last_output >= request.idle_ms / 1000:
            return "idle"
        return None

    def _watch(self) -> None:
        popen = self.popen
        assert popen is not None
        while popen.poll() is None:
            self._timeout = self._overdue(time.monotonic())
            if self._timeout is not None:
                self._group.stop(grace_s=self.request.grace_s)
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=TICK_S)
        # Reap anything the child left behind in its process group first: a
        # grandchild holding the stdout pipe open would otherwise stall the reader.
        self._group.stop(grace_s=LEFTOVER_GRACE_S)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=self.request.grace_s + 5)
        for thread in self._readers:
            thread.join(timeout=READER_JOIN_S)
        with self._lock:
            interrupted, terminated = self._interrupted, self._terminated
        self._end(
            ProcResult(
                self.request.argv,
                popen.poll(),
                stderr="\n".join(self.stderr_tail),
                timeout=self._timeout,
                interrupted=interrupted,
                terminated=terminated,
                duration_ms=int((time.monotonic() - self._started) * 1000),
            )
        )

    def _end(self, result: ProcResult) -> None:
        with self._lock:
            self.result = result
        try:
            if self._on_exit is not None:
                self._on_exit(result)
        finally:
            self._done.set()


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    on_line: Callable[[str], None] | None = None,
    on_batch: Lines | None = None,
    stdin_text: str | None = None,
    stderr_tail_lines: int = 200,
    deadline_ms: int | None = None,
    idle_ms: int | None = None,
    grace_s: float = DEFAULT_GRACE_S,
    interrupt_grace_s: float = INTERRUPT_GRACE_S,
    on_exit: Callable[[ProcResult], None] | None = None,
) -> Spawned:
    """Start ``argv`` in its own process group and stream its stdout lines.

    Args:
        argv: program and arguments (no shell).
        cwd: working directory.
        env: the full environment of the child.
        on_line: called on a reader thread with each stdout line (without the
            newline, UTF-8 decoded with replacement).
        on_batch: instead of ``on_line``: called with the list of whole lines
            each read of the pipe delivered (one call per read, in order).
        stdin_text: written to stdin then closed (stdin is /dev/null otherwise).
        stderr_tail_lines: how many trailing stderr lines to keep.
        deadline_ms: the whole run's bound in ms (``None`` = none).
        idle_ms: bound on the time without output on stdout or stderr, in ms
            (``None`` = none).
        grace_s: seconds between SIGTERM and SIGKILL.
        interrupt_grace_s: seconds between SIGINT and SIGTERM on :meth:`Spawned.interrupt`.
        on_exit: called once with the :class:`ProcResult` when the child has
            ended and its output has been read (on the watchdog thread), or
            at once, before :func:`spawn` returns, when it could not start.

    Returns:
        The handle; a child that could not start (``start_error``, ``missing``)
        is an already-ended handle, never an exception.

    Raises:
        ValueError: neither ``on_line`` nor ``on_batch`` was given.
    """
    if on_batch is not None:
        deliver = on_batch
    elif on_line is not None:
        each = on_line

        def deliver(lines: list[str]) -> None:
            for line in lines:
                each(line)

    else:
        raise ValueError("spawn needs on_line or on_batch")
    request = ProcRequest(
        tuple(str(a) for a in argv),
        Path(cwd),
        env,
        stdin_text,
        deadline_ms=deadline_ms,
        idle_ms=idle_ms,
        grace_s=grace_s,
        interrupt_grace_s=interrupt_grace_s,
    )
    return Spawned(request, deliver, stderr_tail_lines=stderr_tail_lines, on_exit=on_exit)
