"""Run ``prompt-runner`` in-process (fast) and capture what it wrote."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Outcome:
    """Exit code, stdout and stderr of one CLI call."""

    code: int
    out: str
    err: str


PR = Callable[..., Outcome]
"""``pr("run", packet, "--dry-run")`` -> :class:`Outcome`."""
