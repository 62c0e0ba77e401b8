"""The Temporal engine's client side: not built yet (``fleet submit`` of ``engine: temporal``)."""

from __future__ import annotations

from typing import NoReturn

from ...errors import InfrastructureError


def _not_yet() -> NoReturn:
    raise InfrastructureError("the Temporal engine is not built yet in this version")


def submit(fleet: object) -> NoReturn:
    _not_yet()


def status(fleet: object) -> NoReturn:
    _not_yet()


def stop(fleet: object, *, after_prompt: bool, author: str | None) -> NoReturn:
    _not_yet()


def steer(
    fleet: object, workspace: str, text: str, *, author: str | None, wait_s: float
) -> NoReturn:
    _not_yet()
