"""A prompt's recovery config: deep-merged level by level (profile < packet <
prompt) over the built-in defaults, then validated; and the levels of its
``recovery.failover`` entries (:func:`failover_levels`)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import UserError
from ..packet.loader import Packet, Prompt
from ..packet.model_types import PROVIDER_OPTION_KEYS
from ..packet.models import Profile, RecoveryConfig
from ..packet.validation import validate_model
from ..providers.failure import FAILURE_CLASSES
from ..providers.registry import provider_names
from .options import PROMPT_KEYS

FAILOVER_KEYS = frozenset(k for k in PROMPT_KEYS if k != "provider") | frozenset(
    PROVIDER_OPTION_KEYS
)
"""What a ``recovery.failover`` entry may set besides ``provider``: the prompt keys
(``model``, ``reasoning_effort``, ``timeout``...) and the provider option maps."""


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``override`` merged in, recursing into mappings."""
    out = {key: _copied(value) for key, value in base.items()}
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = _copied(value)
    return out


_IMMUTABLE = (str, int, float, bool, type(None))


def _copied(value: Any) -> Any:
    """``copy.deepcopy(value)`` for what YAML and ``model_dump`` give, ~10x faster:
    dicts and lists copied, scalars shared, anything else deep-copied."""
    if type(value) is dict:
        return {key: _copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_copied(item) for item in value]
    if type(value) in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


def resolve_recovery(
    packet: Packet, prompt: Prompt, profile: Profile | None, where: Callable[[str], str]
) -> tuple[RecoveryConfig, str]:
    """``(recovery config, the most specific level that set any of it)``.

    An explicit ``retry.max_attempts`` is the budget of every class whose own
    ``class_attempts`` entry the author did not set (the built-in per-class
    defaults apply only when ``max_attempts`` is left alone).

    Args:
        packet, prompt, profile: the levels (profile < packet < prompt).
        where: level name (``profile``, ``packet``, ``prompt``) -> the file
            errors name.

    Raises:
        UserError: a level's config is invalid (naming that level's file) or
            names an unknown failure class.
    """
    given = (
        ("profile", profile.recovery if profile else None),
        ("packet", packet.manifest.recovery),
        ("prompt", prompt.front.recovery),
    )
    if not any(raw for _, raw in given):
        return _built_in(), "built-in"
    defaults = RecoveryConfig().model_dump()
    user_raw: dict[str, Any] = {}
    source = "built-in"
    for level, raw in given:
        if raw:
            # Each level alone first, so an error names the file that holds it.
            alone = deep_merge(defaults, raw)
            file = where(level)
            _check_class_names(
                validate_model(RecoveryConfig, alone, file=file, prefix="recovery"), file
            )
            user_raw = deep_merge(user_raw, raw)
            source = level
    recovery_raw = deep_merge(defaults, user_raw)
    file = where(source) if source != "built-in" else packet.display(packet.manifest_file)
    # Validated before max_attempts is copied into the classes, so a wrong
    # max_attempts is one problem, not one per failure class.
    recovery = validate_model(RecoveryConfig, recovery_raw, file=file, prefix="recovery")
    retry_raw = user_raw.get("retry")
    user_retry: dict[str, Any] = retry_raw if isinstance(retry_raw, dict) else {}
    if "max_attempts" in user_retry:
        explicit = user_retry.get("class_attempts") or {}
        retry = recovery.retry
        classes = {
            name: budget if name in explicit else retry.max_attempts
            for name, budget in retry.class_attempts.items()
        }
        retry = retry.model_copy(update={"class_attempts": classes})
        recovery = recovery.model_copy(update={"retry": retry})
    return recovery, source


@functools.cache
def _built_in() -> RecoveryConfig:
    """The recovery config of a prompt no level configures: the defaults, validated
    (the same value for every such prompt, so made once; the model is frozen)."""
    return RecoveryConfig.model_validate(RecoveryConfig().model_dump())


def _check_class_names(recovery: RecoveryConfig, where: str) -> None:
    for name in recovery.retry.class_attempts:
        if name not in FAILURE_CLASSES:
            raise UserError(
                f"unknown failure class {name!r}",
                file=where,
                key=f"recovery.retry.class_attempts.{name}",
                fix=f"use one of {', '.join(FAILURE_CLASSES)}",
            )


def failover_levels(recovery: RecoveryConfig, file: str) -> tuple[dict[str, Any], ...]:
    """Each ``recovery.failover`` entry as a plan level above every other one.

    Args:
        recovery: the prompt's resolved recovery config.
        file: the file that set it (for errors).

    Returns:
        The entries in order, each a mapping of prompt keys and option maps
        with ``provider`` set.

    Raises:
        UserError: an entry is not a mapping, names no known provider, or sets a
            key a prompt cannot (naming ``recovery.failover[i].KEY``).
    """
    levels = []
    for index, entry in enumerate(recovery.failover):
        key = f"recovery.failover[{index}]"
        provider = entry.get("provider") if isinstance(entry, Mapping) else None
        if provider not in provider_names():
            raise UserError(
                f"names no known provider (got {provider!r})",
                file=file,
                key=f"{key}.provider",
                fix=f"use one of {', '.join(provider_names())}",
            )
        for name in entry:
            if name != "provider" and name not in FAILOVER_KEYS:
                raise UserError(
                    f"unknown key {name!r}",
                    file=file,
                    key=f"{key}.{name}",
                    fix="use provider, model, a prompt key (reasoning_effort, timeout...) "
                    "or a provider option map (codex_opts...)",
                )
        levels.append(dict(entry))
    return tuple(levels)
