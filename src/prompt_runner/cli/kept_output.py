"""``list``'s kept text: what a command printed, kept while every input it read holds.

``list`` on 300 prompts imports pydantic, the packet models and the runner
stack and resolves a whole plan: ~0.6 s, for a text that does not change
between two calls on a finished run. So its stdout is kept in the user's cache
directory (``$PROMPT_RUNNER_CACHE_DIR``, else ``$XDG_CACHE_HOME/prompt-runner``,
else ``~/.cache/prompt-runner``, the parsed-packet cache's rule; an empty
``PROMPT_RUNNER_CACHE_DIR`` turns it off, and then nothing is recorded, kept
or served) and printed again by :func:`serve` before argparse loads, while

* the command line, the current directory, the whole environment, whether
  stdout is a terminal and its encoding are the ones it was kept under (they
  name the entry: ``outputs/<BLAKE2b of them>``);
* the code is the same (:func:`~prompt_runner.state.code_stamp.code_stamp` of
  the whole package: the version and every ``.py`` file);
* every file and directory the command read is unchanged: **recorded, not
  listed by hand**. While the command runs, :class:`Recorder` notes every path
  it opened (the ``open`` audit event: ``open``, ``os.open``, ``io.open_code``),
  listed (``os.listdir``, ``os.scandir``) or looked at (``os.stat``,
  ``os.lstat``, and through them ``os.path.exists``/``isfile``/``isdir``,
  ``realpath`` and ``pathlib``'s checks) -- the manifest, the prompt directory
  and each prompt file, profiles and config files, present or not, the state
  files it folded, the repos' paths -- and the entry keeps each one's device,
  inode, mode, size, mtime and ctime (``-`` for a missing one, so its
  appearance counts). A directory's mtime changes when an entry is added,
  removed or renamed; a file's ctime changes with every write, rename and
  ``touch``/``cp -p`` that puts an old mtime back, and no process can choose
  it. So an unchanged fingerprint means unchanged inputs, once every recorded
  time is older than the clock's tick: the text is kept only when each is at
  least :data:`~prompt_runner.state.status_cache.SETTLED_NS` (2 s) older than
  the command's start (``status --json``'s rule, git's "racily clean" one),
  so a same-size edit within the same tick as the read can never hide.

Not recorded (and why that is sound): Python code under the interpreter's
prefixes and the package's own ``.py`` files (the code stamp and the
installation's directory listings cover them), ``/proc``, ``/sys`` and
``/dev`` (``list`` reads them for nothing it prints; a live run is refused
outright), and the cache directory itself (derived data, a function of the
inputs). A command that starts a process, changes directory, opens a relative
path, reads through a descriptor it cannot name or writes to stderr is not
kept; nor one that exits non-zero, nor one whose stdout is not UTF-8 as is.
A live run is never kept nor served: the state root's ``run.pid`` must be
missing (it is a recorded path, so a run that starts later changes the
fingerprint).

Entry format (bytes)::

    prompt-runner kept-output 2
    <code stamp>
    <length of the inputs> <length of the text> <BLAKE2b of both, hex>
    <inputs: each ``D|S|L <stat or -> <path>`` and a NUL (:func:`_stat_text`)>
    <the text>

Written by atomic replace (no fsync: a lost entry costs one fold); anything
missing, torn, damaged (the digest covers the inputs and the text), of
another format or code, or naming changed inputs is ignored and the command
runs. Standard library only; nothing here raises.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from ..state.code_stamp import blake2b, code_stamp
from ..state.user_cache import cache_dir
from . import _out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

FORMAT = b"prompt-runner kept-output 2"
"""The first line; its number is the entry's schema version."""

COMMANDS = frozenset({"list"})
"""The first words whose output is kept."""

_SPOILING = frozenset(
    {
        "subprocess.Popen",
        "os.posix_spawn",
        "os.spawn",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.system",
        "os.chdir",
        "socket.connect",
    }
)
"""Audit events after which the output depends on more than the recorded files."""


def _utf8_as_is(out: Any) -> bool:
    """``out`` takes UTF-8 bytes unchanged (cli/_out's rule) through a byte buffer."""
    return _out._utf8_as_is(out) and getattr(out, "buffer", None) is not None


def entry_path(argv: list[str], cache: str) -> str:
    """The entry of ``argv`` run here, now (see the module doc for what names it)."""
    digest = blake2b(digest_size=20)
    try:
        tty = os.isatty(1)
    except OSError:
        tty = False
    encoding = getattr(sys.stdout, "encoding", None)
    for part in (
        "kept-output 1",
        repr(argv),
        os.getcwd(),
        repr(sorted(os.environ.items())),
        repr((tty, encoding)),
    ):
        data = part.encode("utf-8", "surrogateescape")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return os.path.join(cache, "outputs", digest.hexdigest())


