"""Pieces shared by the store implementations: the lock protocol, the empty
document and the JSON-safety checks applied to everything a store accepts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Protocol

from prompt_runner.state._closing import Holding
from prompt_runner.state.atomic import SCHEMA_VERSION
from prompt_runner.state.untrusted_json import JsonNestingError

STATE_VERSION = 1
"""The ``version`` key of the state document (kept for reference compatibility)."""

_RESERVED_META = frozenset({"schema_version", "version", "prompts", "updated_at"})


class LockLike(Protocol):
    """The run lock as the runner uses it (see :class:`~prompt_runner.state.lock.RunLock`)."""

    def acquire(self) -> None:
        """Take the lock or raise ``LockHeldError``."""
        ...

    def release(self) -> None:
        """Give the lock back; idempotent."""
        ...

    def __enter__(self) -> LockLike: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class NullLock(Holding):
    """An in-process lock that always succeeds (memory and no-op stores)."""

    def acquire(self) -> None:
        """Succeed."""

    def release(self) -> None:
        """Succeed."""


def empty_state() -> dict[str, Any]:
    """The state document before any run."""
    return {"schema_version": SCHEMA_VERSION, "version": STATE_VERSION, "prompts": {}}


def json_copy(value: Any) -> Any:
    """Deep copy through JSON, refusing what a file store could not write.

    Raises:
        TypeError: a value JSON cannot hold.
        ValueError: NaN or an infinity, a circular reference, or nesting too deep
            to encode or decode (a
            :class:`~prompt_runner.state.untrusted_json.JsonNestingError`).
    """
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except RecursionError:
        raise JsonNestingError() from None


_SCALARS = (str, int, float, bool, type(None))


def record_copy(value: Any) -> Any:
    """A deep copy of a record the store folded (JSON values: dicts, lists and
    scalars), ~10x faster than ``copy.deepcopy``, which the runner paid for each
    read of the running prompt: dicts and lists copied, scalars shared (they
    are immutable); any other value -- none is expected -- deep-copied."""
    kind = type(value)
    if kind is dict:
        return {key: record_copy(item) for key, item in value.items()}
    if kind is list:
        return [record_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    import copy  # lazy: never needed for what a fold of JSON gives

    return copy.deepcopy(value)


def check_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Copy prompt ``fields``; ``ValueError`` for ``attempts`` or non-JSON-safe values."""
    if "attempts" in fields:
        raise ValueError("attempts are changed with start_attempt/finish_attempt only")
    copied: dict[str, Any] = json_copy(dict(fields))
    return copied


def check_meta(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Copy run meta ``fields``; ``ValueError`` for reserved keys or non-JSON-safe values."""
    reserved = _RESERVED_META.intersection(fields)
    if reserved:
        raise ValueError(f"run meta may not set {sorted(reserved)}")
    copied: dict[str, Any] = json_copy(dict(fields))
    return copied


def new_attempt(attempt: Mapping[str, Any]) -> dict[str, Any]:
    """Copy an attempt record, defaulting ``status`` to ``"running"``."""
    copied: dict[str, Any] = json_copy(dict(attempt))
    copied.setdefault("status", "running")
    return copied
