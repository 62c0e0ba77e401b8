"""Resolving a packet into its :class:`Plan`: the five precedence levels.

Every plan value is resolved with the precedence of SPEC 2.4::

    built-in defaults < profile < packet manifest < prompt front matter < options

where *options* are the explicit CLI flags or API keyword arguments
(:class:`~prompt_runner.planning.options.RunOptions`). ``recovery`` is
deep-merged level by level (:mod:`~prompt_runner.planning.recovery`); the
provider option maps that reach the prompt's provider are merged key by key
(:mod:`~prompt_runner.planning.maps`). A map's lifted key is set at the map's
level (beside the top-level key at the same level, the top-level key wins).
Each resolved prompt records which level set each key
(:attr:`PromptPlan.sources`), which ``plan --json`` shows.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..packet.gc_pause import gc_paused
from ..packet.loader import Packet, Prompt
from ..packet.models import Profile
from ..packet.notify_config import packet_notify, profile_file
from ..packet.profiles import configured_profile
from ..providers.base import TimeBounds
from ..providers.registry import provider_names
from .agent_owned import validate_agent_owned
from .budget import PROMPT_KEY, RUN_KEY, check_budget
from .maps import LIFTED_KEYS, MAP_LEVELS, check_unused_maps, lifted, option_maps
from .options import BUILTIN, PROMPT_KEYS, RENDER_BUILTIN, RENDER_VALUES, RunOptions
from .plan import Plan
from .prompt_plan import PromptPlan
from .recovery import check_failover_targets, failover_levels, resolve_recovery
from .selection import select_prompts

Levels = list[tuple[str, Mapping[str, Any]]]


@dataclass
class _Merged:
    """The prompt keys and provider options after every level, and who set each."""

    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    provider_options: dict[str, Any] = field(default_factory=dict)
    option_sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    budget_from: tuple[str, str] | None = None  # (level, option map) that set max_cost_usd


def resolve_prompt(
    packet: Packet,
    prompt: Prompt,
    profile: Profile | None,
    options: RunOptions,
    *,
    failover: Mapping[str, Any] | None = None,
) -> PromptPlan:
    """Resolve one prompt through the five precedence levels.

    Args:
        failover: one ``recovery.failover`` entry, applied above every level:
            the plan of that failover target (which has no failover of its own).
            ``None``: the prompt's own plan, its failover targets resolved too
            (:attr:`PromptPlan.failover`).

    Raises:
        UserError: an invalid merged value (recovery, timeout, budget, a lifted
            key, a failover entry).
    """
    levels: Levels = [
        ("built-in", BUILTIN),
        ("profile", profile.model_dump(exclude_none=True) if profile else {}),
        ("packet", packet.manifest.model_dump(exclude_none=True)),
        ("prompt", prompt.front.model_dump(exclude_none=True)),
        ("option", options.overrides()),
    ]
    if failover is not None:
        levels.append(("failover", failover))
    provider = str([v["provider"] for _, v in levels if "provider" in v][-1])
    merged = _merge_levels(levels, option_maps(provider), packet, prompt, profile)
    resolved, sources = merged.values, merged.sources
    max_cost_usd = None
    if merged.budget_from is not None:
        level, key = merged.budget_from
        max_cost_usd = check_budget(
            merged.provider_options.get(PROMPT_KEY),
            key=f"{key}.{PROMPT_KEY}",
            file=level_file(packet, prompt, profile, level),
        )
        sources[PROMPT_KEY] = level
    recovery, sources["recovery"] = resolve_recovery(
        packet, prompt, profile, lambda level: level_file(packet, prompt, profile, level)
    )
    timeout_ms = _timeout(resolved["timeout"])
    targets: tuple[PromptPlan, ...] = ()
    if failover is None and recovery.failover:
        file = level_file(packet, prompt, profile, "failover")
        targets = tuple(
            resolve_prompt(packet, prompt, profile, options, failover=level)
            for level in failover_levels(recovery, file)
        )
    return PromptPlan(
        prompt=prompt,
        provider=provider,
        model=resolved["model"],
        reasoning_effort=resolved["reasoning_effort"],
        permission_mode=str(resolved["permission_mode"]),
        allowed_tools=tuple(resolved["allowed_tools"] or ()),
        timeout_ms=timeout_ms,
        bounds=TimeBounds.from_timeout(timeout_ms),
        cli_confirmation=str(resolved["cli_confirmation"]),
        system_prompt=resolved["system_prompt"],
        append_system_prompt=resolved["append_system_prompt"],
        max_turns=resolved["max_turns"],
        provider_options=merged.provider_options,
        recovery=recovery,
        cwd=packet.repos.get(prompt.targets[0]) if prompt.targets else None,
        sources=sources,
        max_cost_usd=max_cost_usd,
        option_sources=merged.option_sources,
        failover=targets,
        level_file=functools.partial(level_file, packet, prompt, profile),
    )


def _merge_levels(
    levels: Levels,
    maps: tuple[str, ...],
    packet: Packet,
    prompt: Prompt,
    profile: Profile | None,
) -> _Merged:
    """Apply each level in turn. At one level the option maps come first, so a
    top-level key beside a map's copy of it wins; a more specific level wins
    either way."""
    merged = _Merged()
    for level, values in levels:
        for name in maps if level in (*MAP_LEVELS, "failover") else ():
            opts = values.get(name)
            if isinstance(opts, Mapping):
                _merge_map(merged, level, name, opts, level_file(packet, prompt, profile, level))
        for key in PROMPT_KEYS:
            if key in values:
                merged.values[key] = values[key]
                merged.sources[key] = level
    return merged


def _merge_map(merged: _Merged, level: str, name: str, opts: Mapping[str, Any], where: str) -> None:
    """Merge one provider option map ``name`` of ``level`` (read from ``where``)."""
    merged.sources["provider_options"] = level
    for key, value in opts.items():
        if key in LIFTED_KEYS:
            if value is not None:
                merged.values[key] = lifted(key, value, key_path=f"{name}.{key}", file=where)
                merged.sources[key] = level
            continue
        merged.provider_options[key] = value
        merged.option_sources[key] = (name, where)
    if PROMPT_KEY in opts:
        merged.budget_from = (level, name)


def _timeout_ms(value: Any) -> int | None:
    if value is None or value == "unbounded":
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("unbounded", "infinity", "infinite"):
            return None
        return int(text)
    return int(value)


def _timeout(value: Any) -> int | None:
    """The resolved ``timeout`` in ms (``None`` = unbounded).

    Raises:
        UserError: not a number of milliseconds, ``unbounded``, or positive.
    """
    try:
        timeout_ms = _timeout_ms(value)
    except ValueError:
        raise UserError(
            f"{value!r} is not a timeout",
            key="timeout",
            fix="use milliseconds or 'unbounded'",
        ) from None
    if timeout_ms is not None and timeout_ms <= 0:
        raise UserError("must be positive", key="timeout", fix="use milliseconds or 'unbounded'")
    return timeout_ms


def level_file(packet: Packet, prompt: Prompt, profile: Profile | None, level: str) -> str:
    """The file that holds the keys of ``level``, for error messages.

    Args:
        level: ``prompt`` (the prompt's file), ``packet`` (the manifest),
            ``profile`` (the profile's file, ``profiles/NAME.md`` in the store
            with ``NAME`` the profile's ``name``, or ``<built-in profile
            NAME>``), or ``failover`` (the most specific level whose
            ``recovery`` sets ``failover``).

    Returns:
        The path as errors show it (a packet file relative to the packet).
    """
    if level == "failover":
        for where, raw in (("prompt", prompt.front.recovery), ("packet", packet.manifest.recovery)):
            if isinstance(raw, Mapping) and "failover" in raw:
                return level_file(packet, prompt, profile, where)
        return level_file(packet, prompt, profile, "profile")
    if level == "prompt":
        return packet.display(prompt.file)
    if level == "packet":
        return packet.display(packet.manifest_file)
    return profile_file(profile.name if profile else None)


def resolve_plan(
    packet: Packet,
    options: RunOptions | None = None,
    *,
    progress: Mapping[str, str] | None = None,
    default_runtime_store: str = "memory",
    default_committer: str = "noop",
) -> Plan:
    """Resolve the full plan of ``packet`` under ``options``.

    Args:
        packet: a loaded packet.
        options: explicit overrides and selection (default: none, select all).
        progress: prompt id -> recorded status (from ``progress.log``), used by
            ``--remaining`` and ``continue``; ``None`` = nothing recorded.
        default_runtime_store, default_committer: the entry point's defaults
            (the CLI passes ``file``/``git``; the API keeps ``memory``/``noop``).

    Raises:
        UserError: unknown profile, ids, bounds, dependency cycles, or invalid
            merged values; a selected prompt's ``recovery.failover`` target
            whose values or provider options are refused (naming
            ``recovery.failover[i].KEY``).
    """
    with gc_paused():  # one plan per prompt and no cycles (packet/gc_pause.py)
        return _resolve_plan(packet, options, progress, default_runtime_store, default_committer)


def _resolve_plan(
    packet: Packet,
    options: RunOptions | None,
    progress: Mapping[str, str] | None,
    default_runtime_store: str,
    default_committer: str,
) -> Plan:
    validate_agent_owned(packet)
    options = options or RunOptions()
    profile_name, profile, profile_note = configured_profile(
        packet.manifest.profile, explicit=options.profile
    )
    if profile is not None and profile_name and profile.name != profile_name:
        # errors about its keys name its file, profiles/NAME.md (level_file), by the
        # name it was loaded by, whatever its own `name:` says
        profile = profile.model_copy(update={"name": profile_name})
    prompts = tuple(resolve_prompt(packet, p, profile, options) for p in packet.prompts)
    if options.provider is None:
        check_unused_maps(packet, prompts)
    render = _render(packet, profile, options)
    committer = _committer(packet, options, default_committer)
    runtime_store = _runtime_store(options, default_runtime_store)
    max_run_cost_usd = _run_budget(packet, options)
    failure_policy = packet.manifest.failure_policy or "stop"
    if options.keep_going:
        failure_policy = "continue_independent"
    selected, notes = select_prompts(packet, options, progress or {})
    _check_providers(prompts, frozenset(selected))
    _check_failover_targets(packet, profile, prompts, frozenset(selected))
    notify = packet_notify(packet, profile=(profile_name, profile))
    apprise_note = notify.apprise_missing() if notify is not None else None
    if apprise_note is not None:
        notes.append(apprise_note)
    plan = Plan(
        packet=packet,
        profile=profile_name,
        prompts=prompts,
        selected=tuple(selected),
        notes=(*([profile_note] if profile_note else []), *notes),
        render=render,
        runtime_store=runtime_store,
        committer=committer,
        execution=packet.manifest.execution,
        agent_control=packet.manifest.agent_control,
        failure_policy=failure_policy,
        options=options,
        max_run_cost_usd=max_run_cost_usd,
        notify=notify,
    )
    _ = plan.state  # where its state lives is fixed now (a bad $PROMPT_RUNNER_STATE_DIR: UserError)
    return plan


def _check_providers(prompts: tuple[PromptPlan, ...], selected: frozenset[str]) -> None:
    """Each selected prompt's provider is one the runner knows.

    Raises:
        UserError: naming the level that set it -- the prompt's file, the
            manifest, the profile's file, or ``--provider (provider=)``.
    """
    known = provider_names()
    for pp in prompts:
        if pp.id in selected and pp.provider not in known:
            key, where = pp.option_key("provider")
            raise UserError(
                f"unknown provider {pp.provider!r}",
                file=where,
                key=key,
                fix=f"use one of {', '.join(known)}",
            )


def _check_failover_targets(
    packet: Packet,
    profile: Profile | None,
    prompts: tuple[PromptPlan, ...],
    selected: frozenset[str],
) -> None:
    """Each selected prompt's failover targets through their providers' option
    checks, as ``plan`` puts the prompt's own plan (:func:`check_failover_targets`).

    Raises:
        UserError: naming ``recovery.failover[i].KEY`` and its file.
    """
    for pp in prompts:
        if pp.failover and pp.id in selected:
            prompt = pp.prompt

            def where(level: str, prompt: Prompt = prompt) -> str:
                return level_file(packet, prompt, profile, level)

            check_failover_targets(packet, pp, where("failover"), where)


def _render(packet: Packet, profile: Profile | None, options: RunOptions) -> dict[str, Any]:
    """The rendering keys: built-in < profile < manifest < options (no prompt level).

    Raises:
        UserError: a value that is not one of :data:`RENDER_VALUES`.
    """
    render: dict[str, Any] = dict(RENDER_BUILTIN)
    for values in (
        profile.model_dump(exclude_none=True) if profile else {},
        packet.manifest.model_dump(exclude_none=True),
        options.overrides(),
    ):
        for key in RENDER_BUILTIN:
            if key in values:
                render[key] = values[key]
    for key, allowed in RENDER_VALUES.items():
        if render.get(key) not in allowed:
            raise UserError(
                f"{render.get(key)!r} is not a valid {key}",
                key=f"--{key.replace('_', '-')}",
                fix=f"use one of {', '.join(allowed)}",
            )
    return render


def _committer(packet: Packet, options: RunOptions, default: str) -> str:
    """The committer: ``--no-commit`` > ``--committer`` > the manifest's > ``default``.

    ``--no-commit`` over a manifest's ``committer: git`` is the command line
    winning, as every option wins over the manifest; over ``--committer git``
    it is a contradiction.

    Raises:
        UserError: ``--no-commit`` with ``--committer git``, or an unknown committer.
    """
    if options.no_commit and options.committer == "git":
        raise UserError(
            "--no-commit (no_commit=True) and --committer git (committer='git') contradict "
            "each other",
            fix="drop --no-commit to commit each prompt, or drop --committer git to commit "
            "nothing, not both",
        )
    committer = options.committer or packet.manifest.committer or default
    if options.no_commit:
        committer = "noop"
    if committer not in ("git", "noop"):
        raise UserError(
            f"unknown committer {committer!r}", key="--committer", fix="use git or noop"
        )
    return committer


def _runtime_store(options: RunOptions, default: str) -> str:
    runtime_store = options.runtime_store or default
    if runtime_store not in ("file", "memory", "noop"):
        raise UserError(
            f"unknown runtime store {runtime_store!r}",
            key="--runtime-store",
            fix="use file, memory or noop",
        )
    return runtime_store


def _run_budget(packet: Packet, options: RunOptions) -> float | None:
    """``max_run_cost_usd``: the option, else the manifest's."""
    if options.max_run_cost_usd is not None:
        return check_budget(options.max_run_cost_usd, key="--max-run-cost-usd", from_text=True)
    return check_budget(
        packet.manifest.max_run_cost_usd,
        key=RUN_KEY,
        file=packet.display(packet.manifest_file),
    )
