"""The one error tree of Prompt Runner.

Every error that may reach the user derives from :class:`PromptRunnerError` and
carries the process exit code the CLI maps it to (SPEC 10):

* ``1`` -- the work failed (a prompt failed, lint found errors);
* ``2`` -- bad usage or bad input (:class:`UserError` and its children);
* ``3`` -- an infrastructure fault (:class:`InfrastructureError`: verifier fault,
  lock held, provider CLI missing).

A :class:`UserError` is rendered as one sentence that names the file, the key
path and the fix, e.g.::

    prompts/03_x.prompt.md: verify.commands[0].timeout_ms: must be a positive
    integer; set it to the command's deadline in milliseconds, e.g. 60000.

This module is imported on every CLI start, so it must stay dependency free.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


class PromptRunnerError(Exception):
    """Base of every error Prompt Runner raises on purpose.

    Attributes:
        exit_code: the CLI exit code for this error (SPEC 10).
    """

    exit_code: int = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UserError(PromptRunnerError):
    """Bad input or bad usage: a packet, prompt, flag or request is wrong.

    Args:
        message: what is wrong, as a clause ("must be a positive integer").
        file: the file the bad input came from, if any.
        key: the dotted key path inside that file ("verify.commands[0].exec").
        fix: what the user should do about it ("set it to ...").
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        key: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.reason = message
        self.file = shown_path(file) if file is not None else None
        self.key = key
        self.fix = fix
        super().__init__(_sentence(self.file, key, message, fix))


class ArgumentError(UserError, TypeError):
    """A library call got an argument it does not take, or a value of the wrong shape.

    A :class:`UserError` (its sentence names the argument and the fix) that is
    also a ``TypeError``, which is what Python raises for a bad keyword argument.
    """


class CallbackError(PromptRunnerError):
    """An observer callback given to the library raised (re-raised after the run).

    The run is never stopped by an observer: the exception is logged when it
    happens (logger ``prompt_runner``), the run goes on to its end, and then
    this error is raised from the first such exception (``__cause__``).

    Attributes:
        result: the finished run's :class:`~prompt_runner.runner.result.RunResult`.
        callback: the name of the first callback that raised (``on_event``...).
        errors: every ``(callback name, exception)`` raised during the run.
    """

    def __init__(self, result: object, errors: list[tuple[str, BaseException]]) -> None:
        self.result = result
        self.errors = errors
        self.callback, first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            f"observer {self.callback} raised {first!r}{more}; the run itself finished "
            f"({getattr(result, 'status', '?')}, exit code {getattr(result, 'exit_code', '?')}) "
            "and its result is this error's .result"
        )


class NotImplementedYet(UserError):
    """A CLI command exists in the surface but is owned by a later issue."""

    def __init__(self, command: str) -> None:
        super().__init__(
            f"`{command}` is not implemented yet",
            fix="track its issue; nothing was changed",
        )


class StateError(UserError):
    """A record of truth under ``.prompt_runner/`` is unreadable or corrupt.

    Never silently reset: the user decides (``--new-run``, restore, or delete).
    """


class PacketChangedError(UserError):
    """The packet changed since the run it would resume started (fails closed)."""


class InfrastructureError(PromptRunnerError):
    """Something outside the work broke: the run cannot continue honestly."""

    exit_code = 3


class LockHeldError(InfrastructureError):
    """Another live run holds the packet's ``run.pid``."""

    def __init__(self, pid_file: Path, pid: int) -> None:
        self.pid_file = pid_file
        self.pid = pid
        super().__init__(
            f"{pid_file}: a run is already active (pid {pid}); wait for it to finish "
            f"or stop it, then run again"
        )


class StorageError(InfrastructureError, OSError):
    """A file Prompt Runner must write (or read) is unusable: the file system is
    read-only or full, permission is denied, or a directory on the way is a file.

    Also an ``OSError`` (``errno``, ``strerror`` and ``filename`` are kept), so
    code that tolerates an I/O fault (the control plane's live view) still does.

    Args:
        path: the file or directory that could not be used.
        exc: the operating system's error.
        doing: what failed, as a past participle ("written", "read", "created").
    """

    def __init__(self, path: str | Path, exc: OSError, *, doing: str = "written") -> None:
        cause, fix = _storage_cause(str(path), exc)
        InfrastructureError.__init__(self, f"{shown_path(path)}: cannot be {doing}: {cause}; {fix}")
        self.errno = exc.errno
        self.strerror = exc.strerror
        self.filename = str(path)


class VerifierFaultError(InfrastructureError):
    """The verifier itself could not judge the work (SPEC 2.6 ``verifier_fault``)."""


