"""Canonical events: the one event schema every provider emits (SPEC 4).

Rendering, the control plane, the JSONL event logs and state all consume these,
whatever provider produced them. An event is a kind plus a flat JSON-safe
``data`` mapping and a wall-clock timestamp in epoch milliseconds.

Kinds and their ``data`` keys (all optional unless marked):

* ``session_started`` -- ``session_id`` (required), ``model``, ``provider``, ``cwd``
* ``assistant_text`` -- ``text`` (required)
* ``thinking`` -- ``text`` (required)
* ``tool_use`` -- ``tool`` (required), ``tool_id``, ``input`` (mapping)
* ``tool_result`` -- ``tool_id``, ``output`` (str), ``is_error`` (bool)
* ``file_change`` -- ``path`` (required), ``change`` (``create|modify|delete``), ``repo``;
  when the provider's stream says what changed: ``patch`` (unified diff text),
  ``patch_source`` (``tool``: the tool's own patch, or its own exact content of
  a created file, possibly reformatted as unified-diff text; ``reconstructed``:
  rebuilt by us from the tool's input, never to be shown as the tool's patch),
  ``added``, ``removed`` (line counts of the patch). No ``patch`` when the
  stream carries none (Codex and most others): nothing is invented
* ``usage`` -- ``input_tokens``, ``output_tokens``, ``cached_tokens``, ``cost_usd``
* ``result`` -- ``ok`` (required bool), ``text``, ``session_id``
* ``error`` -- ``class``, ``message`` (required), ``provider_code``, ``fatal``
  (``False`` for a problem the session survived, e.g. a permission denial the
  agent worked around; absent or ``True`` when the session failed)
* ``steer`` -- ``text``, ``delivery`` (runner-emitted when a steer is delivered)
* ``usage_window`` -- a usage window the provider reported (``provider``,
  ``window`` (its kind: ``five_hour``...), ``status``, ``utilization``,
  ``resets_at``, ``source``, ``window_minutes``; see
  :class:`prompt_runner.providers.usage.UsageWindow`)
* ``usage_wait_started`` -- runner-emitted: the run waits for a usage window
  (``wait``: ``usage_limit|pace``, ``provider``, ``window``, ``resets_at``,
  ``waiting_until``, ``reason``)
* ``usage_wait_ended`` -- runner-emitted: the same keys, ``waited_ms``, ``woken``
  (``control wake`` ended it early)
* ``raw`` -- ``type`` (the provider's own event type), ``line`` (the original
  line, capped): an event the parser does not know, kept rather than dropped
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

EventKind = Literal[
    "session_started",
    "assistant_text",
    "thinking",
    "tool_use",
    "tool_result",
    "file_change",
    "usage",
    "result",
    "error",
    "steer",
    "usage_window",
    "usage_wait_started",
    "usage_wait_ended",
    "raw",
]

EVENT_KINDS: tuple[str, ...] = get_args(EventKind)


def now_ms() -> int:
    """Wall-clock time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


class _Default:
    """Stands for an argument :class:`Event` was not given (its field's default)."""

    def __repr__(self) -> str:
        return "<default>"


_DEFAULT: Any = _Default()


@dataclass(frozen=True, slots=True, init=False)
class Event:
    """One canonical event.

    Attributes:
        kind: one of :data:`EVENT_KINDS`.
        data: JSON-safe payload; keys per kind in the module docstring
            (default: a new empty dict).
        at_ms: wall-clock epoch milliseconds when the event was observed
            (default: :func:`now_ms` as the event is made).
    """

    kind: EventKind
    data: Mapping[str, Any] = field(default_factory=dict)
    at_ms: int = field(default_factory=now_ms)

    def __init__(
        self, kind: EventKind, data: Mapping[str, Any] = _DEFAULT, at_ms: int = _DEFAULT
    ) -> None:
        # The dataclass's own __init__, written out: each slot set through its
        # descriptor rather than object.__setattr__ (an event is made per line
        # of a provider's stream; this costs about half as much).
        _SET_KIND(self, kind)
        _SET_DATA(self, {} if data is _DEFAULT else data)
        _SET_AT_MS(self, time.time_ns() // 1_000_000 if at_ms is _DEFAULT else at_ms)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"kind": ..., "at_ms": ..., **data}`` (JSON-safe)."""
        return {"kind": self.kind, "at_ms": self.at_ms, **dict(self.data)}


_SET_KIND = Event.__dict__["kind"].__set__
_SET_DATA = Event.__dict__["data"].__set__
_SET_AT_MS = Event.__dict__["at_ms"].__set__


EventSink = Callable[[Event], None]
"""A callable that receives every event of a session, in order, on any thread."""
