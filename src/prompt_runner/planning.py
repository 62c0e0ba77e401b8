"""The fully resolved execution plan. Precedence lives here, and only here.

Every plan value is resolved with the precedence of SPEC 2.4::

    built-in defaults < profile < packet manifest < prompt front matter < options

where *options* are the explicit CLI flags or API keyword arguments
(:class:`RunOptions`). ``recovery`` is deep-merged level by level; the provider
option maps that reach the prompt's provider (:func:`option_maps`:
``adapter_opts``, ``sdk_opts``, ``<provider>_opts``, and for Codex also
``codex_thread_opts``) are merged key by key. A map's ``model``,
``reasoning_effort``, ``system_prompt``, ``append_system_prompt`` or
``max_turns`` is that top-level key, set at the map's level (beside the
top-level key at the same level, the top-level key wins). A map set in the
manifest or a prompt that reaches no prompt's provider is refused
(:func:`check_unused_maps`). Each resolved prompt records which level set each
key (:attr:`PromptPlan.sources`), which ``plan --json`` shows.

Time bounds derive from the single ``timeout`` (SPEC 4): see
:class:`prompt_runner.providers.base.TimeBounds`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import UserError
from .packet.loader import Packet, Prompt
from .packet.models import (
    PROVIDER_OPTION_KEYS,
    AgentControlConfig,
    ExecutionConfig,
    Profile,
    RecoveryConfig,
)
from .packet.validation import validate_model
from .providers.base import TimeBounds
from .runner.budget import PROMPT_KEY, RUN_KEY, check_budget

LEVELS = ("built-in", "profile", "packet", "prompt", "option")
MAP_LEVELS = ("profile", "packet", "prompt")  # the levels that carry option maps
PROVIDER_MAPS: dict[str, tuple[str, ...]] = {"codex": ("codex_opts", "codex_thread_opts")}
# Keys a provider option map may carry (the reference's provider schemas list
# them) that mean the same as the top-level key; they are resolved with it.
LIFTED_KEYS = ("model", "reasoning_effort", "system_prompt", "append_system_prompt", "max_turns")

BUILTIN: dict[str, Any] = {
    "provider": "simulated",
    "model": None,
    "reasoning_effort": None,
    "permission_mode": "default",
    "allowed_tools": [],
    "timeout": None,
    "cli_confirmation": "off",
    "system_prompt": None,
    "append_system_prompt": None,
    "max_turns": None,
}
RENDER_BUILTIN: dict[str, Any] = {
    "log_mode": "compact",
    "log_meta": "none",
    "events_mode": "compact",
    "tool_output": "summary",
    "thinking": "hide",
    "diff": "none",
}
PROMPT_KEYS = tuple(BUILTIN)


@dataclass(frozen=True)
class RunOptions:
    """Explicit CLI/API options: the highest precedence level.

    ``None`` means "not given" for every field. Selection fields: ``ids``
    (explicit prompt ids, in the given order), ``select_all``, ``remaining``,
    ``phase``, ``from_id``/``through_id`` (inclusive bounds), ``continue_run``
    (API only: resume after the highest completed prompt).
    """

    profile: str | None = None
    provider: str | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    permission_mode: str | None = None
    timeout: int | str | None = None
    cli_confirmation: str | None = None
    log_mode: str | None = None
    log_meta: str | None = None
    events_mode: str | None = None
    tool_output: str | None = None
    thinking: str | None = None
    diff: str | None = None
    runtime_store: str | None = None
    committer: str | None = None
    max_run_cost_usd: float | str | None = None
    no_commit: bool = False
    skip_preflight: bool = False
    dry_run: bool = False
    new_run: bool = False
    keep_going: bool = False
    verify_first: bool | None = None
    ids: tuple[str, ...] = ()
    select_all: bool = False
    remaining: bool = False
    phase: str | None = None
    from_id: str | None = None
    through_id: str | None = None
    continue_run: bool = False

    def overrides(self) -> dict[str, Any]:
        """The prompt-level keys explicitly set (non-``None``)."""
        keys = (*PROMPT_KEYS, *RENDER_BUILTIN)
        return {
            k: getattr(self, k) for k in keys if hasattr(self, k) and getattr(self, k) is not None
        }


@dataclass(frozen=True)
class PromptPlan:
    """One prompt, fully resolved.

    Attributes:
        timeout_ms: the resolved ``timeout`` in ms (``None`` = unbounded).
        bounds: derived time bounds (ms).
        provider_options: merged provider option map.
        recovery: deep-merged recovery config.
        sources: plan key -> the level that set it (see :data:`LEVELS`).
        max_cost_usd: the prompt's cost budget (``provider_options``'
            ``max_cost_usd``, validated), ``None`` = none.
        option_sources: each ``provider_options`` key -> ``(map, file)`` that
            set it (``("codex_thread_opts", "prompt_runner_packet.md")``), for
            error messages (see :meth:`option_key`).
    """

    prompt: Prompt
    provider: str
    model: str | None
    reasoning_effort: str | None
    permission_mode: str
    allowed_tools: tuple[str, ...]
    timeout_ms: int | None
    bounds: TimeBounds
    cli_confirmation: str
    system_prompt: str | None
    append_system_prompt: str | None
    max_turns: int | None
    provider_options: dict[str, Any]
    recovery: RecoveryConfig
    cwd: Path | None
    sources: dict[str, str] = field(default_factory=dict)
    max_cost_usd: float | None = None
    option_sources: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.prompt.id

    def option_key(self, key_path: str) -> tuple[str, str]:
        """``(key path, file)`` to name in an error about ``key_path``: a provider's
        ``<provider>_opts.KEY...`` becomes the map that set ``KEY`` and that
        map's file (``codex_thread_opts.additional_directories``,
        ``prompt_runner_packet.md``); anything else stays, in the prompt's file."""
        head, dot, rest = key_path.partition(".")
        origin = self.option_sources.get(rest.split(".")[0]) if dot else None
        if head != f"{self.provider}_opts" or origin is None:
            return key_path, self.prompt.relfile
        name, where = origin
        return f"{name}.{rest}", where

    def to_dict(self, *, committer: str) -> dict[str, Any]:
        p = self.prompt
        return {
            "id": p.id,
            "name": p.name,
            "phase": p.phase,
            "file": p.relfile,
            "targets": list(p.targets),
            "cwd": str(self.cwd) if self.cwd else None,
            "commit": p.front.commit,
            "commit_enabled": committer != "noop",
            "depends_on": list(p.front.depends_on),
            "provider": self.provider,
            "model": self.model,
            "reasoning_effort": self.reasoning_effort,
            "permission_mode": self.permission_mode,
            "allowed_tools": list(self.allowed_tools),
            "timeout_ms": self.timeout_ms,
            "bounds": self.bounds.to_dict(),
            "cli_confirmation": self.cli_confirmation,
            "system_prompt": self.system_prompt,
            "append_system_prompt": self.append_system_prompt,
            "max_turns": self.max_turns,
            "provider_options": self.provider_options,
            "max_cost_usd": self.max_cost_usd,
            "recovery": self.recovery.model_dump(),
            "verify": p.contract.to_raw(),
            "sources": dict(self.sources),
        }


