"""The value objects of :mod:`prompt_runner.proc`: what to start and how it ended.

Plain frozen classes with ``__slots__`` rather than dataclasses: importing
``dataclasses`` loads ``inspect`` (``ast``, ``dis``, ``tokenize``), over 5 ms
of a short command's start-up (``watch --once``), and this module is on that
path. They behave as the frozen, slotted dataclasses they were: keyword or
positional construction with the same defaults, equality and hash over the
fields in order, a ``repr`` naming each field, and assignment refused
(``AttributeError``). Standard library only, nothing imported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs import time on the watch path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Literal

    Timeout = Literal["deadline", "idle"]
else:
    Timeout = str

DEFAULT_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL."""

INTERRUPT_GRACE_S = 5.0
"""Seconds between SIGINT and SIGTERM when a spawned child is interrupted."""

EXIT_DRAIN_S = 0.5
"""Seconds a finished child's output pipes are still read after its leader
exited, while something it left behind (``cmd &`` in a verify command, a
hook's background job) holds them open; then what it left in its group is
ended -- as it always is once the leader is done -- and the rest read. The
child finished when its leader did: a background process holding the pipe
never turns a finished command into a timed-out one."""


class Frozen:
    """Base of a frozen value: its fields (``_fields``, in order, also its
    ``__slots__`` and its ``__init__``'s parameters) are set once, in ``__init__``,
    through :func:`object.__setattr__`, and never after; equality (same class
    only), hash, repr, copy and pickle go over them."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Frozen)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"

    def __reduce__(self) -> tuple[type[Frozen], tuple[Any, ...]]:
        # copy, deepcopy and pickle rebuild it through __init__ (its parameters
        # are the fields, in order), as they did the frozen dataclass
        return (self.__class__, self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


_set = object.__setattr__


class ProcRequest(Frozen):
    """One process to start (never through a shell).

    Attributes:
        argv: program and arguments; ``argv[0]`` is looked up on ``env["PATH"]``.
        cwd: working directory.
        env: the full environment of the child (``None`` = the runner's own).
        stdin_text: written to stdin, which is then closed (``None`` = /dev/null).
        deadline_ms: bound on the whole run in milliseconds (``None`` = none).
        idle_ms: bound on the time without any output in milliseconds
            (``None`` = none; enforced for spawned children).
        grace_s: seconds between SIGTERM and SIGKILL when the group is ended.
        interrupt_grace_s: seconds between SIGINT and SIGTERM when a spawned
            child is interrupted.
    """

    _fields = (
        "argv",
        "cwd",
        "env",
        "stdin_text",
        "deadline_ms",
        "idle_ms",
        "grace_s",
        "interrupt_grace_s",
    )
    __slots__ = _fields
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] | None
    stdin_text: str | None
    deadline_ms: int | None
    idle_ms: int | None
    grace_s: float
    interrupt_grace_s: float

    def __init__(
        self,
        argv: tuple[str, ...],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        stdin_text: str | None = None,
        deadline_ms: int | None = None,
        idle_ms: int | None = None,
        grace_s: float = DEFAULT_GRACE_S,
        interrupt_grace_s: float = INTERRUPT_GRACE_S,
    ) -> None:
        _set(self, "argv", argv)
        _set(self, "cwd", cwd)
        _set(self, "env", env)
        _set(self, "stdin_text", stdin_text)
        _set(self, "deadline_ms", deadline_ms)
        _set(self, "idle_ms", idle_ms)
        _set(self, "grace_s", grace_s)
        _set(self, "interrupt_grace_s", interrupt_grace_s)


class ProcResult(Frozen):
    """How a child ended (or why it never started).

    Attributes:
        argv: the argv that was started.
        returncode: exit status (negative = killed by that signal); ``None``
            when the process never started.
        stdout, stderr: the whole decoded output (UTF-8, replacement on bad
            bytes); empty when it was streamed to a sink. A spawned child's
            ``stderr`` is its last lines.
        timeout: the bound that ended it (``"deadline"`` or ``"idle"``), else ``None``.
        missing: the executable was not found.
        start_error: why the process could not start (missing or otherwise).
        interrupted: the caller interrupted it (SIGINT first).
        terminated: the caller ended it (SIGTERM, then SIGKILL).
        duration_ms: wall time in milliseconds.
    """

    _fields = (
        "argv",
        "returncode",
        "stdout",
        "stderr",
        "timeout",
        "missing",
        "start_error",
        "interrupted",
        "terminated",
        "duration_ms",
    )
    __slots__ = _fields
    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timeout: Timeout | None
    missing: bool
    start_error: str | None
    interrupted: bool
    terminated: bool
    duration_ms: int

    def __init__(
        self,
        argv: tuple[str, ...],
        returncode: int | None,
        stdout: str = "",
        stderr: str = "",
        timeout: Timeout | None = None,
        missing: bool = False,
        start_error: str | None = None,
        interrupted: bool = False,
        terminated: bool = False,
        duration_ms: int = 0,
    ) -> None:
        _set(self, "argv", argv)
        _set(self, "returncode", returncode)
        _set(self, "stdout", stdout)
        _set(self, "stderr", stderr)
        _set(self, "timeout", timeout)
        _set(self, "missing", missing)
        _set(self, "start_error", start_error)
        _set(self, "interrupted", interrupted)
        _set(self, "terminated", terminated)
        _set(self, "duration_ms", duration_ms)

    @property
    def timed_out(self) -> bool:
        """True when a time bound passed and the group was ended."""
        return self.timeout is not None

    @property
    def ok(self) -> bool:
        """True when the process ran and exited 0 in time."""
        return self.returncode == 0 and self.timeout is None


def decode(data: bytes | None) -> str:
    """``data`` as text (UTF-8, replacement on bad bytes); ``""`` for none."""
    if not data:
        return ""
    return data.decode("utf-8", errors="replace")
