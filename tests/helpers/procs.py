"""Watching real processes a test started: alive or not, and waiting for a condition."""

from __future__ import annotations

import time
from collections.abc import Callable

import psutil


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_for(predicate: Callable[[], object], seconds: float = 30) -> bool:
    """Poll ``predicate`` every 50 ms for up to ``seconds``; whether it came true."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
