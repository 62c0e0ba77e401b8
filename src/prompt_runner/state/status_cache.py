"""``status-cache``: the text ``status --json`` printed, kept while what it was folded from holds.

``status --json`` folds every prompt log (3,000 JSON lines for 300 prompts of 3
attempts) and prints megabytes of indented JSON: most of its start-up on a long
run. Nothing of that changes between two calls on a finished run, so the text
is kept in the state root (``StateLayout.status_cache``), with the
*fingerprint* of the files it was folded from, and printed again while they
are the same. The prompt logs stay the record of truth: the cache is derived,
never read by anything else, and a missing, stale or damaged one only costs
the fold.

The fingerprint (:func:`fingerprint`) is every input of
:func:`~prompt_runner.api_status.status`'s fold: ``state.json``,
``runs/current.json`` (the run's identity, its end and its targets: ``last_run``
and ``pending``), ``progress.log`` (a record of truth ``status`` refuses when a
line of it is bad, as ``run`` does), ``control/snapshot.json`` (a ``stop`` order: ``last_run.stop``)
and every entry of ``prompts/`` (the logs, and the names
that say which logs there are) -- and, since the document lists only the
prompts the packet holds now (``removed_prompts``), the packet's manifest and
every entry of its prompt directory, named in the fingerprint itself (the
``packet`` part: both paths, hex) so the argparse-free reader (``cli/fast.py``)
checks them without reading the manifest --, each by device, inode, mode, size, mtime and
ctime in nanoseconds. Any write to a file -- an appended line, a torn tail cut
by the next writer, a replace, a restore from a backup with its old mtime
(``touch``, ``cp -p``) -- sets its ctime to the clock's now, which the kernel
never lets a process choose. So the files are unchanged since the text was
made as long as their fingerprint is, provided the recorded ctimes are older
than the clock's tick: a change within the same tick as the one recorded
could keep the ctime (the clock is coarse, a few ms). Hence the rule that
makes this sound (git's "racy clean" index entries are the same problem):

* the writer fingerprints before reading and again after folding, and keeps
  the text only when both are equal and every recorded mtime and ctime is
  older than :data:`SETTLED_NS` before the first fingerprint -- so a file
  changed while it was read, or too recently to tell a later change apart, is
  never cached;
* a reader prints the text only when today's fingerprint is the recorded one,
  the file has the length its header says and was written by this version of
  Prompt Runner with this :data:`FORMAT`. The file is written durably (fsynced
  before it is renamed in), so after a crash it is the old file or the new
  one, whole; it is read through one descriptor, so a writer replacing it
  meanwhile cannot mix two.

What the fingerprint does not cover is decided by the caller each time:
whether a runner lives (its text is only kept and used when none does) and a
live agent's progress file (a document that read one is not kept).

File format (bytes)::

    prompt-runner status-cache 5        the format and its schema version
    <code stamp>                        the version and code that made it (code_stamp.py)
    <length of the fingerprint> <length of the text> <check>
    <fingerprint>                       one line (names are repr()-quoted)
    <the text>

``<check>`` is the hex BLAKE2b (16 bytes) of the fingerprint line, the text's
length, and the text's first and last :data:`_EDGE` bytes: a damaged header,
fingerprint or either end of the text is refused (folded anew). The middle of
the text is covered by its length only: a digest of all of it (2.3 MB on 300
prompts of three attempts) costs ~1.3 ms (reading it, ~0.4 ms, which
``sendfile`` avoids, and the digest; even crc32 takes ~0.9 ms), four times the
0.3 ms this check was allowed. The file is written whole and fsynced before it
is renamed in, so what it guards against is another writer or the disk.

The paths are the state root's :class:`~prompt_runner.state.layout.StateLayout`
names as text (``state/layout_text.py``): this module is on ``status --json``'s argparse-free
hit path (``cli/fast.py``), which loads neither ``pathlib`` nor ``hashlib``.
"""

from __future__ import annotations

import os
import time

from prompt_runner.state import layout_text
from prompt_runner.state.code_stamp import blake2b, code_stamp

TYPE_CHECKING = False  # typing and pathlib cost a hot path's start-up (cli/fast.py)
if TYPE_CHECKING:
    from prompt_runner.state.layout import StateLayout

    Root = StateLayout | str | os.PathLike[str]

FORMAT = b"prompt-runner status-cache 5"
"""The first line; its number is the file's schema version. Change it when the
folded document or its text changes shape within one release."""

SETTLED_NS = 2_000_000_000
"""How old (ns) every input must be, by mtime and ctime, for its fold to be
kept: far beyond the file-time tick (a few ms), and a clock step back of up to
this much cannot make a new change look like an old one."""


