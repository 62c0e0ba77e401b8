"""The profile/template store: ``init``, ``profile new|list``, ``template list``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..api_authoring import ProfileEntry, TemplateEntry, init, list_profiles, list_templates
from ..packet.profiles import RECOVERY_SHORTHANDS, new_profile
from ._out import emit_json, say


def cmd_init(args: argparse.Namespace) -> int:
    result = init(args.default_profile)
    if args.json:
        emit_json(result.to_dict())
        return 0
    say(f"Profile store: {result.home}")
    for path in result.created:
        if path.name == "config.md" and args.default_profile:  # created, or rewritten to name it
            say(f"  wrote {path} (default_profile: {result.default_profile})")
        else:
            say(f"  created {path}")
    if not result.created:
        say("  everything already exists; nothing was overwritten")
    return 0


def cmd_profile_new(args: argparse.Namespace) -> int:
    tools = None
    if args.tools is not None:
        tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    from ..planning.authored import PLAN_CHECKS  # lazy: the adapters' option tables

    path = new_profile(
        args.name,
        provider=args.provider,
        model=args.model,
        reasoning_effort=args.reasoning_effort,
        permission_mode=args.permission_mode,
        prompt_template=args.prompt_template,
        allowed_tools=tools,
        cli_confirmation=args.cli_confirmation,
        force=args.force,
        **{name: getattr(args, name) for name in RECOVERY_SHORTHANDS},
        judge=PLAN_CHECKS,
    )
    say(f"Created profile {args.name}: {path}")
    return 0


def cmd_profile_list(args: argparse.Namespace) -> int:
    return _list_entries(list_profiles(), as_json=args.json)


def cmd_template_list(args: argparse.Namespace) -> int:
    return _list_entries(list_templates(args.packet), as_json=args.json)


def _list_entries(entries: Sequence[ProfileEntry | TemplateEntry], *, as_json: bool) -> int:
    """Print ``(name, source)`` entries, one a line, or as a JSON list of objects."""
    if as_json:
        emit_json([entry._asdict() for entry in entries])
    else:
        for name, source in entries:
            say(f"{name}  ({source})")
    return 0
