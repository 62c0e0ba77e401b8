"""Provider lookup by name, importing each adapter module only when used."""

from __future__ import annotations

import importlib

from ..errors import UserError
from .base import Provider

PROVIDERS: dict[str, str] = {
    "simulated": "prompt_runner.providers.simulated",
    "claude": "prompt_runner.providers.claude",
    "codex": "prompt_runner.providers.codex",
    "gemini": "prompt_runner.providers.gemini",
    "amp": "prompt_runner.providers.amp",
    "cursor": "prompt_runner.providers.cursor",
    "antigravity": "prompt_runner.providers.antigravity",
}


def provider_names() -> tuple[str, ...]:
    """Every provider name the runner knows."""
    return tuple(PROVIDERS)


def get_provider(name: str) -> Provider:
    """Return a new provider instance for ``name``.

    Raises:
        UserError: the name is unknown, or its adapter is not available yet.
    """
    module_name = PROVIDERS.get(name)
    if module_name is None:
        raise UserError(
            f"unknown provider {name!r}",
            key="provider",
            fix=f"use one of {', '.join(PROVIDERS)}",
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise UserError(
            f"provider {name!r} is not implemented yet",
            key="provider",
            fix="use provider: simulated, or another implemented provider",
        ) from exc
    provider: Provider = module.make_provider()
    return provider
