"""A prompt's recovery config: deep-merged level by level (profile < packet <
prompt) over the built-in defaults, then validated; and the levels of its
``recovery.failover`` entries (:func:`failover_levels`)."""

from __future__ import annotations

import copy
import difflib
import functools
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import UserError
from ..packet.loader import Packet, Prompt
from ..packet.model_types import PROVIDER_OPTION_KEYS
from ..packet.models import FailoverTarget, Profile, RecoveryConfig
from ..packet.validation import validate_model
from ..providers.failure import FAILURE_CLASSES
from ..providers.registry import get_provider, provider_names
from .budget import PROMPT_KEY
from .launch import request_for
from .options import PROMPT_KEYS
from .prompt_plan import PromptPlan

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
            check_failover_shape(raw, file)
            check_class_names(
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


def check_class_names(recovery: RecoveryConfig, where: str) -> None:
    """Refuse a ``retry.class_attempts`` key naming no failure class (``UserError``
    naming ``where`` and the key)."""
    for name in recovery.retry.class_attempts:
        if name not in FAILURE_CLASSES:
            raise UserError(
                f"unknown failure class {name!r}",
                file=where,
                key=f"recovery.retry.class_attempts.{name}",
                fix=f"use one of {', '.join(FAILURE_CLASSES)}",
            )


def check_failover_shape(raw: Mapping[str, Any], file: str) -> None:
    """Refuse a level's ``recovery.failover`` that is not a list of mappings, with
    the mapping form in the fix (``failover: codex`` and ``failover: [codex]``
    would otherwise be told to write a list, then a mapping).

    Args:
        raw: one level's ``recovery`` as written.
        file: that level's file (for errors).

    Raises:
        UserError: naming ``recovery.failover`` (or ``recovery.failover[i]``).
    """
    value = raw.get("failover")
    if value is None or (
        isinstance(value, list) and all(isinstance(entry, Mapping) for entry in value)
    ):
        return
    if isinstance(value, list):
        index, entry = next((i, e) for i, e in enumerate(value) if not isinstance(e, Mapping))
        raise UserError(
            f"{entry!r} is not a mapping",
            file=file,
            key=f"recovery.failover[{index}]",
            fix=f"write each entry as a mapping, e.g. [{{provider: {_example(entry)}}}]",
        )
    if isinstance(value, Mapping):
        problem, example = "is a mapping, not a list", str(value.get("provider") or "codex")
    else:
        problem, example = f"{value!r} is not a list", _example(value)
    raise UserError(
        problem,
        file=file,
        key="recovery.failover",
        fix=f"write it as a list of mappings, e.g. [{{provider: {example}}}]",
    )


def _example(value: Any) -> str:
    """A provider name for an example: ``value`` when it is one, else ``codex``."""
    return value if isinstance(value, str) and value in provider_names() else "codex"


_ENTRY_KEYS = ("provider", *sorted(FAILOVER_KEYS))


def failover_levels(recovery: RecoveryConfig, file: str) -> tuple[dict[str, Any], ...]:
    """Each ``recovery.failover`` entry as a plan level above every other one.

    Each entry is checked as a prompt's front matter is (the same keys' types:
    ``timeout: true``, ``model: 5`` or ``codex_opts: 3`` are refused), before
    its target's plan is resolved; :func:`check_failover_targets` then asks the
    target's provider about the resolved options, as the prompt's own are.

    Args:
        recovery: the prompt's resolved recovery config.
        file: the file that set ``recovery.failover`` (for errors).

    Returns:
        The entries in order, each a mapping of the prompt keys and option maps
        it sets (validated; an explicit ``null`` kept) with ``provider`` set.

    Raises:
        UserError: an entry sets a key a prompt cannot (with the closest known
            key), has no provider or an unknown one, or a value of the wrong
            type; naming ``recovery.failover[i].KEY``.
    """
    levels = []
    for index, entry in enumerate(recovery.failover):
        key = f"recovery.failover[{index}]"
        for name in entry:
            if name == "recovery":
                raise UserError(
                    "a failover target has no recovery of its own (it runs with the "
                    "prompt's, with fresh retry budgets)",
                    file=file,
                    key=f"{key}.recovery",
                    fix="remove it, or set the key in the prompt's recovery",
                )
            if name not in _ENTRY_KEYS:
                close = difflib.get_close_matches(str(name), _ENTRY_KEYS, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise UserError(
                    f"unknown key {name!r}",
                    file=file,
                    key=f"{key}.{name}",
                    fix=f"{hint}use provider, model, a prompt key (reasoning_effort, "
                    "timeout...) or a provider option map (codex_opts...)",
                )
        provider = entry.get("provider")
        if provider not in provider_names():
            raise UserError(
                "names no provider"
                if provider is None
                else f"names no known provider (got {provider!r})",
                file=file,
                key=f"{key}.provider",
                fix=f"set provider: to one of {', '.join(provider_names())}",
            )
        target = validate_model(FailoverTarget, dict(entry), file=file, prefix=key)
        levels.append(target.model_dump(exclude_unset=True))
    return tuple(levels)


def check_failover_targets(
    packet: Packet, pp: PromptPlan, file: str, where: Callable[[str], str]
) -> None:
    """Ask each failover target's provider whether it supports the target's
    resolved options, as ``plan`` asks the prompt's own provider (an effort
    level, a permission mode, an option key or value the CLI lacks).

    Args:
        packet: the loaded packet.
        pp: the prompt's own plan; its :attr:`~PromptPlan.failover` are checked.
        file: the file that set ``recovery.failover``.
        where: level name (``profile``, ``packet``, ``prompt``) -> its file.

    Raises:
        UserError: (exit 2) naming ``recovery.failover[i].KEY`` and ``file`` when
            the entry set the refused value; otherwise the key and file that
            did (a packet's ``codex_opts`` reaching the target), saying which
            failover target refused it.
    """
    entries = failover_levels(pp.recovery, file)
    for index, (target, entry) in enumerate(zip(pp.failover, entries, strict=True)):
        try:
            _check_simulated(target)
            get_provider(target.provider).validate_options(
                request_for(packet, target, target.prompt.body)
            )
        except UserError as exc:
            if exc.file is not None:
                raise
            prefix = f"recovery.failover[{index}]"
            key, at = _refused_key(target, entry, exc.key or "", prefix, file, where)
            if key.startswith(prefix):
                raise UserError(exc.reason, file=at, key=key, fix=exc.fix) from None
            raise UserError(
                f"{exc.reason} (the failover target {prefix} runs on {target.provider})",
                file=at,
                key=key or None,
                fix=exc.fix,
            ) from None


def _check_simulated(target: PromptPlan) -> None:
    """A simulated target reads only ``max_cost_usd`` of its options, as a
    prompt on the simulated provider (:func:`~.maps.check_unused_maps`).

    Raises:
        UserError: keyed ``simulated_opts.KEY`` (the caller names the map that set it).
    """
    for key in target.provider_options if target.provider == "simulated" else ():
        if key != PROMPT_KEY:
            raise UserError(
                f"the simulated provider runs no CLI and reads only {PROMPT_KEY}, so "
                f"{key} would reach nothing",
                key=f"simulated_opts.{key}",
                fix=f"remove {key}, or fail over to a CLI provider",
            )


def _refused_key(
    target: PromptPlan,
    entry: Mapping[str, Any],
    key_path: str,
    prefix: str,
    file: str,
    where: Callable[[str], str],
) -> tuple[str, str]:
    """``(key path, file)`` to name for a refused ``key_path`` of a failover target:
    under ``prefix`` (``recovery.failover[i]``, in ``file``) when ``entry`` set
    it, else the level's key and file that did."""
    head, dot, rest = key_path.partition(".")
    if dot and head == f"{target.provider}_opts":
        origin = target.option_sources.get(rest.split(".")[0])
        if origin is not None:
            name, at = origin
            given = entry.get(name)
            if isinstance(given, Mapping) and rest.split(".")[0] in given:
                return f"{prefix}.{name}.{rest}", file
            return f"{name}.{rest}", at
        return key_path, target.prompt.relfile
    level = target.sources.get(head)
    if level == "failover":
        return f"{prefix}.{key_path}", file
    if level in ("profile", "packet", "prompt"):
        return key_path, where(level)
    return key_path, target.prompt.relfile
