"""The library's authoring calls that need a result shape of their own: ``init``,
``profile list``, ``template list`` and ``schema``.

The other authoring commands are library functions as they stand, exported
from here to :mod:`prompt_runner` with their arguments checked
(:func:`~prompt_runner.api_calls.public`): ``new_packet``
(:mod:`prompt_runner.packet.scaffold`), ``add_repo`` (``packet.repos``; its
``path`` may also be a ``Path`` here), ``new_prompt`` (``packet.prompt_new``),
``new_profile`` (``packet.profiles``), ``migrate_contracts`` (``packet.migrate``).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from .api_calls import public
from .packet import migrate, profiles, prompt_new, repos, scaffold
from .packet.builtins import DEFAULT_PROFILE
from .packet.profiles import config_home, init_home
from .packet.schema import json_schema
from .paths import packet_root


@dataclass(frozen=True)
class InitResult:
    """What ``init`` made: the store directory ``home``, the files it ``created``
    (none when everything existed; nothing is ever overwritten) and the
    ``default_profile`` its ``config.md`` names."""

    home: Path
    created: tuple[Path, ...]
    default_profile: str

    def to_dict(self) -> dict[str, Any]:
        """``{"home", "created": [paths], "default_profile"}`` (``init --json``)."""
        return {
            "home": str(self.home),
            "created": [str(p) for p in self.created],
            "default_profile": self.default_profile,
        }


@public
def init(default_profile: str | None = None) -> InitResult:
    """Create the profile/template store (``$XDG_CONFIG_HOME/prompt_runner``, or
    ``$PROMPT_RUNNER_CONFIG_HOME``) with the built-in profiles and templates.

    Args:
        default_profile: the profile ``config.md`` names (default
            ``simulated-default``); a new name is created from
            ``codex-default``'s settings, as the reference's ``init
            --default-profile`` does.

    Raises:
        UserError: ``default_profile`` is not one word.
    """

    created = init_home(default_profile)
    return InitResult(config_home(), tuple(created), default_profile or DEFAULT_PROFILE)


class ProfileEntry(NamedTuple):
    """A profile ``list_profiles`` found: its ``name`` and ``source`` (``home`` or ``built-in``)."""

    name: str
    source: str


class TemplateEntry(NamedTuple):
    """A template ``list_templates`` found: its ``name`` and ``source``
    (``packet``, ``home`` or ``built-in``, the first one winning)."""

    name: str
    source: str


@public
def list_profiles() -> tuple[ProfileEntry, ...]:
    """Every known profile, sorted by name (``profile list``)."""
    return tuple(ProfileEntry(name, source) for name, source in profiles.list_profiles())


@public
def list_templates(packet: str | os.PathLike[str] | None = None) -> tuple[TemplateEntry, ...]:
    """Every template ``prompt new`` can use, sorted by name (``template list [PACKET]``).

    Args:
        packet: a packet directory whose ``templates/`` count too (``None``:
            the home store's and the built-in ones only).

    Raises:
        UserError: ``packet`` is not a packet directory.
    """

    root = packet_root(os.fspath(packet)) if packet is not None else None
    return tuple(TemplateEntry(name, source) for name, source in profiles.list_templates(root))


@public
def schema(which: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the manifest (``"manifest"``), of
    prompt front matter (``"prompt"``), of a workspace manifest
    (``"workspace"``) or of a fleet manifest (``"fleet"``), for editors
    (``schema manifest|prompt|workspace|fleet``).

    Raises:
        UserError: ``which`` is none of them.
    """
    if which == "workspace":
        from .workspace.schema import workspace_json_schema  # lazy: its models load only here

        return workspace_json_schema()
    if which == "fleet":
        from .fleet.schema import fleet_json_schema  # lazy: its models load only here

        return fleet_json_schema()
    return json_schema(which)


@public
def add_repo(
    packet: Path | str,
    name: str,
    path: str | os.PathLike[str],
    *,
    default: bool = False,
    cwd: Path | None = None,
) -> Path:
    """Add repo ``name`` at ``path`` (text or a ``Path``) to the packet's
    manifest, keeping comments and key order (``packet add-repo``):
    :func:`prompt_runner.packet.repos.add_repo`, which says what ``default``
    and ``cwd`` do.

    Returns:
        The manifest file.

    Raises:
        ArgumentError: an argument of the wrong type.
        UserError: bad name, a repo of that name exists, or the edited manifest
            would not validate.
    """
    return repos.add_repo(packet, name, os.fspath(path), default=default, cwd=cwd)


def _judged(func: Callable[..., Path]) -> Callable[..., Path]:
    """``func`` (``new_profile``, ``new_packet``) given the plan's own checks as
    ``judge`` (planning/authored.py), and shown without that parameter."""

    @functools.wraps(func)
    def call(name: str, **kwargs: Any) -> Path:
        from .planning.authored import PLAN_CHECKS  # lazy: the adapters' option tables

        return func(name, judge=PLAN_CHECKS, **kwargs)

    sig = inspect.signature(func)
    call.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "judge"]
    )
    call.__annotations__ = {k: v for k, v in func.__annotations__.items() if k != "judge"}
    return call


# Exported from prompt_runner as they stand, their arguments checked (api_calls.public).
new_profile = public(_judged(profiles.new_profile))
new_packet = public(_judged(scaffold.new_packet))
new_prompt = public(prompt_new.new_prompt)
migrate_contracts = public(migrate.migrate_contracts)
