"""What a packet and this build are: ``capabilities``, ``packet explain|preflight``,
``checklist sync``, ``list``."""

from __future__ import annotations

import argparse

from ..api_packet import explain, preflight
from ..api_prompts import capabilities, checklist_sync, list_prompts
from ..packet.loader import Packet, load_packet
from ..runner.shown import one_line
from ..state.layout import StateLayout
from . import kept_output
from ._out import emit_json, say, say_all, warn


def cmd_capabilities(args: argparse.Namespace) -> int:
    doc = capabilities().to_dict()
    if args.json:
        emit_json(doc)
    else:
        for key, value in doc.items():
            say(f"{key}: {value}")
    return 0


def cmd_packet_explain(args: argparse.Namespace) -> int:
    emit_json(explain(args.packet).to_dict())
    return 0


def cmd_packet_preflight(args: argparse.Namespace) -> int:
    report = preflight(args.packet)
    emit_json(report.to_dict())
    return 0 if report.runtime_ready else 1


def _with_prompts(packet: str) -> Packet:
    """The packet at ``packet`` loaded, refused as ``run`` refuses it when it holds
    no prompt (no prompt directory, a file of that name, an empty one).

    Raises:
        UserError: an invalid packet, or one with no prompts at all.
    """
    loaded = load_packet(packet)
    loaded.require_prompts()
    return loaded


def cmd_checklist_sync(args: argparse.Namespace) -> int:
    result = checklist_sync(_with_prompts(args.packet))
    for checklist in result.unverified:
        # one line each: a name (or id) with a line break in it is shown escaped
        warn(
            f"WARNING: prompt {one_line(checklist.prompt_id)} ({one_line(checklist.name)}) "
            "has no verification items yet"
        )
    if args.json:
        emit_json(result.to_dict())
    else:
        for path in result.written:
            say(f"wrote {path}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    listing = list_prompts(_with_prompts(args.packet))
    if args.json:
        text = emit_json(listing.to_dict())
    else:
        lines = [f"{one_line(listing.packet)}: {len(listing.prompts)} prompt(s)"]
        width = max((len(p.id) for p in listing.prompts), default=0)
        lines.extend(
            f"  {p.id:<{width}}  phase {p.phase or '-'}  {p.status:<12} {one_line(p.name)}"
            for p in listing.prompts
        )
        text = say_all(lines)
    # the whole stdout, kept while every input it was read from holds (kept_output.py)
    kept_output.offer(text, StateLayout.of_packet(listing.root).run_pid)
    return 0
