"""Control plane: the file transport (:mod:`.store`) and the request vocabulary (:mod:`.requests`).

Standard library only, so ``control status`` starts fast.
"""

from prompt_runner.control.requests import (
    COMMANDS,
    VIEW_SETTINGS,
    build_request,
    validate_params,
    validate_request,
)
from prompt_runner.control.store import ControlStore, PendingRequest

__all__ = [
    "COMMANDS",
    "VIEW_SETTINGS",
    "ControlStore",
    "PendingRequest",
    "build_request",
    "validate_params",
    "validate_request",
]