def _stamp() -> bytes:
    return code_stamp().encode("ascii")


def _stat_text(kind: str, path: str) -> str | None:
    """``dev:ino:mode:size:mtime:ctime`` of ``path``, ``-`` when it is missing,
    ``None`` when it cannot be told. ``kind``: ``D`` a directory that was listed,
    ``S`` a path looked at through links, ``L`` one looked at without following
    a link. A directory that was only looked at (an ``isdir``, each parent
    ``realpath`` walks) is recorded as ``dev:ino:mode``: its entries were not
    read, and its mtime changes with every file made in it (``/tmp``)."""
    try:
        st = os.lstat(path) if kind == "L" else os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "-"
    except OSError:
        return None
    if kind != "D" and (st.st_mode & 0o170000) == 0o040000:
        return f"{st.st_dev}:{st.st_ino}:{st.st_mode}"
    return f"{st.st_dev}:{st.st_ino}:{st.st_mode}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def serve(argv: list[str]) -> bool:
    """Print the kept text of ``argv`` when there is one and its inputs hold;
    whether it did. Never raises for the entry (a write error to stdout does)."""
    if argv[:1] != ["list"] or not _utf8_as_is(sys.stdout):
        return False
    cache = cache_dir()
    if cache is None:
        return False
    try:
        data = _read_entry(entry_path(argv, cache))
        if data is None:
            return False
        text = _checked(data)
    except (OSError, ValueError):
        return False
    if text is None:
        return False
    out = sys.stdout
    out.flush()
    out.buffer.write(text)
    out.buffer.flush()
    return True


