"""Provider option maps: which maps reach which provider, and refusing one that
reaches none.

The maps that reach a prompt's provider (:func:`option_maps`: ``adapter_opts``,
``sdk_opts``, ``<provider>_opts``, and for Codex also ``codex_thread_opts``)
are merged key by key. A map's ``model``, ``reasoning_effort``,
``system_prompt``, ``append_system_prompt`` or ``max_turns``
(:data:`LIFTED_KEYS`) is that top-level key, set at the map's level.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from ..packet.loader import Packet
from ..packet.models import PROVIDER_OPTION_KEYS
from .budget import PROMPT_KEY
from .prompt_plan import PromptPlan

MAP_LEVELS = ("profile", "packet", "prompt")  # the levels that carry option maps
PROVIDER_MAPS: dict[str, tuple[str, ...]] = {"codex": ("codex_opts", "codex_thread_opts")}
# Keys a provider option map may carry (the reference's provider schemas list
# them) that mean the same as the top-level key; they are resolved with it.
LIFTED_KEYS = ("model", "reasoning_effort", "system_prompt", "append_system_prompt", "max_turns")


def option_maps(provider: str) -> tuple[str, ...]:
    """The option maps that reach ``provider``, merged in this order (later wins):
    ``adapter_opts``, ``sdk_opts``, then its own (``codex_opts`` and
    ``codex_thread_opts`` for Codex, ``<provider>_opts`` for the others)."""
    own = PROVIDER_MAPS.get(provider, (f"{provider}_opts",))
    return ("adapter_opts", "sdk_opts", *(m for m in own if m in PROVIDER_OPTION_KEYS))


def map_provider(name: str) -> str | None:
    """The provider a provider-specific option map belongs to (``None``: every provider)."""
    if name in ("adapter_opts", "sdk_opts"):
        return None
    for provider, own in PROVIDER_MAPS.items():
        if name in own:
            return provider
    return name.removesuffix("_opts")


def lifted(key: str, value: Any, *, key_path: str, file: str) -> Any:
    """A shared key written inside an option map (``claude_opts.reasoning_effort``),
    checked as its top-level twin would be.

    Raises:
        UserError: the value has the wrong type.
    """
    if key == "max_turns":
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        raise UserError(
            "must be a whole number of at least 1",
            file=file,
            key=key_path,
            fix="set it to 1 or more",
        )
    if isinstance(value, str) and value.strip():
        return value
    raise UserError(
        "must be a non-empty string",
        file=file,
        key=key_path,
        fix=f'write {key} as a quoted string, e.g. {key}: "high"',
    )


def check_unused_maps(packet: Packet, prompts: tuple[PromptPlan, ...]) -> None:
    """Refuse a provider option map that would reach no provider: one in the
    manifest that no prompt's provider takes, or one in a prompt's front matter
    that its own provider does not take; and any key but ``max_cost_usd``
    reaching the simulated provider, which runs no CLI. A profile's maps are
    not checked (a profile serves many packets); nor is anything under an
    explicit ``--provider``, which overrides what the packet was written for.

    Raises:
        UserError: naming the file, the map and the fix.
    """
    used = {
        name
        for pp in prompts
        for target in (pp, *pp.failover)  # a failover provider takes the maps too
        for name in option_maps(target.provider)
    }
    for name in PROVIDER_OPTION_KEYS:
        if name not in used and getattr(packet.manifest, name, None):
            raise UserError(
                f"{name} is set but no prompt of this packet runs on provider "
                f"{map_provider(name)}, so it would reach nothing",
                file=packet.display(packet.manifest_file),
                key=name,
                fix=f"remove {name}, or run a prompt on provider {map_provider(name)}",
            )
    for pp in prompts:
        _check_prompt_maps(pp)


def _check_prompt_maps(pp: PromptPlan) -> None:
    for key in pp.provider_options if pp.provider == "simulated" else ():
        if key != PROMPT_KEY:
            name, where = pp.option_sources[key]
            raise UserError(
                f"the simulated provider runs no CLI and reads only {PROMPT_KEY}, so "
                f"{key} would reach nothing",
                file=where,
                key=f"{name}.{key}",
                fix=f"remove {key}, or run the prompt on a CLI provider",
            )
    maps = option_maps(pp.provider)
    for name in PROVIDER_OPTION_KEYS:
        if name not in maps and getattr(pp.prompt.front, name, None):
            raise UserError(
                f"{name} is set but this prompt runs on provider {pp.provider}, so it "
                "would reach nothing",
                file=pp.prompt.file,
                key=name,
                fix=f"remove {name}, or set provider: {map_provider(name)} in this prompt",
            )
