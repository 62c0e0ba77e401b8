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


def effort_values() -> dict[str, tuple[str, ...]]:
    """Provider name -> the ``reasoning_effort`` values it accepts, for every
    provider that has an effort setting (the CLI adapters' own ``efforts``;
    each adapter module is imported)."""
    out: dict[str, tuple[str, ...]] = {}
    for name in PROVIDERS:
        if name == "simulated":
            continue
        efforts = getattr(get_provider(name), "efforts", None)
        if efforts is not None:
            out[name] = tuple(efforts)
    return out


def any_effort() -> tuple[str, ...]:
    """Every ``reasoning_effort`` value some provider accepts, the longest list's
    order first (``none, minimal, low, medium, high, xhigh, max``)."""
    seen: dict[str, None] = {}
    for efforts in sorted(effort_values().values(), key=len, reverse=True):
        seen.update(dict.fromkeys(efforts))
    return tuple(seen)


def refuse_unknown_effort(effort: str | None) -> None:
    """Refuse a ``reasoning_effort`` no provider accepts (``None``: none given).

    Raises:
        UserError: key ``reasoning_effort``, every provider's values as the fix.
    """
    if effort is None:
        return
    allowed = any_effort()
    if effort in allowed:
        return
    per = "; ".join(f"{name}: {', '.join(e)}" for name, e in effort_values().items())
    raise UserError(
        f"{effort!r} is not a value any provider accepts",
        key="reasoning_effort",
        fix=f"use one of {', '.join(allowed)} ({per})",
    )