def _stamp() -> bytes:
    # the version and the code the text is folded and printed by (an editable
    # install changes under one version): state/code_stamp.py
    return code_stamp(
        "__init__.py",
        "api_status.py",
        "packet/prompt_ids_text.py",
        "packet/manifest_check.py",
        "state",
        "cli",
    ).encode("ascii")


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _root(layout: Root) -> str:
    """The state root of ``layout`` (a :class:`StateLayout` or its root path) as text."""
    if isinstance(layout, str | os.PathLike):
        return os.fspath(layout)
    return os.fspath(layout.root)


def cache_path(layout: Root) -> str:
    """``<root>/status-cache`` (``StateLayout.status_cache``)."""
    return layout_text.status_cache(_root(layout))


def _entry(name: str, st: os.stat_result) -> str:
    return (
        f"{name!r} {st.st_dev} {st.st_ino} {st.st_mode} {st.st_size} "
        f"{st.st_mtime_ns} {st.st_ctime_ns}"
    )


PacketInputs = tuple[str, str]
"""``(manifest file, prompt directory)`` of the packet a document describes, as text."""


def fingerprint(layout: Root, packet: PacketInputs | None = None) -> tuple[str, int] | None:
    """The fingerprint of the files the state document is folded from, and the
    newest mtime or ctime among them (ns since the epoch).

    Args:
        layout: the state root (a :class:`StateLayout` or its path).
        packet: the packet's manifest file and prompt directory: the document
            lists only the prompts the packet holds (``removed_prompts``), so
            the manifest and every entry of that directory are inputs too;
            ``None``: the state root's files alone.

    ``None`` when it cannot be taken (``prompts/`` exists but cannot be
    listed): then nothing is cached. A missing file is part of the fingerprint
    (as ``-``), so its appearance changes it.
    """
    root = _root(layout)
    parts: list[str] = []
    newest = 0
    paths = [
        ("state.json", layout_text.state_json(root)),
        ("current", layout_text.current_run(root)),
        ("progress", layout_text.progress_log(root)),  # status checks it (a bad line: exit 2)
        ("snapshot", layout_text.snapshot(root)),
    ]
    if packet is not None:
        manifest, prompt_dir = packet
        parts.append(f"packet {os.fsencode(manifest).hex()} {os.fsencode(prompt_dir).hex()}")
        paths.append(("manifest", manifest))
    for label, path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            parts.append(f"{label} -")
            continue
        except OSError:
            return None
        parts.append(_entry(label, st))
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    dirs = [("prompts", layout_text.prompts_dir(root))]
    if packet is not None:
        dirs.append(("prompt_dir", packet[1]))
    for label, directory in dirs:
        listed = _listed(label, directory, parts)
        if listed is None:
            return None
        newest = max(newest, listed)
    return " ".join(parts), newest


def _listed(label: str, directory: str, parts: list[str]) -> int | None:
    """Append ``directory``'s entries (each by :func:`_entry`) to ``parts`` and
    return their newest mtime or ctime (0: none); ``None`` when it exists but
    cannot be listed."""
    newest = 0
    try:
        fd = os.open(directory, _DIR_FLAGS)
    except FileNotFoundError:
        parts.append(f"{label} -")
        return newest
    except OSError:
        return None
    try:
        names = sorted(os.listdir(fd))
        parts.append(f"{label} {len(names)}")
        for name in names:
            try:
                st = os.stat(name, dir_fd=fd)  # follows a link, as reading the log does
            except OSError:
                parts.append(f"{name!r} -")
                continue
            parts.append(_entry(name, st))
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        return None
    finally:
        os.close(fd)
    return newest


def _recorded_packet(recorded: bytes) -> PacketInputs | None:
    """The packet inputs a recorded fingerprint names (its ``packet`` part), or ``None``.

    Raises:
        ValueError: a ``packet`` part that is not two hex paths.
    """
    if not recorded.startswith(b"packet "):
        return None
    _, manifest, prompt_dir = recorded.split(b" ", 3)[:3]
    return os.fsdecode(bytes.fromhex(manifest.decode("ascii"))), os.fsdecode(
        bytes.fromhex(prompt_dir.decode("ascii"))
    )


_EDGE = 4096
"""How many bytes at each end of the text the header's check covers."""


def _check(fingerprint_line: bytes, length: int, head: bytes, tail: bytes) -> bytes:
    digest = blake2b(digest_size=16)
    for part in (fingerprint_line, str(length).encode("ascii"), head, tail):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest().encode("ascii")


