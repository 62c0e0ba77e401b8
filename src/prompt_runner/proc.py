"""The one place subprocesses are started and reaped.

Two shapes:

* :func:`run` -- run to completion with captured (git) or streamed (verifier
  commands: any size in bounded memory) output and a deadline enforced on the
  whole process group, which is also ended when the caller is interrupted.
* :func:`spawn` -- a long-lived process in its own process group whose stdout is
  read line by line on a reader thread (agent CLIs).

Every child starts in a new session (``start_new_session=True``), so it and
every grandchild share one process group that :func:`kill_group` can end:
SIGTERM first, SIGKILL after a grace period. A missing executable is a result
(:attr:`ProcResult.missing`), never an exception. The environment is always
passed explicitly by the caller.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

DEFAULT_GRACE_S = 2.0


@dataclass(frozen=True, slots=True)
class ProcResult:
    """How a :func:`run` ended.

    Attributes:
        argv: the argv that was started.
        returncode: exit status (negative = killed by that signal); ``None``
            when the process never started.
        stdout, stderr: the whole decoded output (UTF-8, replacement on bad
            bytes); empty when :func:`run` streamed it to ``on_output``.
        timed_out: the deadline expired and the group was killed.
        missing: the executable was not found.
        start_error: why the process could not start (missing or otherwise).
        duration_ms: wall time in milliseconds.
    """

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    missing: bool = False
    start_error: str | None = None
    duration_ms: int = 0

    @property
    def ok(self) -> bool:
        """True when the process ran and exited 0 in time."""
        return self.returncode == 0 and not self.timed_out


def kill_group(pgid: int, *, grace_s: float = DEFAULT_GRACE_S, wait: Callable[[], bool]) -> None:
    """Terminate process group ``pgid``: SIGTERM, then SIGKILL after ``grace_s`` seconds.

    Args:
        pgid: the process group id (the leader's pid, since children start a session).
        grace_s: seconds to wait for the leader after SIGTERM.
        wait: returns True once the leader has exited (polled).

    The group is always sent SIGKILL at the end, so grandchildren that ignore
    SIGTERM or outlive the leader are gone too.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if wait() and not _group_alive(pgid):
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
        A :class:`ProcResult`; never raises for a missing executable, a bad cwd
        or a timeout.
    """
    args = tuple(str(a) for a in argv)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            args,
            cwd=str(cwd),
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        missing = exc.filename in (None, args[0]) or not Path(cwd).is_dir()
        return ProcResult(
            args,
            None,
            missing=missing and Path(cwd).is_dir(),
            start_error=f"{exc.strerror}: {exc.filename or args[0]}",
        )
    except OSError as exc:
        return ProcResult(args, None, start_error=f"{exc.strerror or exc}: {args[0]}")

    timeout_s = None if timeout_ms is None else timeout_ms / 1000.0
    forget: Callable[[], None] | None = None
    try:
        forget = on_start(proc.pid) if on_start is not None else None
        if on_output is None:
            out, err, timed_out = _communicate(proc, stdin_text, timeout_s, grace_s)
        else:
            out, err = b"", b""
            timed_out = _stream(proc, stdin_text, timeout_s, grace_s, on_output)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM) or broken: the child must not outlive us.
        kill_group(proc.pid, grace_s=grace_s, wait=lambda: proc.poll() is not None)
        with contextlib.suppress(Exception):
            proc.wait(timeout=grace_s + 5)
        if on_output is None:  # streamed pipes are closed by their reader threads
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        raise
    finally:
        if forget is not None:
            forget()
    return ProcResult(
        args,
        proc.returncode,
        stdout=_decode(out),
        stderr=_decode(err),
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def _communicate(
    proc: subprocess.Popen[bytes], stdin_text: str | None, timeout_s: float | None, grace_s: float
) -> tuple[bytes, bytes, bool]:
    try:
        out, err = proc.communicate(
            input=stdin_text.encode() if stdin_text is not None else None, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, grace_s=grace_s, wait=lambda: proc.poll() is not None)
        out, err = proc.communicate()
        return out, err, True
    _end_leftovers(proc.pid)
    return out, err, False


def _end_leftovers(pgid: int) -> None:
    """The leader exited; make sure nothing it left behind in its group survives."""
    if _group_alive(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def _stream(
    proc: subprocess.Popen[bytes],
    stdin_text: str | None,
    timeout_s: float | None,
    grace_s: float,
    sink: OutputSink,
) -> bool:
    """Pump both pipes into ``sink`` until EOF (or the deadline); returns timed_out."""
    lock = threading.Lock()

    def pump(name: str, pipe: IO[bytes]) -> None:
        assert isinstance(pipe, io.BufferedReader)
        with pipe:
            while chunk := pipe.read1(READ_CHUNK):
                with lock:
                    sink(name, chunk)

    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        threading.Thread(target=pump, args=(name, pipe), daemon=True)
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for thread in readers:
        thread.start()
    if stdin_text is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin_text.encode())
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    timed_out = False
    for thread in readers:  # EOF on both pipes: every writer in the group is done
        thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        timed_out = timed_out or thread.is_alive()
    if not timed_out:
        try:
            proc.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    if timed_out:
        kill_group(proc.pid, grace_s=grace_s, wait=lambda: proc.poll() is not None)
        proc.wait()
    else:
        _end_leftovers(proc.pid)
    for thread in readers:
        thread.join()
    return timed_out


def _decode(data: bytes | None) -> str:
    if not data:
        return ""
    return data.decode("utf-8", errors="replace")


@dataclass
class Spawned:
    """A long-lived child in its own process group (see :func:`spawn`).

    Attributes:
        popen: the underlying process.
        stderr_tail: the last lines of stderr (bounded), for diagnostics.
    """

    popen: subprocess.Popen[bytes]
    stderr_tail: list[str] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self) -> int | None:
        """Exit status, or ``None`` while running."""
        return self.popen.poll()

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait up to ``timeout_s`` seconds; return the exit status or ``None``."""
        try:
            code = self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        for t in self._threads:
            t.join(timeout=5)
        return code

    def interrupt(self) -> None:
        """Send SIGINT to the whole group (an agent's Ctrl-C)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGINT)

    def terminate(self, grace_s: float = DEFAULT_GRACE_S) -> None:
        """Terminate the whole group (TERM, then KILL) and reap the leader."""
        kill_group(self.popen.pid, grace_s=grace_s, wait=lambda: self.popen.poll() is not None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=grace_s + 5)
        for t in self._threads:
            t.join(timeout=5)


READ_CHUNK = 1 << 16
"""Bytes read from a streaming child's stdout per call (whatever is available, up to this)."""


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    on_line: Callable[[str], None] | None = None,
    stdin_text: str | None = None,
    stderr_tail_lines: int = 200,
    on_batch: Callable[[list[str]], None] | None = None,
) -> Spawned:
    """Start ``argv`` in its own process group and stream stdout lines to ``on_line``.

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

    Raises:
        FileNotFoundError: the executable does not exist (callers turn this
            into a launch failure or ``ProviderMissingError``).
    """
    popen = subprocess.Popen(
        [str(a) for a in argv],
        cwd=str(cwd),
        env=dict(env),
        stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    spawned = Spawned(popen)
    if on_batch is not None:
        deliver = on_batch
    else:
        if on_line is None:
            raise ValueError("spawn needs on_line or on_batch")
        each = on_line

        def deliver(lines: list[str]) -> None:
            for line in lines:
                each(line)

    def read_stdout() -> None:
        # Whatever the pipe holds is read at once and decoded per batch of whole
        # lines (a newline byte never sits inside a UTF-8 sequence), not per line.
        assert isinstance(popen.stdout, io.BufferedReader)
        read = popen.stdout.read1
        partial: list[bytes] = []  # an unfinished last line, in pieces
        with popen.stdout:
            while chunk := read(READ_CHUNK):
                cut = chunk.rfind(b"\n")
                if cut < 0:
                    partial.append(chunk)
                    continue
                whole = b"".join([*partial, chunk[:cut]]) if partial else chunk[:cut]
                partial = [chunk[cut + 1 :]] if cut + 1 < len(chunk) else []
                lines = [
                    line.rstrip("\r")
                    for line in whole.decode("utf-8", errors="replace").split("\n")
                ]
                deliver(lines)
            if partial:
                deliver([b"".join(partial).decode("utf-8", errors="replace").rstrip("\r")])

    def read_stderr() -> None:
        assert popen.stderr is not None
        with popen.stderr:
            for raw in popen.stderr:
                spawned.stderr_tail.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
                if len(spawned.stderr_tail) > stderr_tail_lines:
                    del spawned.stderr_tail[0]

    for target in (read_stdout, read_stderr):
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        spawned._threads.append(thread)
    if stdin_text is not None and popen.stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            popen.stdin.write(stdin_text.encode())
        popen.stdin.close()
    return spawned
