"""The Temporal engine's worker: not built yet (``fleet worker``)."""

from __future__ import annotations

from typing import Any, NoReturn

from .client import _not_yet


def run_worker(**_kwargs: Any) -> NoReturn:
    _not_yet()