def _header(text: bytes, inputs: str) -> bytes:
    fingerprint_bytes = inputs.encode("utf-8", "surrogateescape")
    check = _check(fingerprint_bytes, len(text), text[:_EDGE], text[-_EDGE:] if text else b"")
    return b"\n".join(
        [
            FORMAT,
            _stamp(),
            f"{len(fingerprint_bytes)} {len(text)} ".encode("ascii") + check,
            fingerprint_bytes,
            b"",
        ]
    )


_HEAD_BYTES = 4096
"""Enough for the first three lines of the file (the fingerprint is read apart)."""


class Kept:
    """A kept text, open: ``length`` bytes at ``offset`` of the descriptor ``fd``
    (one file, whatever replaces it meanwhile). Close it (or use ``with``)."""

    def __init__(self, fd: int, offset: int, length: int) -> None:
        self.fd = fd
        self.offset = offset
        self.length = length

    def read(self) -> bytes:
        """The text's bytes.

        Raises:
            OSError: the file ended early (it was cut while open).
        """
        chunks: list[bytes] = []
        at, left = self.offset, self.length
        while left > 0:
            chunk = os.pread(self.fd, left, at)
            if not chunk:
                raise OSError(f"{self.length - left} of {self.length} bytes of a kept status text")
            chunks.append(chunk)
            at += len(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Kept:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_kept(layout: Root) -> Kept | None:
    """The kept text, open, when the files it was folded from are unchanged; else
    ``None``. Never raises for a missing, unreadable, stale or damaged cache (it
    is rebuilt)."""
    try:
        fd = os.open(cache_path(layout), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        kept = _checked(layout, fd)
    except (OSError, ValueError):
        kept = None
    if kept is None:
        os.close(fd)
    return kept


def _checked(layout: Root, fd: int) -> Kept | None:
    size = os.fstat(fd).st_size
    head = os.pread(fd, _HEAD_BYTES, 0).split(b"\n", 3)
    if len(head) != 4 or head[0] != FORMAT or head[1] != _stamp():
        return None
    inputs_text, text_text, check = head[2].split(b" ")
    inputs_length, text_length = int(inputs_text), int(text_text)
    at = len(head[0]) + len(head[1]) + len(head[2]) + 3
    recorded = os.pread(fd, inputs_length + 1, at)
    offset = at + inputs_length + 1
    if size != offset + text_length:
        return None  # cut short, or more than the header says
    first = os.pread(fd, min(_EDGE, text_length), offset)
    last = first if text_length <= _EDGE else os.pread(fd, _EDGE, offset + text_length - _EDGE)
    if _check(recorded[:-1], text_length, first, last) != check:
        return None  # damaged: another writer, the disk
    taken = fingerprint(layout, _recorded_packet(recorded))
    if taken is None or recorded != taken[0].encode("utf-8", "surrogateescape") + b"\n":
        return None
    return Kept(fd, offset, text_length)


def read(layout: Root) -> bytes | None:
    """The kept text's bytes (see :func:`open_kept`), or ``None``."""
    kept = open_kept(layout)
    if kept is None:
        return None
    with kept:
        try:
            return kept.read()
        except OSError:
            return None


class Keeper:
    """Keeps the text of one fold: :meth:`start` before reading the files,
    :meth:`keep` with the text once it is made.

    Usage::

        keeper = Keeper.start(layout)
        text = render(read_state(layout.root))   # reads the files
        keeper.keep(text)                        # kept only if they held still
    """

    def __init__(
        self,
        layout: Root,
        before: tuple[str, int] | None,
        at_ns: int,
        packet: PacketInputs | None = None,
    ) -> None:
        self._layout = layout
        self._before = before
        self._at_ns = at_ns
        self._packet = packet

    @classmethod
    def start(cls, layout: Root, packet: PacketInputs | None = None) -> Keeper:
        """Take the fingerprint before anything is read (``packet``: as :func:`fingerprint`)."""
        at_ns = time.time_ns()
        return cls(layout, fingerprint(layout, packet), at_ns, packet)

    def keep(self, text: bytes) -> bool:
        """Write ``text`` to the cache when every input is settled (older than
        :data:`SETTLED_NS` when :meth:`start` ran) and unchanged since; returns
        whether it was written. A write that fails (a read-only state root, a
        full disk) is skipped: the cache is only ever a saving."""
        before = self._before
        if before is None or before[1] >= self._at_ns - SETTLED_NS:
            return False
        after = fingerprint(self._layout, self._packet)
        if after is None or after[0] != before[0]:
            return False
        # lazy: only a call that keeps a new text writes
        from pathlib import Path

        from prompt_runner.errors import StorageError
        from prompt_runner.state.atomic import write_bytes_atomic

        try:
            write_bytes_atomic(Path(cache_path(self._layout)), _header(text, before[0]) + text)
        except (StorageError, OSError):
            return False
        return True
