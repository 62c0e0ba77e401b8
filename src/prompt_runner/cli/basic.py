"""Small commands: version, capabilities, init, profile, template, packet explain/preflight,
checklist sync, list."""

from __future__ import annotations

import argparse

from .. import __version__
from ..errors import UserError
from ._out import emit_json, say, warn


def cmd_group_help(args: argparse.Namespace) -> int:
    raise UserError(
        f"`{args.command}` needs a subcommand", fix=f"run `prompt-runner {args.command} --help`"
    )


def cmd_version(args: argparse.Namespace) -> int:
    if args.json:
        emit_json({"version": __version__})
    else:
        say(__version__)
    return 0


def cmd_capabilities(args: argparse.Namespace) -> int:
    from ..api_packet import capabilities

    doc = capabilities().to_dict()
    if args.json:
        emit_json(doc)
    else:
        for key, value in doc.items():
            say(f"{key}: {value}")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from ..api_authoring import init

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
    from ..packet.profiles import new_profile

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
    from ..api_authoring import list_profiles

    profiles = list_profiles()
    if args.json:
        emit_json([entry._asdict() for entry in profiles])
    else:
        for name, source in profiles:
            say(f"{name}  ({source})")
    return 0


def cmd_template_list(args: argparse.Namespace) -> int:
    from ..api_authoring import list_templates

    templates = list_templates(args.packet)
    if args.json:
        emit_json([entry._asdict() for entry in templates])
    else:
        for name, source in templates:
            say(f"{name}  ({source})")
    return 0


def cmd_packet_explain(args: argparse.Namespace) -> int:
    from ..api_packet import explain

    emit_json(explain(args.packet).to_dict())
    return 0


def cmd_packet_preflight(args: argparse.Namespace) -> int:
    from ..api_packet import preflight

    report = preflight(args.packet)
    emit_json(report.to_dict())
    return 0 if report.runtime_ready else 1


def cmd_checklist_sync(args: argparse.Namespace) -> int:
    from ..api_packet import checklist_sync

    result = checklist_sync(args.packet)
    for checklist in result.unverified:
        warn(
            f"WARNING: prompt {checklist.prompt_id} ({checklist.name}) has no verification "
            "items yet"
        )
    if args.json:
        emit_json(result.to_dict())
    else:
        for path in result.written:
            say(f"wrote {path}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ..api_packet import list_prompts

    listing = list_prompts(args.packet)
    if args.json:
        emit_json(listing.to_dict())
        return 0
    say(f"{listing.packet}: {len(listing.prompts)} prompt(s)")
    for p in listing.prompts:
        say(f"  {p.id}  phase {p.phase or '-'}  {p.status:<12} {p.name}")
    return 0
