"""``with`` support for the state writers that hold a file open and for the locks
(one copy of each)."""

from __future__ import annotations

from types import TracebackType

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control`)
if TYPE_CHECKING:
    from typing import Self


class Closing:
    """Base of an object with a ``close()``: ``with obj:`` closes it on the way out."""

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds; idempotent (subclasses implement it)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Holding:
    """Base of a lock with ``acquire()`` and ``release()``: ``with lock:`` acquires
    it and releases it on the way out."""

    __slots__ = ()

    def acquire(self) -> None:
        """Take the lock (subclasses implement it)."""
        raise NotImplementedError

    def release(self) -> None:
        """Give the lock back (subclasses implement it)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
