"""``control ...``: watch and steer a live run (SPEC 5).

Thin handlers over the library's control calls (:mod:`prompt_runner.api_control`;
:mod:`prompt_runner.api_contract` for the contract).
``status``, ``events``, ``log``, ``view`` and ``steer`` stay on the standard
library (no pydantic, no YAML); ``contract``, ``amend`` and ``relax`` load the
packet.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import api_control as api
from ..errors import UserError
from ._out import emit_json, say, warn

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control status`)
if TYPE_CHECKING:
    from typing import Any


def cmd_status(args: argparse.Namespace) -> int:
    from .state_args import chosen_state_dir, no_run_hint

    try:
        snap = api.control_status(args.packet).to_dict()
    except UserError as exc:
        chosen = chosen_state_dir()
        if chosen is None or exc.reason != api.NO_RUN:
            raise
        # name the directory looked in, not the packet (exit 2 as before)
        hint = no_run_hint(chosen)
        raise UserError(hint[0].lower() + hint[1:].rstrip(".")) from None
    if args.json:
        emit_json(snap)
        return 0
    for line in status_lines(snap):
        say(line)
    return 0


def status_lines(snap: dict[str, Any]) -> list[str]:
    """The human ``control status`` header."""
    lines = [f"Run {snap.get('run_id')} ({snap.get('packet')}): {snap.get('status')}"]
    if snap.get("prompt_id"):
        where = f"Prompt {snap['prompt_id']} {snap.get('prompt_name') or ''}".rstrip()
        if snap.get("attempt") is not None:
            where += f" · attempt {snap['attempt']} ({snap.get('mode')})"
        lane = "/".join(str(x) for x in (snap.get("provider"), snap.get("model")) if x)
        if lane:
            where += f" · {lane}"
        lines.append(where)
    tokens = snap.get("tokens") or {}
    lines.append(
        f"Elapsed {int(snap.get('elapsed_ms') or 0) / 1000:.1f} s · "
        f"{snap.get('tool_count', 0)} tool(s) · tokens in {tokens.get('input', 0)} "
        f"out {tokens.get('output', 0)} · {snap.get('event_count', 0)} event(s) · "
        f"{snap.get('steer_count', 0)} steer(s)"
    )
    view = snap.get("view") or {}
    lines.append("View " + " ".join(f"{k}={v}" for k, v in view.items()))
    wait = snap.get("wait")
    if snap.get("waiting_until") and isinstance(wait, dict):
        lines.append(
            f"Waiting until {snap['waiting_until']} for {wait.get('provider')} "
            f"{wait.get('window')} ({wait.get('kind')}): {wait.get('reason')}"
        )
    stage = snap.get("stage")
    if snap.get("status") == "running" and isinstance(stage, dict):
        name, prompt_id, since = stage.get("name"), stage.get("prompt_id"), stage.get("since")
        lines.append(f"Stage {name} (prompt {prompt_id}) since {since}")
    if snap.get("pending_requests"):
        lines.append(f"Pending requests: {snap['pending_requests']}")
    lines.append(f"Updated {snap.get('updated_at')}")
    return lines


def _emit_line(record: dict[str, Any], *, flush: bool = True) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    if flush:  # following: a reader downstream wants each record as it comes
        sys.stdout.flush()


def _say_waiting(args: argparse.Namespace) -> None:
    """``--follow`` of a packet no run has started in: one line on stderr that the
    follower waits for one (stdout stays the records alone, machine-read)."""
    # lazy: only a follower asks
    from ..control.streams import waits_for_a_run
    from ..errors import shown_path
    from ..paths import packet_root
    from .state_args import chosen_state_dir

    if not args.follow or not waits_for_a_run(args.packet):
        return
    where = shown_path(packet_root(args.packet))
    chosen = chosen_state_dir()
    if chosen is not None:
        where += f" (state directory {shown_path(chosen)})"
    warn(f"waiting for a run of {where} to start (Ctrl-C to stop)")
    sys.stderr.flush()


def cmd_events(args: argparse.Namespace) -> int:
    from_current = args.from_ == "current"
    _say_waiting(args)
    if args.json:
        # lazy: not control status's start-up; streams alone, not the whole client
        from ..control.streams import event_json_blocks

        # The stream's lines as stored, a block at a time (control/streams.py).
        sys.stdout.flush()
        out = sys.stdout.buffer
        for block in event_json_blocks(args.packet, from_current=from_current, follow=args.follow):
            out.write(block)
            if args.follow:  # a reader downstream wants each event as it comes
                out.flush()
        return 0
    records = api.control_events(args.packet, from_current=from_current, follow=args.follow)
    # lazy: the event model costs --json and the other control commands ~15 ms
    from ..providers.events import Event
    from ..render.lines import format_event

    view: dict[str, Any] = {"log_mode": "compact"}
    for record in records:
        if record.get("kind") == api.RUN_FINISHED:
            say(run_end_line(record))
            continue
        data = {
            k: v for k, v in record.items() if k not in ("kind", "at_ms", "prompt_id", "run_id")
        }
        line = format_event(Event(record.get("kind", "?"), data), view)
        if line is not None:
            say(f"[{record.get('prompt_id', '?')}] {line}")
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    _say_waiting(args)
    for entry in api.control_log(args.packet, follow=args.follow):
        if args.json:
            _emit_line(entry, flush=args.follow)
            continue
        say(run_end_line(entry) if entry.get("kind") == api.RUN_FINISHED else log_line(entry))
    return 0


def run_end_line(record: dict[str, Any]) -> str:
    """The line that says a run ended (a ``run_finished`` record)."""
    line = f"Run {record.get('run_id') or '(unknown)'} finished: {record.get('status')}"
    if record.get("reason"):
        line += f" ({record['reason']})"
    return line


def log_line(entry: dict[str, Any]) -> str:
    """One human ``control log`` line; a field the entry lacks is left out or named.

    ``AT COMMAND OUTCOME [by AUTHOR] [[PROMPT#ATTEMPT]][: REASON]`` -- the
    ``#ATTEMPT`` only when known; an unreadable request's command shows as
    ``(unknown command)``.
    """
    at = entry.get("at") or "(no time)"
    command = entry.get("command") or "(unknown command)"
    outcome = entry.get("outcome") or "(no outcome)"
    who = f" by {entry['author']}" if entry.get("author") else ""
    where = ""
    if entry.get("prompt_id"):
        attempt = entry.get("attempt")
        where = f" [{entry['prompt_id']}{'' if attempt is None else f'#{attempt}'}]"
    why = f": {entry['reason']}" if entry.get("reason") else ""
    return f"{at} {command} {outcome}{who}{where}{why}"


def cmd_view(args: argparse.Namespace) -> int:
    receipt = api.control_view(
        args.packet,
        log_mode=args.log_mode,
        tool_output=args.tool_output,
        thinking=args.thinking,
        diff=args.diff,
        author=args.author,
    )
    name = receipt.request
    if args.json:
        emit_json(receipt.to_dict())
    elif receipt.outcome == "rejected":
        say(f"View change refused ({name}): {receipt.reason}.")
    elif receipt.applies_to == "live_run":
        say(
            f"View change queued ({name}); the live run applies it at its next event "
            "boundary (a run that ends first refuses it: `control log` says which)."
        )
    else:
        say(
            f"View change queued ({name}); no run is live; the next run of this packet "
            "applies it as its first prompt starts."
        )
    return 1 if receipt.outcome == "rejected" else 0


def cmd_steer(args: argparse.Namespace) -> int:
    if getattr(args, "fleet", None) is not None:
        from .fleet import steer_member  # lazy: the fleet modules load only for --fleet

        return steer_member(args)
    receipt = api.control_steer(args.packet, args.text or "", author=args.author)
    name = receipt.request
    if args.json:
        emit_json(receipt.to_dict())
    elif receipt.outcome == "rejected":
        say(f"Steer refused ({name}): {receipt.reason}.")
    elif receipt.stage == "verifying":
        say(
            f"Steer queued ({name}); prompt {receipt.prompt_id} is being verified, so no "
            "session is running: its next session (a repair or retry) gets the steer in its "
            "prompt, and if no session follows the steer is refused (`control log` says which)."
        )
    elif receipt.stage == "committing":
        say(
            f"Steer queued ({name}); prompt {receipt.prompt_id} is being committed, so its "
            "session has ended: the steer is refused as the commit ends unless another "
            "session of it follows (`control log` says which), never given to the next prompt."
        )
    elif receipt.live:
        say(
            f"Steer queued ({name}); the running prompt gets it at the next event boundary "
            "(a run that ends first refuses it: `control log` says which)."
        )
    else:
        say(
            f"Steer queued ({name}); no run is live; resuming the unfinished run "
            "(`prompt-runner run`) delivers it to its first prompt that runs "
            "(a `--new-run` refuses it)."
        )
    return 1 if receipt.outcome == "rejected" else 0


def cmd_wake(args: argparse.Namespace) -> int:
    """``control wake``: 0 when the wait ended (or the request is still pending), 1
    when the runner refused it (it was not waiting)."""
    receipt = api.control_wake(args.packet, author=args.author)
    if args.json:
        emit_json(receipt.to_dict())
    elif receipt.outcome == "applied":
        until = f" (it was waiting until {receipt.waiting_until})" if receipt.waiting_until else ""
        say(f"Woken ({receipt.request}): the wait ended{until}; the prompt goes on now.")
    elif receipt.outcome == "rejected":
        say(f"Wake refused ({receipt.request}): {receipt.reason}.")
    else:
        say(f"Wake queued ({receipt.request}); `control log` shows how the runner decides it.")
    return 1 if receipt.outcome == "rejected" else 0


def cmd_contract(args: argparse.Namespace) -> int:
    # lazy: the contract and its diff load the verifier (YAML), which the live-run
    # commands (control status) skip
    from .. import api_contract
    from ..control.contracts import diff_lines

    doc = api_contract.control_contract(args.packet, _prompt_id(args)).to_dict()
    if args.json:
        emit_json(doc)
        return 0
    say(f"contract for {doc['prompt_id']}")
    say("")
    for record in doc["amendments"]:
        say(_record_line(record))
        say("")
        for line in diff_lines(record.get("before") or {}, record.get("after") or {}):
            say(f"    {line}")
        say("")
    if not doc["amendments"]:
        for line in doc["lines"] or ["(empty: the contract asserts nothing)"]:
            say(f"    {line}")
    return 0


def _record_line(record: dict[str, Any]) -> str:
    what = record.get("operation")
    clauses = list(record.get("add") or record.get("remove") or {}) or record.get("drop") or []
    who = f" by {record['author']}" if record.get("author") else ""
    saved = " (persisted)" if record.get("persist") else " (run-local)"
    return (
        f"  {record.get('phase', '?'):<12} {what} {', '.join(clauses)}{who}{saved} — "
        f"{record.get('reason')}"
    )


def _print_change(result: dict[str, Any], as_json: bool) -> int:
    if as_json:
        emit_json(result)
        return 0
    record = result["record"]
    say(f"contract for {record['prompt']}")
    say("")
    say(_record_line(record))
    say("")
    for line in result["diff"]:
        say(f"    {line}")
    if result.get("file_diff"):
        say("")
        say(result["file_diff"].rstrip("\n"))
    say("")
    target = record.get("applies_to") or {}
    if target.get("note"):
        say(target["note"])
    say(f"Recorded in {result['amendments_file']}.")
    return 0


def _add_map(args: argparse.Namespace) -> dict[str, list[Any]]:
    add: dict[str, list[Any]] = {}
    if args.add_file:
        add["files_exist"] = list(args.add_file)
    if args.add_absent:
        add["files_absent"] = list(args.add_absent)
    for spec in args.add_contains:
        path, sep, text = spec.partition("=")
        if not sep or not path:
            raise UserError(
                f"`{spec}` is not PATH=TEXT", key="--add-contains", fix="e.g. NOTES.md=done"
            )
        add.setdefault("contains", []).append({"path": path, "text": text})
    for command in args.add_command:
        import shlex  # lazy: amend --add-command only

        argv = shlex.split(command)
        if not argv:
            raise UserError("is empty", key="--add-command", fix="e.g. --add-command 'make test'")
        add.setdefault("commands", []).append({"exec": argv[0], "args": argv[1:]})
    return add


def _prompt_id(args: argparse.Namespace) -> str:
    """The ID of ``control contract|amend|relax [PACKET] ID``."""
    if not args.id:
        raise UserError(
            f"`control {args.subcommand}` needs the id of a prompt",
            fix=f"run `prompt-runner control {args.subcommand} {args.packet} ID` "
            f"(`prompt-runner list {args.packet}` shows ids)",
        )
    return str(args.id)


def cmd_amend(args: argparse.Namespace) -> int:
    from ..control.client import refusals_logged  # lazy: not control status's start-up

    with refusals_logged(args.packet, "amend", {"prompt_id": args.id}, author=args.author):
        prompt_id = _prompt_id(args)
        add = _add_map(args)
    from .. import api_contract  # lazy: contract, amend and relax only (not control status)

    result = api_contract.control_amend(
        args.packet,
        prompt_id,
        add=add,
        reason=args.reason,
        author=args.author,
        persist=args.persist,
    ).to_dict()
    return _print_change(result, args.json)


def cmd_relax(args: argparse.Namespace) -> int:
    from ..control.client import refusals_logged  # lazy: not control status's start-up

    with refusals_logged(args.packet, "relax", {"prompt_id": args.id}, author=args.author):
        prompt_id = _prompt_id(args)
    from .. import api_contract  # lazy: contract, amend and relax only (not control status)

    result = api_contract.control_relax(
        args.packet,
        prompt_id,
        drop=args.drop,
        reason=args.reason,
        confirm=args.confirm,
        author=args.author,
        persist=args.persist,
    ).to_dict()
    return _print_change(result, args.json)