def _read_entry(path: str) -> bytes | None:
    """The entry's bytes, or ``None`` when what is there is no regular file (a
    named pipe would block the read for ever, a device never end it).

    Raises:
        OSError: it cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb") as f:  # owns fd from here
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read()


def _checked(data: bytes) -> bytes | None:
    head = data.split(b"\n", 3)
    if len(head) != 4 or head[0] != FORMAT or head[1] != _stamp():
        return None
    inputs_text, text_text, check = head[2].split(b" ")
    inputs_length, text_length = int(inputs_text), int(text_text)
    body = head[3]
    if len(body) != inputs_length + text_length:
        return None
    inputs, text = body[:inputs_length], body[inputs_length:]
    if _check(inputs, text) != check:
        return None
    stat_text = _stat_text
    for record in inputs.decode("utf-8", "surrogateescape").split("\0")[:-1]:
        kind, recorded, path = record.split(" ", 2)
        if stat_text(kind, path) != recorded:
            return None
    return text


def _check(inputs: bytes, text: bytes) -> bytes:
    digest = blake2b(digest_size=16)
    for part in (inputs, text):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest().encode("ascii")


class _WatchedStream:
    """A stderr that notes whether anything was written to it."""

    def __init__(self, stream: TextIO, recorder: Recorder) -> None:
        self._stream = stream
        self._recorder = recorder

    def write(self, text: str) -> int:
        self._recorder.spoiled = True
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Recorder:
    """Records the paths one command reads (see the module doc), from
    :func:`start` until :meth:`keep` or :meth:`stop`."""

    def __init__(self, argv: list[str], cache: str) -> None:
        self.argv = argv
        self.cache = cache
        self.start_ns = time.time_ns()
        self.paths: dict[tuple[str, str], None] = {}
        self.spoiled = False
        self.active = False
        self.text: bytes | None = None
        self.run_pid: str | None = None
        cwd = os.getcwd()
        self._cwd = cwd
        skip = {sys.prefix, sys.base_prefix, sys.exec_prefix}
        self._code_roots = tuple(os.path.join(p, "") for p in skip if p)
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self._package = os.path.join(package, "")
        self._skipped = (os.path.join(cache, ""), "/proc/", "/sys/", "/dev/")
        self._stat = os.stat
        self._lstat = os.lstat
        self._stderr: Any = None

    # -- recording -------------------------------------------------------------

    def _note(self, kind: str, path: Any, dir_fd: int | None = None) -> None:
        if not self.active:
            return
        if isinstance(path, int):
            return  # a descriptor of a file already opened by its path
        try:
            text = os.fsdecode(path) if path is not None else "."
        except TypeError:
            self.spoiled = True
            return
        if dir_fd is not None:
            try:
                base = os.readlink(f"/proc/self/fd/{dir_fd}")
            except OSError:
                self.spoiled = True
                return
            text = os.path.join(base, text)
        elif not os.path.isabs(text):
            text = os.path.join(self._cwd, text)
        text = os.path.normpath(text)
        if text.startswith(self._skipped) or text.rstrip("/") + "/" == self._skipped[0]:
            return
        if text.endswith((".py", ".pyc", ".so", ".pth")) and (
            text.startswith(self._code_roots) or text.startswith(self._package)
        ):
            return
        self.paths[(kind, text)] = None

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path = args[0]
            if isinstance(path, (str, bytes)) and not os.path.isabs(os.fsdecode(path)):
                # os.open(name, dir_fd=...) says only the name: which directory is unknown
                self.spoiled = True
                return
            self._note("S", path)
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
            if isinstance(path, int):
                try:
                    path = os.readlink(f"/proc/self/fd/{path}")
                except OSError:
                    self.spoiled = True
                    return
            self._note("D", path)
        elif event in _SPOILING:
            self.spoiled = True

    def _wrapped_stat(
        self, path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        self._note("S" if follow_symlinks else "L", path, dir_fd)
        return self._stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    def _wrapped_lstat(self, path: Any, *, dir_fd: int | None = None) -> os.stat_result:
        self._note("L", path, dir_fd)
        return self._lstat(path, dir_fd=dir_fd)

    def begin(self) -> None:
        self.active = True
        sys.addaudithook(self._audit)  # removed with the process; inert once inactive
        os.stat = self._wrapped_stat
        os.lstat = self._wrapped_lstat
        self._stderr = sys.stderr
        sys.stderr = _WatchedStream(sys.stderr, self)

    def stop(self) -> None:
        """Stop recording and put ``os.stat``, ``os.lstat`` and stderr back."""
        if not self.active:
            return
        self.active = False
        os.stat = self._stat
        os.lstat = self._lstat
        if isinstance(sys.stderr, _WatchedStream):
            sys.stderr = self._stderr

    # -- keeping ---------------------------------------------------------------

    def keep(self) -> bool:
        """Write the entry when the command offered its text and everything it
        read is settled; whether it was written. Stops recording first."""
        self.stop()
        text = self.text
        if text is None or self.spoiled or self.run_pid is None:
            return False
        if _stat_text("S", self.run_pid) != "-":
            return False  # a run holds (or held) the packet: never kept
        from ..state.status_cache import SETTLED_NS  # lazy: only a keeping command

        self.paths[("S", self.run_pid)] = None
        settled_before = self.start_ns - SETTLED_NS
        lines: list[str] = []
        for kind, path in self.paths:
            recorded = _stat_text(kind, path)
            if recorded is None:
                return False
            if recorded.count(":") == 5:
                mtime, ctime = recorded.rsplit(":", 2)[1:]
                if int(mtime) >= settled_before or int(ctime) >= settled_before:
                    return False  # too recent to tell a later change apart
            lines.append(f"{kind} {recorded} {path}\0")
        inputs = "".join(lines).encode("utf-8", "surrogateescape")
        data = b"\n".join(
            [
                FORMAT,
                _stamp(),
                f"{len(inputs)} {len(text)} ".encode("ascii") + _check(inputs, text),
                inputs + text,
            ]
        )
        return _write(entry_path(self.argv, self.cache), data)


def _write(path: str, data: bytes) -> bool:
    # lazy: only a command that keeps a new text writes
    from pathlib import Path

    from ..errors import StorageError
    from ..state.atomic import write_bytes_atomic

    try:
        write_bytes_atomic(Path(path), data, durable=False)
    except (StorageError, OSError):
        return False
    return True


_recorder: Recorder | None = None


def start(argv: list[str]) -> Recorder | None:
    """Start recording the command ``argv`` when its output may be kept (its first
    word is in :data:`COMMANDS` and the cache is on); the recorder, or ``None``."""
    global _recorder
    if argv[:1] != ["list"]:
        return None
    cache = cache_dir()
    if cache is None:
        return None
    _recorder = Recorder(argv, cache)
    _recorder.begin()
    return _recorder


def offer(text: str, run_pid: str | os.PathLike[str]) -> None:
    """The command's whole stdout, ``text`` (already written), and its state
    root's ``run.pid``: kept by :meth:`Recorder.keep` if all holds."""
    recorder = _recorder
    if recorder is None or not recorder.active:
        return
    if not _utf8_as_is(sys.stdout):
        recorder.spoiled = True
        return
    try:
        recorder.text = text.encode("utf-8")
    except UnicodeEncodeError:
        recorder.spoiled = True
        return
    recorder.run_pid = os.fspath(run_pid)
