"""``regenerates:`` -- a command must write its declared outputs anew (SPEC 2.6).

SPEC 2.6: "``regenerates:`` stages prior outputs to a backup, requires each
declared output to be newly created and non-empty, restores on failure,
removes the backup on success." This module is that staging, the proof that
an output is new, and the restore.

One regeneration at a time per repo. :func:`begin` holds an exclusive
``flock`` on the repo's directory from before the outputs are moved aside
until they are restored (or their backups removed), so two verifications --
a run's and an operator's ``verify``, or two ``verify``s -- never stage,
check or restore the same outputs at once; a later one waits for the earlier
one's command (up to its own wait, then a ``verifier_fault``). The kernel
drops the lock when its holder dies, so a killed verification never leaves
it held. A file system without ``flock`` on directories goes unlocked; the
proof below still holds against a stale file put back.

New means written by the command: after it, the output is a regular,
non-empty file (no symlink), it is not the very file that was moved aside
(device and inode differ), and its modification time is no earlier than the
moment the old one was moved aside (the backup's change time, from the file
system's own clock) -- or, with no old one, than the start of the second the
command started in (file systems that keep whole seconds). A file put back
by another process keeps its old modification time, so it never passes. A
command that copies a file keeping its old times (``cp -p``, ``rsync -t``)
does not regenerate it in this sense.

A killed verification (``kill -9`` of the run or of ``verify``) leaves an
output as ``<name>.prompt-runner-verifier-backup``. Every verification first
puts such leftovers back (:func:`recover`, before any clause is checked, and
again in :func:`begin` under the lock): the backup back to its name when the
output is missing; when both exist, the backup -- the last version from
before the killed verification, which never passed -- replaces what is at
the output's name (that verification's unverified, perhaps partial, output).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prompt_runner.verifier.model import Contract, VerifyContext
from prompt_runner.verifier.paths import inside

BACKUP_SUFFIX = ".prompt-runner-verifier-backup"
LOCK_POLL_S = 0.05
LOCK_GRACE_MS = 5000
"""Waited for another verification's lock beyond the command's own timeout."""

_NS = 1_000_000_000
_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", None)
_pending: dict[str, str] = {}
"""Real path of an output -> what :func:`recover` did to it, until its command reports it."""


class RegenerateError(Exception):
    """The outputs could not be staged (the lock is held too long, a rename failed).

    Attributes:
        details: the sentence for the item's ``details`` (a ``verifier_fault``).
    """

    def __init__(self, details: str) -> None:
        super().__init__(details)
        self.details = details


def backup_of(target: Path) -> Path:
    """The backup path of output ``target``: ``<name>.prompt-runner-verifier-backup``."""
    return target.with_name(target.name + BACKUP_SUFFIX)


@dataclass
class Output:
    """One declared output of a regeneration.

    Attributes:
        rel: the repo-relative path the contract names.
        target: its absolute path.
        staged: ``(st_dev, st_ino)`` of the prior version moved to its backup,
            or ``None`` when there was none.
        since_ns: a file modified before this (ns since the epoch, the file
            system's clock) was not written by the command.
        recovered: what was done first with a killed verification's leftover, if anything.
    """

    rel: str
    target: Path
    staged: tuple[int, int] | None = None
    since_ns: int = 0
    recovered: str | None = None

    @property
    def backup(self) -> Path:
        """The backup path of this output."""
        return backup_of(self.target)


@dataclass
class Finished:
    """What :meth:`Regeneration.finish` did.

    Attributes:
        notes: rel -> what happened to the output (``"the previous version was restored"``).
        fault: a restore that failed, as a sentence, or ``None``.
    """

    notes: dict[str, str] = field(default_factory=dict)
    fault: str | None = None


class Regeneration:
    """The outputs of one command, staged, with the repo's lock held.

    Made by :func:`begin`; call :meth:`not_new` after the command and always
    :meth:`finish` (in ``finally``), which releases the lock.

    Attributes:
        outputs: the declared outputs, in the contract's order.
        waited_ms: how long :func:`begin` waited for another verification's lock.
    """

    def __init__(self, outputs: list[Output], lock_fd: int | None, waited_ms: int) -> None:
        self.outputs = outputs
        self.waited_ms = waited_ms
        self._fd = lock_fd

    def recovered(self) -> list[str]:
        """What was done with killed verifications' leftovers before the command, as sentences."""
        return [o.recovered for o in self.outputs if o.recovered]

    def not_new(self) -> list[tuple[str, str]]:
        """``(rel, why)`` of each output the command did not write anew (module docstring)."""
        return [(o.rel, why) for o in self.outputs if (why := _why_not_new(o)) is not None]

    def finish(self, *, keep: bool) -> Finished:
        """Keep the new outputs (``keep``: remove the backups) or restore the prior versions.

        Restoring: a staged prior version replaces whatever is at the output's
        name; with none, a file or symlink the command wrote there is removed
        (one older than the command is not its, and is left alone). Never
        raises for the file system: a failed restore is :attr:`Finished.fault`,
        and its backup stays for the next verification to put back. Releases
        the lock; idempotent.
        """
        done = Finished()
        try:
            for out in self.outputs:
                try:
                    done.notes[out.rel] = _keep(out) if keep else _restore(out)
                except OSError as exc:
                    done.fault = _finish_fault(out, keep, exc)
                    done.notes[out.rel] = f"not restored: its backup {out.backup.name} is kept"
        finally:
            self._release()
        return done

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor drops the flock
            self._fd = None


def _finish_fault(out: Output, keep: bool, exc: OSError) -> str:
    why = exc.strerror or str(exc)
    if keep:
        return (
            f"verifier_fault: regenerates: could not remove {out.backup.name}, the backup of the "
            f"new {out.rel} ({why}); remove it by hand, or the next verification takes it for a "
            "killed one's and puts it back"
        )
    return (
        f"verifier_fault: regenerates: could not restore {out.rel} from {out.backup.name} "
        f"({why}); the backup is kept and the next verification puts it back"
    )


def begin(root: Path, targets: Sequence[tuple[str, Path]], *, wait_ms: int) -> Regeneration:
    """Lock ``root``'s regenerations, put back killed ones' leftovers, stage the outputs.

    Args:
        root: the repo directory the outputs are in (its real path is locked).
        targets: ``(rel, absolute path)`` of each declared output.
        wait_ms: how long to wait for another verification's lock (ms).

    Returns:
        The :class:`Regeneration`; its outputs' prior versions are at their backups.

    Raises:
        RegenerateError: another verification held the lock for ``wait_ms``, or
            an output could not be moved aside (whatever was staged is restored
            and the lock released first).
    """
    started = time.monotonic()
    fd = _lock(root, wait_ms)
    regen = Regeneration(
        [Output(rel, target) for rel, target in targets],
        fd,
        int((time.monotonic() - started) * 1000),
    )
    floor_ns = _now_ns() // _NS * _NS
    for i, out in enumerate(regen.outputs):
        told = _pending.pop(os.path.realpath(out.target), None)  # by recover(), just before
        try:
            out.recovered = _put_back(out.rel, out.target) or told
        except OSError as exc:
            _abort(regen, i)
            raise RegenerateError(
                f"verifier_fault: regenerates: could not put back {out.rel}{BACKUP_SUFFIX}, "
                f"left by a killed verification ({exc.strerror or exc}); nothing was run -- "
                f"move it back to {out.rel} by hand"
            ) from exc
        out.since_ns = floor_ns
        try:
            os.replace(out.target, out.backup)
            info = os.lstat(out.backup)
        except FileNotFoundError:
            continue  # no prior version
        except OSError as exc:
            _abort(regen, i)
            raise RegenerateError(
                f"verifier_fault: regenerates: could not move {out.rel} aside to "
                f"{out.backup.name} ({exc.strerror or exc}); nothing was run"
            ) from exc
        out.staged = (info.st_dev, info.st_ino)
        out.since_ns = info.st_ctime_ns  # the rename's moment, on the file system's clock
    return regen


def _abort(regen: Regeneration, staged: int) -> None:
    """Restore the first ``staged`` outputs (the rest were not touched) and release the lock."""
    regen.outputs = regen.outputs[:staged]
    regen.finish(keep=False)


def recover(contract: Contract, ctx: VerifyContext) -> None:
    """Before a verification checks any clause: put back what killed ones left.

    For each ``regenerates`` output of ``contract``'s commands whose backup
    exists and whose repo no live verification holds (a held lock is skipped:
    that backup is the live one's, and :func:`begin` waits for it), the
    backup goes back to its name (module docstring). What was done is told in
    that command's item. Never raises: an output that cannot be put back is
    left for :func:`begin`, which says why.
    """
    for entry in contract.entries.get("commands", ()):
        rels: Iterable[str] = getattr(entry, "regenerates", ())
        if not rels:
            continue
        name = entry.repo if entry.repo is not None else ctx.default_repo
        root = ctx.repos.get(name) if name is not None else None
        if root is None:
            continue
        targets = [t for rel in rels if (t := inside(Path(root), rel)) is not None]
        for target in targets:
            _pending.pop(os.path.realpath(target), None)  # a note of an earlier verification
        found = [(rel, t) for rel in rels if (t := inside(Path(root), rel)) and _left(t)]
        if not found:
            continue
        try:
            fd = _try_lock(Path(root))
        except BlockingIOError:
            continue
        try:
            for rel, target in found:
                with contextlib.suppress(OSError):
                    note = _put_back(rel, target)
                    if note is not None:
                        _pending[os.path.realpath(target)] = note
        finally:
            if fd is not None:
                os.close(fd)


def _left(target: Path) -> bool:
    return os.path.lexists(backup_of(target))


def _put_back(rel: str, target: Path) -> str | None:
    """Put a killed verification's backup of ``target`` back; what was done, or ``None``."""
    backup = backup_of(target)
    if not os.path.lexists(backup):
        return None
    shown = f"{rel}{BACKUP_SUFFIX}"
    if os.path.lexists(target):
        _remove(target)
        os.replace(backup, target)
        return (
            f"a killed verification had left {shown} beside a {rel} written since (its "
            f"unverified output): the backup, the version from before it, replaced that {rel}"
        )
    os.replace(backup, target)
    return f"a killed verification had left {rel} moved to {shown}: it was put back first"


def _why_not_new(out: Output) -> str | None:
    try:
        info = os.lstat(out.target)
    except FileNotFoundError:
        return "missing after the command"
    except OSError as exc:
        return f"unreadable after the command ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return "a symlink, not a file the command wrote"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size == 0:
        return "empty"
    if out.staged == (info.st_dev, info.st_ino):
        return "the previous version itself, put back by another process"
    if info.st_mtime_ns < out.since_ns:
        return "last modified before the command started, so not written by it"
    return None


def _keep(out: Output) -> str:
    if out.staged is not None and os.path.lexists(out.backup):
        _remove(out.backup)
    return "newly written"


def _restore(out: Output) -> str:
    target = out.target
    if out.staged is not None:
        if not os.path.lexists(out.backup):
            with contextlib.suppress(OSError):
                info = os.lstat(target)
                if (info.st_dev, info.st_ino) == out.staged:
                    return "the previous version is in place"
            return (
                f"its previous version, moved to {out.backup.name}, was gone (another process "
                "took it), so there was nothing to restore"
            )
        if os.path.lexists(target):
            _remove(target)
        os.replace(out.backup, target)
        return "the previous version was restored"
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return "there was no previous version"
    if stat.S_ISDIR(info.st_mode):
        return "there was no previous version; the directory there was left"
    if info.st_mtime_ns < out.since_ns:
        return "there was no previous version; the older file there is not its and was left"
    target.unlink()
    return "there was no previous version; what the command wrote was removed"


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        path.unlink()


def _now_ns() -> int:
    """The clock file times are stamped from (Linux: the coarse realtime clock)."""
    return time.clock_gettime_ns(_COARSE) if _COARSE is not None else time.time_ns()


def _try_lock(root: Path) -> int | None:
    """An fd holding ``root``'s flock, ``None`` where it cannot be taken (no flock).

    Raises:
        BlockingIOError: another process holds it.
    """
    try:
        import fcntl  # lazy: POSIX only
    except ImportError:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(os.path.realpath(root), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
            raise BlockingIOError(exc.errno, exc.strerror) from None
        return None  # a file system without flock: unlocked
    return fd


def _lock(root: Path, wait_ms: int) -> int | None:
    deadline = time.monotonic() + wait_ms / 1000
    while True:
        try:
            return _try_lock(root)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise RegenerateError(
                    f"verifier_fault: regenerates: another verification (a run's, or a "
                    f"`prompt-runner verify`) has been regenerating outputs in {root} for "
                    f"{wait_ms} ms and still holds its lock; nothing was run -- let it finish, "
                    "then verify again"
                ) from None
            time.sleep(LOCK_POLL_S)
