"""The last known usage windows of each provider during one run (``RunContext.usage``).

Pacing and the wait a killed runner left read them before each session
(``runner/usage_wait.py``); each session's reported windows are taken in
(:meth:`UsageBook.observe`) and saved to ``state.json`` as ``usage_windows``, so
the next run knows them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..providers.usage import UsageWindow
from ..state.atomic import read_json
from ..state.layout import StateLayout

META_WINDOWS = "usage_windows"
"""``state.json``'s run-meta key of the last known windows per provider."""

META_RECORDED_WAIT = "usage_wait"
"""``state.json``'s run-meta key of the wait in progress (``usage_wait.META_WAIT``)."""


class UsageBook:
    """The last known usage windows of each provider during one run.

    Loaded once from ``state.json`` (``usage_windows``) so a new run knows what
    the last one saw; :meth:`observe` takes what each session reported.
    """

    def __init__(self) -> None:
        self._windows: dict[str, dict[str, UsageWindow]] = {}
        self._loaded = False
        self._recorded_wait: dict[str, Any] | None = None

    def load(self, root: Path | None) -> None:
        """Read the windows the state root ``root`` recorded (once; none without one)."""
        if self._loaded:
            return
        self._loaded = True
        if root is None:
            return
        try:
            doc = read_json(StateLayout(root).state_json)
        except Exception:  # a damaged or absent state.json knows no window
            return
        if not isinstance(doc, Mapping):
            return
        wait = doc.get(META_RECORDED_WAIT)
        self._recorded_wait = dict(wait) if isinstance(wait, Mapping) else None
        saved = doc.get(META_WINDOWS)
        for items in saved.values() if isinstance(saved, Mapping) else ():
            self.observe(w for item in items if (w := UsageWindow.from_dict(item)) is not None)

    def take_recorded_wait(self) -> dict[str, Any] | None:
        """The wait ``state.json`` recorded when it was loaded -- one a runner that
        died mid-wait left -- once (later calls: ``None``)."""
        wait, self._recorded_wait = self._recorded_wait, None
        return wait

    def observe(self, windows: Iterable[UsageWindow]) -> bool:
        """Take newer windows (the latest per provider and kind); ``True`` when any changed."""
        changed = False
        for window in windows:
            mine = self._windows.setdefault(window.provider, {})
            if mine.get(window.kind) != window:
                mine[window.kind] = window
                changed = True
        return changed

    def forget(self, window: UsageWindow) -> None:
        """Drop ``window`` (it has reset: what it said no longer holds)."""
        self._windows.get(window.provider, {}).pop(window.kind, None)

    def of(self, provider: str) -> list[UsageWindow]:
        """The windows last known for ``provider``."""
        return list(self._windows.get(provider, {}).values())

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """``{provider: [window.to_dict(), ...]}`` (``state.json``'s ``usage_windows``)."""
        return {p: [w.to_dict() for w in ws.values()] for p, ws in self._windows.items() if ws}
