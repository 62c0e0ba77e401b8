"""Small commands: version, capabilities, init, profile, template, packet explain/preflight,
checklist sync, list."""

from __future__ import annotations

import argparse
from typing import Any

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
    from ..providers.registry import provider_names
    from ..verifier import contract_keys

    doc = {
        "schema": "prompt_runner.capabilities/v1",
        "version": __version__,
        "providers": list(provider_names()),
        "verify_clauses": list(contract_keys()),
        "selector": {
            "ids": True,
            "phase": True,
            "remaining": True,
            "upper_bound": True,
            "lower_bound": True,
            "continue": "api",
        },
        "agent_control": {"linear": True},
        "runtime_stores": ["file", "memory", "noop"],
        "committers": ["git", "noop", "callback"],
    }
    if args.json:
        emit_json(doc)
    else:
        for key, value in doc.items():
            say(f"{key}: {value}")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from ..packet.profiles import config_home, init_home

    created = init_home(args.default_profile)
    if args.json:
        emit_json({"home": str(config_home()), "created": [str(p) for p in created]})
        return 0
    say(f"Profile store: {config_home()}")
    for path in created:
        say(f"  created {path}")
    if not created:
        say("  everything already exists; nothing was overwritten")
    return 0


def cmd_profile_new(args: argparse.Namespace) -> int:
    from ..packet.profiles import new_profile, recovery_settings

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
        recovery=recovery_settings(
            resume_attempts=args.resume_attempts,
            retry_attempts=args.retry_attempts,
            retry_base_delay_ms=args.retry_base_delay_ms,
            retry_max_delay_ms=args.retry_max_delay_ms,
            retry_jitter=args.retry_jitter,
            auto_repair=args.auto_repair,
            repair_attempts=args.repair_attempts,
        ),
        force=args.force,
    )
    say(f"Created profile {args.name}: {path}")
    return 0


def cmd_profile_list(args: argparse.Namespace) -> int:
    from ..packet.profiles import list_profiles

    profiles = list_profiles()
    if args.json:
        emit_json([{"name": n, "source": s} for n, s in profiles])
    else:
        for name, source in profiles:
            say(f"{name}  ({source})")
    return 0


def cmd_template_list(args: argparse.Namespace) -> int:
    from ..packet.profiles import list_templates
    from ..paths import packet_root

    root = packet_root(args.packet) if args.packet else None
    templates = list_templates(root)
    if args.json:
        emit_json([{"name": n, "source": s} for n, s in templates])
    else:
        for name, source in templates:
            say(f"{name}  ({source})")
    return 0


def cmd_packet_explain(args: argparse.Namespace) -> int:
    from ..packet.loader import load_packet

    packet = load_packet(args.packet)
    doc: dict[str, Any] = {
        "schema": "prompt_runner.packet_explain/v1",
        "packet": packet.name,
        "root": str(packet.root),
        "manifest": packet.manifest.model_dump(mode="json"),
        "repos": {k: str(v) for k, v in packet.repos.items()},
        "default_repo": packet.default_repo,
        "prompts": [
            {
                "id": p.id,
                "name": p.name,
                "phase": p.phase,
                "file": p.relfile,
                "targets": list(p.targets),
                "depends_on": list(p.front.depends_on),
                "verify": p.contract.to_raw(),
            }
            for p in packet.prompts
        ],
    }
    emit_json(doc)
    return 0


def cmd_packet_preflight(args: argparse.Namespace) -> int:
    from ..packet.loader import load_packet
    from ..packet.preflight import preflight_report

    report = preflight_report(load_packet(args.packet))
    emit_json(report)
    return 0 if report["runtime_ready"] else 1


def cmd_checklist_sync(args: argparse.Namespace) -> int:
    from ..packet.loader import load_packet
    from ..verifier import render_checklist

    packet = load_packet(args.packet)
    written = []
    for prompt in packet.prompts:
        default = prompt.targets[0] if prompt.targets else None
        text = render_checklist(prompt.id, prompt.name, prompt.contract, default_repo=default)
        target = prompt.file.with_name(
            prompt.file.name.replace(".prompt.md", ".prompt.checklist.md")
        )
        target.write_text(text, encoding="utf-8")
        written.append(str(target))
        if prompt.contract.is_empty():
            warn(f"WARNING: prompt {prompt.id} ({prompt.name}) has no verification items yet")
    if args.json:
        emit_json({"written": written})
    else:
        for path in written:
            say(f"wrote {path}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from ..api import plan

    p = plan(args.packet, default_runtime_store="file", default_committer="git")
    from ..api import status
    from .status import mark_dead_runs, runner_alive

    state = status(p.packet)
    if not runner_alive(str(p.packet.root)):
        mark_dead_runs(state)
    from ..state.store import FileStore

    progress = FileStore(p.packet.root / ".prompt_runner").read_progress()
    rows = []
    for pp in p.prompts:
        record = state.get("prompts", {}).get(pp.id, {})
        rows.append(
            {
                "id": pp.id,
                "name": pp.prompt.name,
                "phase": pp.prompt.phase,
                "file": pp.prompt.relfile,
                "targets": list(pp.prompt.targets),
                "provider": pp.provider,
                "model": pp.model,
                # what --remaining will act on: the progress record, then the state's
                "status": (
                    progress[pp.id].status
                    if pp.id in progress and record.get("status") != "interrupted"
                    else record.get("status", "pending")
                ),
            }
        )
    from ..runner.lifecycle import reopen_changed_contracts

    recorded = {str(row["id"]): str(row["status"]) for row in rows}
    statuses = reopen_changed_contracts(p.packet, p.packet.root / ".prompt_runner", recorded)
    for row in rows:  # completed under a contract changed since: --remaining runs it again
        row["status"] = statuses[str(row["id"])]
    if args.json:
        emit_json({"packet": p.packet.name, "prompts": rows})
        return 0
    say(f"{p.packet.name}: {len(rows)} prompt(s)")
    for row in rows:
        say(f"  {row['id']}  phase {row['phase'] or '-'}  {row['status']:<12} {row['name']}")
    return 0
