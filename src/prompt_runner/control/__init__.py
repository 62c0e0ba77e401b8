"""Control plane: the file transport (:mod:`.store`) and the request vocabulary (:mod:`.requests`).

Standard library only, so ``control status`` starts fast. The names below are
loaded from their modules on first use: ``control status`` imports
``control.runs`` alone, without the store's event stream and inbox or the
requests' ``datetime``.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
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

_FROM = {
    "COMMANDS": "requests",
    "VIEW_SETTINGS": "requests",
    "build_request": "requests",
    "validate_params": "requests",
    "validate_request": "requests",
    "ControlStore": "store",
    "PendingRequest": "store",
}


def __getattr__(name: str) -> object:
    """The names of ``__all__``, imported from their module on first use."""
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # lazy: only a caller of these names pays for them

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
