"""Run a child to completion: captured output (git) or streamed output (verify commands).

The deadline holds for the whole process group (:meth:`ProcessGroup.stop` at
the deadline), whatever the leader left behind when it exited is ended too,
and the group is ended when the caller is interrupted.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from .group import ProcessGroup
from .request import DEFAULT_GRACE_S, ProcRequest, ProcResult, decode, start
from .values import EXIT_DRAIN_S

READ_CHUNK = 1 << 16
"""Bytes read from a streaming child's pipe per call (whatever is available, up to this)."""

_READ_WAKE_MS = 100
"""How often (ms) a streaming reader with nothing to read checks whether it was told
to stop (a pipe held open by a process outside the child's group)."""

OutputSink = Callable[[str, bytes], None]
"""Receives ``("stdout" | "stderr", chunk)`` as a :func:`run` child writes (one call at a time)."""

Registrar = Callable[[int], Callable[[], None] | None]
"""Called with a started child's pid (its process-group id); returns the undo, or ``None``."""


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    timeout_ms: int | None = None,
    stdin_text: str | None = None,
    grace_s: float = DEFAULT_GRACE_S,
    on_output: OutputSink | None = None,
    on_start: Registrar | None = None,
) -> ProcResult:
    """Run ``argv`` to completion (no shell) and capture or stream its output.

    Args:
        argv: program and arguments; ``argv[0]`` is looked up on ``env["PATH"]``.
        cwd: working directory.
        env: the full environment (``None`` = inherit the runner's).
        timeout_ms: deadline in milliseconds for the whole process group;
            ``None`` = no deadline.
        stdin_text: text fed to stdin (stdin is /dev/null otherwise).
        grace_s: seconds between SIGTERM and SIGKILL on timeout.
        on_output: instead of capturing, hand every chunk of stdout and
            stderr to this sink as it arrives (then ``ProcResult.stdout`` and
            ``stderr`` are empty): output of any size in bounded memory.
        on_start: called with the child's pid once it runs (e.g. to register
            it in the orphan registry); the callable it returns is called when
            the child is gone.

    Without ``on_output`` the whole output is captured (callers such as git
    need all of it).

    If the caller is interrupted while the child runs (Ctrl-C's
    ``KeyboardInterrupt``, a SIGTERM the CLI turned into one, any exception),
    the child's whole process group is ended (TERM, then KILL) before the
    exception propagates: a child in its own session never sees the
    terminal's Ctrl-C, so nothing else would stop it.

    Returns:
        A :class:`ProcResult` (``timeout="deadline"`` when the deadline
        passed); never raises for a missing executable, a bad cwd or a timeout.
    """
    request = ProcRequest(
        tuple(str(a) for a in argv),
        Path(cwd),
        env,
        stdin_text,
        deadline_ms=timeout_ms,
        grace_s=grace_s,
    )
    return execute(request, on_output=on_output, on_start=on_start)