@dataclass(frozen=True)
class Plan:
    """The resolved plan of one packet.

    Attributes:
        prompts: every prompt of the packet, resolved, in file order.
        selected: the ids selected to run, in execution order.
        notes: human notes about the selection (e.g. ``--continue`` skips).
        render: resolved rendering options.
        runtime_store: ``file|memory|noop``.
        committer: ``git|noop`` (``noop`` when ``--no-commit``).
        max_run_cost_usd: the run's cost budget (option > manifest), ``None`` = none.
    """

    packet: Packet
    profile: str | None
    prompts: tuple[PromptPlan, ...]
    selected: tuple[str, ...]
    notes: tuple[str, ...]
    render: dict[str, Any]
    runtime_store: str
    committer: str
    execution: ExecutionConfig
    agent_control: AgentControlConfig
    failure_policy: str
    options: RunOptions
    max_run_cost_usd: float | None = None

    def prompt(self, prompt_id: str) -> PromptPlan:
        """The plan of prompt ``prompt_id``.

        Raises:
            UserError: no prompt has that id (the packet's unknown-id error).
        """
        found = self._by_id.get(prompt_id)
        if found is None:
            self.packet.prompt(prompt_id)  # raises the unknown-id error
            raise AssertionError("unreachable")
        return found

    @functools.cached_property
    def _by_id(self) -> dict[str, PromptPlan]:
        return {p.id: p for p in self.prompts}

    def selected_prompts(self) -> list[PromptPlan]:
        return [self.prompt(i) for i in self.selected]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "prompt_runner.plan/v1",
            "packet": self.packet.name,
            "root": str(self.packet.root),
            "profile": self.profile,
            "repos": {k: str(v) for k, v in self.packet.repos.items()},
            "default_repo": self.packet.default_repo,
            "runtime_store": self.runtime_store,
            "committer": self.committer,
            "failure_policy": self.failure_policy,
            "max_run_cost_usd": self.max_run_cost_usd,
            "execution": self.execution.model_dump(),
            "agent_control": self.agent_control.model_dump(),
            "render": dict(self.render),
            "prompt_count": len(self.prompts),
            "selected": list(self.selected),
            "notes": list(self.notes),
            "prompts": [
                {
                    **p.to_dict(committer=self.committer),
                    "argv": launch_argv(self.packet, p) if p.id in self.selected else None,
                }
                for p in self.prompts
            ],
        }


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``override`` merged in, recursing into mappings."""
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _timeout_ms(value: Any) -> int | None:
    if value is None or value == "unbounded":
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("unbounded", "infinity", "infinite"):
            return None
        return int(text)
    return int(value)


def resolve_prompt(
    packet: Packet, prompt: Prompt, profile: Profile | None, options: RunOptions
) -> PromptPlan:
    """Resolve one prompt through the five precedence levels.

    Raises:
        UserError: the merged recovery config is invalid.
    """
    levels: list[tuple[str, Mapping[str, Any]]] = [
        ("built-in", BUILTIN),
        ("profile", profile.model_dump(exclude_none=True) if profile else {}),
        ("packet", packet.manifest.model_dump(exclude_none=True)),
        ("prompt", prompt.front.model_dump(exclude_none=True)),
        ("option", options.overrides()),
    ]
    resolved: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for _level, values in levels:
        if "provider" in values:
            resolved["provider"] = values["provider"]
    provider = str(resolved["provider"])
    maps = option_maps(provider)

    provider_options: dict[str, Any] = {}
    option_sources: dict[str, tuple[str, str]] = {}
    budget_from: tuple[str, str] | None = None  # (level, option map) that set max_cost_usd
    for level, values in levels:
        # At one level the option maps come first, so a top-level key beside a
        # map's copy of it wins; a more specific level wins either way.
        for name in maps if level in MAP_LEVELS else ():
            opts = values.get(name)
            if not isinstance(opts, Mapping):
                continue
            sources["provider_options"] = level
            where = _level_file(packet, prompt, profile, level)
            for key, value in opts.items():
                if key in LIFTED_KEYS:
                    if value is not None:
                        resolved[key] = _lifted(key, value, key_path=f"{name}.{key}", file=where)
                        sources[key] = level
                    continue
                provider_options[key] = value
                option_sources[key] = (name, where)
            if PROMPT_KEY in opts:
                budget_from = (level, name)
        for key in PROMPT_KEYS:
            if key in values:
                resolved[key] = values[key]
                sources[key] = level
    max_cost_usd = None
    if budget_from is not None:
        level, key = budget_from
        max_cost_usd = check_budget(
            provider_options.get(PROMPT_KEY),
            key=f"{key}.{PROMPT_KEY}",
            file=_level_file(packet, prompt, profile, level),
        )
        sources[PROMPT_KEY] = level

    user_raw: dict[str, Any] = {}
    recovery_source = "built-in"
    for level, raw in (
        ("profile", profile.recovery if profile else None),
        ("packet", packet.manifest.recovery),
        ("prompt", prompt.front.recovery),
    ):
        if raw:
            user_raw = deep_merge(user_raw, raw)
            recovery_source = level
    recovery_raw = deep_merge(RecoveryConfig().model_dump(), user_raw)
    # An explicit retry.max_attempts is the budget of every class whose own
    # class_attempts entry the author did not set (the built-in per-class
    # defaults apply only when max_attempts is left alone).
    retry_raw = user_raw.get("retry")
    user_retry: dict[str, Any] = retry_raw if isinstance(retry_raw, dict) else {}
    if "max_attempts" in user_retry:
        explicit = user_retry.get("class_attempts") or {}
        classes = recovery_raw["retry"]["class_attempts"]
        if isinstance(classes, dict) and isinstance(explicit, dict):
            for name in list(classes):
                if name not in explicit:
                    classes[name] = user_retry["max_attempts"]
    where = packet.display(prompt.file if prompt.front.recovery else packet.manifest_file)
    recovery = validate_model(RecoveryConfig, recovery_raw, file=where, prefix="recovery")
    _check_class_names(recovery, where)
    sources["recovery"] = recovery_source

    try:
        timeout_ms = _timeout_ms(resolved["timeout"])
    except ValueError:
        raise UserError(
            f"{resolved['timeout']!r} is not a timeout",
            key="timeout",
            fix="use milliseconds or 'unbounded'",
        ) from None
    if timeout_ms is not None and timeout_ms <= 0:
        raise UserError("must be positive", key="timeout", fix="use milliseconds or 'unbounded'")
    cwd = packet.repos.get(prompt.targets[0]) if prompt.targets else None
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
        provider_options=provider_options,
        recovery=recovery,
        cwd=cwd,
        sources=sources,
        max_cost_usd=max_cost_usd,
        option_sources=option_sources,
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
    used = {name for pp in prompts for name in option_maps(pp.provider)}
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
        for name in PROVIDER_OPTION_KEYS:
            if name not in option_maps(pp.provider) and getattr(pp.prompt.front, name, None):
                raise UserError(
                    f"{name} is set but this prompt runs on provider {pp.provider}, so it "
                    "would reach nothing",
                    file=pp.prompt.relfile,
                    key=name,
                    fix=f"remove {name}, or set provider: {map_provider(name)} in this prompt",
                )


def launch_argv(packet: Packet, pp: PromptPlan) -> list[str] | None:
    """The argv the first session of ``pp`` would start: secrets redacted,
    ``<prompt>`` where a CLI takes the prompt in argv; ``None`` for a built-in
    provider. Only for a prompt whose options were validated (a selected one)."""
    from .providers.registry import get_provider
    from .runner.attempts import request_for

    preview = getattr(get_provider(pp.provider), "launch_argv", None)
    if preview is None:
        return None
    return list(preview(request_for(packet, pp, pp.prompt.body)))


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


def _level_file(packet: Packet, prompt: Prompt, profile: Profile | None, level: str) -> str:
    """The file (or profile) that holds the keys of ``level``, for error messages."""
    if level == "prompt":
        return packet.display(prompt.file)
    if level == "packet":
        return packet.display(packet.manifest_file)
    return f"profile {profile.name if profile and profile.name else ''}".strip()


def _lifted(key: str, value: Any, *, key_path: str, file: str) -> Any:
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


def _check_class_names(recovery: RecoveryConfig, where: str) -> None:
    from .providers.failure import FAILURE_CLASSES

    for name in recovery.retry.class_attempts:
        if name not in FAILURE_CLASSES:
            raise UserError(
                f"unknown failure class {name!r}",
                file=where,
                key=f"recovery.retry.class_attempts.{name}",
                fix=f"use one of {', '.join(FAILURE_CLASSES)}",
            )


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
            merged values.
    """
    from .runner.agent_owned import validate_agent_owned
    from .runner.selection import select_prompts

    validate_agent_owned(packet)
    options = options or RunOptions()
    from .packet.profiles import configured_profile

    profile_name, profile, profile_note = configured_profile(
        packet.manifest.profile, explicit=options.profile
    )
    prompts = tuple(resolve_prompt(packet, p, profile, options) for p in packet.prompts)
    if options.provider is None:
        check_unused_maps(packet, prompts)
    render: dict[str, Any] = dict(RENDER_BUILTIN)
    for values in (
        profile.model_dump(exclude_none=True) if profile else {},
        packet.manifest.model_dump(exclude_none=True),
        options.overrides(),
    ):
        for key in RENDER_BUILTIN:
            if key in values:
                render[key] = values[key]
    _validate_render(render)
    committer = options.committer or packet.manifest.committer or default_committer
    if options.no_commit:
        committer = "noop"
    if committer not in ("git", "noop"):
        raise UserError(
            f"unknown committer {committer!r}", key="--committer", fix="use git or noop"
        )
    runtime_store = options.runtime_store or default_runtime_store
    if runtime_store not in ("file", "memory", "noop"):
        raise UserError(
            f"unknown runtime store {runtime_store!r}",
            key="--runtime-store",
            fix="use file, memory or noop",
        )
    if options.max_run_cost_usd is not None:
        max_run_cost_usd = check_budget(
            options.max_run_cost_usd, key="--max-run-cost-usd", from_text=True
        )
    else:
        max_run_cost_usd = check_budget(
            packet.manifest.max_run_cost_usd,
            key=RUN_KEY,
            file=packet.display(packet.manifest_file),
        )
    failure_policy = packet.manifest.failure_policy or "stop"
    if options.keep_going:
        failure_policy = "continue_independent"
    selected, notes = select_prompts(packet, options, progress or {})
    return Plan(
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
    )


_RENDER_VALUES = {
    "log_meta": ("none", "full"),
    "log_mode": ("compact", "verbose", "studio"),
    "events_mode": ("compact", "full", "off"),
    "tool_output": ("none", "summary", "preview", "full"),
    "thinking": ("show", "hide"),
    "diff": ("none", "stat", "full"),
}


def _validate_render(render: Mapping[str, Any]) -> None:
    for key, allowed in _RENDER_VALUES.items():
        if render.get(key) not in allowed:
            raise UserError(
                f"{render.get(key)!r} is not a valid {key}",
                key=f"--{key.replace('_', '-')}",
                fix=f"use one of {', '.join(allowed)}",
            )


def with_options(options: RunOptions, **changes: Any) -> RunOptions:
    """Return ``options`` with ``changes`` applied (unknown names raise TypeError)."""
    valid = {f.name for f in fields(RunOptions)}
    unknown = set(changes) - valid
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    return replace(options, **changes)