class ProviderMissingError(InfrastructureError):
    """The provider's CLI is not on PATH."""


def shown_value(value: object) -> str:
    """A value read from YAML or JSON as a sentence shows it: in the file's own
    words, never Python's (``True``, ``None``). A string is quoted
    (``'fail'``); ``true``/``false`` and null name the unquoted words YAML 1.1
    reads as them (the text as written is gone once it is read); a number is
    itself; a list or mapping is named, not dumped. At most 70 characters.
    """
    if value is True:
        shown = "true (YAML reads an unquoted yes, on or true as a boolean)"
    elif value is False:
        shown = "false (YAML reads an unquoted no, off or false as a boolean)"
    elif value is None:
        return "an empty value (YAML reads nothing, ~ or null as null)"
    elif isinstance(value, list | tuple):
        return "a list"
    elif isinstance(value, dict):
        return "a mapping"
    else:
        shown = repr(value) if isinstance(value, str) else str(value)
    return shown if len(shown) <= 70 else shown[:67] + "..."


SHOWN_FROM_ENV = "PROMPT_RUNNER_SHOWN_FROM"
"""Where the reader of a detached runner's messages is: ``start`` launches the
runner (whose working directory is the packet's) with the starter's current
directory in it, and the runner's CLI takes it (:func:`show_paths_from`), so
the sentence ``start`` relays names files as the user would, from there."""

_shown_from: str | None = None


def show_paths_from(directory: str | None) -> None:
    """Name files in messages relative to ``directory`` (absolute) instead of the
    current directory; ``None`` (or not absolute) goes back to the current directory."""
    import os

    global _shown_from
    _shown_from = directory if directory and os.path.isabs(directory) else None


def shown_base() -> str:
    """The directory messages name files from: the current directory, or a
    detached runner's starter's (:func:`show_paths_from`).

    Raises:
        OSError: the current directory is gone (and no starter's was given).
    """
    import os

    return _shown_from or os.getcwd()


def shown_path(path: str | Path) -> str:
    """``path`` as messages name it, so it opens from where the user is: an
    absolute path under the current directory relative to it
    (``prompts/01_x.prompt.md`` inside the packet, ``demo/prompts/...`` beside
    it), any other absolute path as it is, a relative one as given (the user's
    own spelling, or already shown this way). A detached runner's "current
    directory" is its starter's (:func:`show_paths_from`)."""
    import os

    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        shown = os.path.relpath(text, shown_base())
    except (OSError, ValueError):  # no current directory, or another drive
        return text
    if shown == os.curdir or shown == os.pardir or shown.startswith(os.pardir + os.sep):
        return text  # the current directory itself, or not under it
    return shown


def _storage_cause(path: str, exc: OSError) -> tuple[str, str]:
    """``(cause, fix)`` for an I/O fault on ``path``, worded from its errno."""
    import errno
    import os

    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return (
            f"the disk is full ({exc.strerror})",
            "free space on that file system, then run again",
        )
    if code == errno.EROFS:
        return (
            "the file system is read-only",
            "make it writable, or move the packet somewhere writable",
        )
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied", "give the user running prompt-runner write access to it"
    if code in (errno.ENOTDIR, errno.EEXIST):
        blocker = path
        while blocker and not os.path.exists(blocker):
            parent = os.path.dirname(blocker)
            if parent == blocker:
                break
            blocker = parent
        if os.path.exists(blocker) and not os.path.isdir(blocker):
            what = "it" if blocker == path else blocker
            return f"{what} is a file, not a directory", "move that file away, then run again"
    if code == errno.ENOENT:
        gone = _removed_directory(path)
        if gone is not None:
            return (
                f"the directory {shown_path(gone)} no longer exists (removed while "
                "prompt-runner used it: `git clean -x` removes an ignored state directory)",
                "keep the state directory where nothing cleans it (`--state-dir`), then run again",
            )
    return exc.strerror or repr(exc), "fix the file system, then run again"


def _removed_directory(path: str) -> str | None:
    """The outermost missing directory on ``path``'s way (its parent exists), or
    ``None`` when ``path``'s own directory exists (only the file is missing)."""
    import os

    missing = None
    here = os.path.dirname(os.path.abspath(path))
    while here and not os.path.isdir(here):
        missing = here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return missing


def _sentence(file: str | None, key: str | None, message: str, fix: str | None) -> str:
    parts = [p for p in (file, key) if p]
    head = ": ".join(parts)
    text = f"{head}: {message}" if head else message
    if fix:
        text = f"{text}; {fix}"
    if not text.endswith((".", "?", "!")):
        text += "."
    return text
