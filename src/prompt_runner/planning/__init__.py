"""The fully resolved execution plan. Precedence lives here, and only here.

:func:`resolve_plan` turns a loaded packet and the caller's
:class:`RunOptions` into a frozen :class:`Plan` of :class:`PromptPlan`
values (SPEC 2.4: built-in < profile < packet < prompt < options). The rooms:

* :mod:`.options` -- :class:`RunOptions` and the built-in defaults;
* :mod:`.resolve` -- the precedence levels (:func:`resolve_prompt`, :func:`resolve_plan`);
* :mod:`.maps` -- which provider option maps reach which provider;
* :mod:`.recovery` -- the deep-merged recovery config;
* :mod:`.budget` -- cost budget values;
* :mod:`.selection` -- which prompts run, in dependency order;
* :mod:`.agent_owned` -- the plan-time checks of an agent-owned packet;
* :mod:`.prompt_plan`, :mod:`.plan` -- the resolved values;
* :mod:`.launch` -- what a prompt's session is started with.

Time bounds derive from the single ``timeout`` (SPEC 4): see
:class:`prompt_runner.providers.base.TimeBounds`.
"""

from __future__ import annotations

from .launch import (
    check_launchable,
    check_plan_launchable,
    launch_argv,
    launch_problems,
    launch_readiness_errors,
    request_for,
)
from .maps import (
    LIFTED_KEYS,
    MAP_LEVELS,
    PROVIDER_MAPS,
    check_unused_maps,
    map_provider,
    option_maps,
)
from .options import BUILTIN, LEVELS, PROMPT_KEYS, RENDER_BUILTIN, RunOptions, with_options
from .plan import Plan
from .prompt_plan import PromptPlan
from .recovery import deep_merge
from .resolve import resolve_plan, resolve_prompt

__all__ = [
    "BUILTIN",
    "LEVELS",
    "LIFTED_KEYS",
    "MAP_LEVELS",
    "PROMPT_KEYS",
    "PROVIDER_MAPS",
    "RENDER_BUILTIN",
    "Plan",
    "PromptPlan",
    "RunOptions",
    "check_launchable",
    "check_plan_launchable",
    "check_unused_maps",
    "deep_merge",
    "launch_argv",
    "launch_problems",
    "launch_readiness_errors",
    "map_provider",
    "option_maps",
    "request_for",
    "resolve_plan",
    "resolve_prompt",
    "with_options",
]
