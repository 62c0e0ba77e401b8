"""The profile/template store: ``init``, ``profile new|list``, ``template list``."""

from __future__ import annotations

import argparse

from ..api_authoring import init, list_profiles, list_templates
from ..packet.profiles import new_profile
from ._out import emit_json, say


def cmd_init(args: argparse.Namespace) -> int:
    result = init(args.default_profile)
    if args.json:
        emit_json(result.to_dict())
        return 0
    say(f"Profile store: {result.home}")
    for path in result.created:
        say(f"  created {path}")
    if not result.created:
        say("  everything already exists; nothing was overwritten")
    return 0


def cmd_profile_new(args: argparse.Namespace) -> int:
    tools = None
    if args.tools is not None:
        tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    path = new_profile(
        args.name,
        provider=args.provider,
        model=args.model,
        reasoning_effort=args.reasoning_effort,
        permission_mode=args.permission_mode,
        prompt_template=args.prompt_template,
        allowed_tools=tools,
        cli_confirmation=args.cli_confirmation,
        resume_attempts=args.resume_attempts,
        retry_attempts=args.retry_attempts,
        retry_base_delay_ms=args.retry_base_delay_ms,
        retry_max_delay_ms=args.retry_max_delay_ms,
        retry_jitter=args.retry_jitter,
        auto_repair=args.auto_repair,
        repair_attempts=args.repair_attempts,
        force=args.force,
    )
    say(f"Created profile {args.name}: {path}")
    return 0


def cmd_profile_list(args: argparse.Namespace) -> int:
    profiles = list_profiles()
    if args.json:
        emit_json([entry._asdict() for entry in profiles])
    else:
        for name, source in profiles:
            say(f"{name}  ({source})")
    return 0


def cmd_template_list(args: argparse.Namespace) -> int:
    templates = list_templates(args.packet)
    if args.json:
        emit_json([entry._asdict() for entry in templates])
    else:
        for name, source in templates:
            say(f"{name}  ({source})")
    return 0