def execute(
    request: ProcRequest, *, on_output: OutputSink | None = None, on_start: Registrar | None = None
) -> ProcResult:
    """Run ``request`` to completion; :func:`run` with the request built (same contract)."""
    started = time.monotonic()
    popen = start(request)
    if isinstance(popen, ProcResult):
        return popen
    group = ProcessGroup(popen.pid, exited=lambda: popen.poll() is not None)
    forget: Callable[[], None] | None = None
    try:
        forget = on_start(popen.pid) if on_start is not None else None
        if on_output is None:
            out, err, timed_out = _communicate(popen, group, request)
        else:
            out, err = b"", b""
            timed_out = _stream(popen, group, request, on_output)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM) or broken: the child must not outlive us.
        _abandon(popen, group, request.grace_s, close_pipes=on_output is None)
        raise
    finally:
        if forget is not None:
            forget()
    return ProcResult(
        request.argv,
        popen.returncode,
        stdout=decode(out),
        stderr=decode(err),
        timeout="deadline" if timed_out else None,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def _abandon(
    popen: subprocess.Popen[bytes], group: ProcessGroup, grace_s: float, *, close_pipes: bool
) -> None:
    group.stop(grace_s=grace_s)
    with contextlib.suppress(Exception):
        popen.wait(timeout=grace_s + 5)
    if close_pipes:  # streamed pipes are closed by their reader threads
        for pipe in (popen.stdin, popen.stdout, popen.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _timeout_s(request: ProcRequest) -> float | None:
    return None if request.deadline_ms is None else request.deadline_ms / 1000.0


def _communicate(
    popen: subprocess.Popen[bytes], group: ProcessGroup, request: ProcRequest
) -> tuple[bytes, bytes, bool]:
    """Capture both pipes until EOF, the deadline, or :data:`EXIT_DRAIN_S` after
    the leader exited (what it left then holds the pipes: it is ended, and the
    rest read). Returns ``(stdout, stderr, timed_out)``."""
    # surrogateescape: a pathspec holding a name that is not UTF-8 (git.run_git_paths)
    stdin = (
        request.stdin_text.encode("utf-8", "surrogateescape")
        if request.stdin_text is not None
        else None
    )
    timeout_s = _timeout_s(request)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        slice_s = None if deadline is None else max(0.0, deadline - now)
        if exited_at is not None:
            drain_s = max(0.0, exited_at + EXIT_DRAIN_S - now)
            slice_s = drain_s if slice_s is None else min(slice_s, drain_s)
        elif slice_s is None or slice_s > _EXIT_CHECK_S:
            slice_s = _EXIT_CHECK_S  # look at the leader now and then while the pipes are open
        feed, stdin = stdin, None  # given once: a later call resumes (it refuses input)
        try:
            out, err = popen.communicate(input=feed, timeout=slice_s)
            break
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                group.stop(grace_s=request.grace_s)
                out, err = popen.communicate()
                return out, err, True
            if exited_at is None:
                if popen.poll() is not None:
                    exited_at = time.monotonic()
            elif time.monotonic() >= exited_at + EXIT_DRAIN_S:
                group.stop(grace_s=0)  # they hold the pipes: end them, then read the rest
                out, err = popen.communicate()
                break
    group.stop(grace_s=0)  # the leader exited: end whatever it left in its group at once
    return out, err, False


_EXIT_CHECK_S = 0.25
"""While a captured child's pipes are open, how often (s) its leader's exit is
checked (a child that ends closes them at once: this bounds only the wait on
pipes held by what it left behind)."""


def _stream(
    popen: subprocess.Popen[bytes], group: ProcessGroup, request: ProcRequest, sink: OutputSink
) -> bool:
    """Pump both pipes into ``sink`` until EOF (or the deadline); returns timed_out."""
    lock = threading.Lock()
    stop = threading.Event()

    def pump(name: str, pipe: IO[bytes]) -> None:
        assert isinstance(pipe, io.BufferedReader)
        fd = pipe.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        with pipe:
            while not stop.is_set():
                if not poller.poll(_READ_WAKE_MS):
                    continue
                chunk = os.read(fd, READ_CHUNK)
                if not chunk:
                    return
                with lock:
                    sink(name, chunk)

    assert popen.stdout is not None and popen.stderr is not None
    readers = [
        threading.Thread(target=pump, args=(name, pipe), daemon=True)
        for name, pipe in (("stdout", popen.stdout), ("stderr", popen.stderr))
    ]
    for thread in readers:
        thread.start()
    write_stdin(popen, request.stdin_text)
    timeout_s = _timeout_s(request)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    timed_out = False
    try:
        popen.wait(left())  # the leader's exit (a pidfd wait): the command is done
    except subprocess.TimeoutExpired:
        timed_out = True
    if not timed_out:
        # its output still in the pipes is read; what it left behind holding them
        # (`cmd &`) is ended after EXIT_DRAIN_S, as anything left in its group is
        drain_until = time.monotonic() + EXIT_DRAIN_S
        for thread in readers:
            thread.join(max(0.0, drain_until - time.monotonic()))
    group.stop(grace_s=request.grace_s if timed_out else 0)
    if timed_out:
        popen.wait()
    for thread in readers:
        thread.join(EXIT_DRAIN_S)
    stop.set()  # a process outside the group still holds a pipe: stop reading it
    for thread in readers:
        thread.join()
    return timed_out


def write_stdin(popen: subprocess.Popen[bytes], text: str | None) -> None:
    """Write ``text`` to the child's stdin and close it (a child that quit early is fine)."""
    if text is None or popen.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError):
        popen.stdin.write(text.encode())
    with contextlib.suppress(BrokenPipeError):
        popen.stdin.close()
