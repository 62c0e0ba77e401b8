"""``status``: the runtime state (hot path: no pydantic, no YAML)."""

from __future__ import annotations

import argparse
import os

from ..paths import packet_root
from ..state import status_cache
from ..state.layout import StateLayout
from ._out import emit_json, emit_json_kept, say, warn

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`status`)
if TYPE_CHECKING:
    from typing import Any

NO_RECORD = "no record"
"""What ``status`` shows for a prompt the run's summary names but whose log is gone."""


def id_order(prompt_id: str) -> tuple[int, int, str]:
    """The order ``status`` lists prompt ids in: by the number they start with,
    as ``list`` and ``run`` order the prompt files (``2``, ``03``, ``10``), then
    as text; an id without a leading number after every numbered one."""
    digits = len(prompt_id) - len(prompt_id.lstrip("0123456789"))
    if digits == 0:
        return (1, 0, prompt_id)
    return (0, int(prompt_id[:digits]), prompt_id[digits:])


def cmd_status(args: argparse.Namespace) -> int:
    if getattr(args, "workspace_value", None) is not None:
        from .workspace import cmd_status as workspace_status_cmd  # lazy: --workspace only

        return workspace_status_cmd(args)
    if args.json:
        _print_json(args.packet)
        return 0
    # lazy: a kept `status --json` text needs none of these (_print_json)
    from ..api_status import status
    from ..state.records import PromptStatus
    from ._push_text import push_lines

    state = status(args.packet)
    if state.get("packet_error"):  # the state is shown still: a live run's is valid
        warn(packet_warning(state["packet_error"]))
    live = bool(state["runner"]["alive"])
    prompts: dict[str, Any] = state.get("prompts", {})
    run_id = state.get("run_id")
    pending: list[str] = state["pending"]
    say(f"Run: {run_id or '(none yet)'}" + (" (runner active)" if live else ""))
    for text in wait_lines(state, live):
        say(text)
    removed: dict[str, Any] = state.get("removed_prompts") or {}
    if not live and run_id is None:  # a run of the packet may keep its state elsewhere
        # lazy: only a state root with no run reads the manifest's repos (YAML)
        from ..watch.elsewhere import elsewhere_hint

        hint = elsewhere_hint(os.fspath(_root(args.packet)), "status")
        if hint is not None:
            say(hint)
    if not prompts:
        for text in removed_lines(removed):
            say(text)
        say("No prompt of the packet has run yet." if removed else "No prompt has run yet.")
        from .state_args import chosen_state_dir, no_run_hint

        chosen = chosen_state_dir()
        if chosen is not None and run_id is None and not removed:
            say(no_run_hint(chosen))
        if not pending:
            return 0
        removed = {}  # said above
    counts: dict[str, int] = {}
    for record in prompts.values():
        shown = record.get("status", NO_RECORD)
        counts[shown] = counts.get(shown, 0) + 1
    if pending:
        counts["pending"] = len(pending)
    say("Prompts: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    for text in removed_lines(removed):
        say(text)
    for text in run_end_lines(state["last_run"], _unrun(state["last_run"], pending), live):
        say(text)
    for text in push_lines(state.get("push")):
        say(text)
    ids = sorted({*prompts, *pending}, key=id_order)
    width = max((len(prompt_id) for prompt_id in ids), default=0)
    for prompt_id in ids:
        if prompt_id not in prompts:
            say(f"  {prompt_id:<{width}}  {'pending':<22} not run yet")
            continue
        record = prompts[prompt_id]
        attempts = record.get("attempts", [])
        modes = ",".join(str(a.get("mode")) for a in attempts)
        shown = record.get("status", NO_RECORD)
        line = f"  {prompt_id:<{width}}  {shown:<22} attempts={len(attempts)}"
        if modes:
            line += f" ({modes})"
        if record.get("source") and record.get("source") != "verifier":
            line += f" source={record['source']}"
        say(line)
        if "status" not in record:
            say(
                f"      its record (prompts/{prompt_id}.jsonl in the state directory) is "
                "missing: the state directory was damaged or removed while a run used it"
            )
        quiet = (PromptStatus.COMPLETED, PromptStatus.RUNNING)
        if record.get("status") not in quiet and record.get("reason"):
            say(f"      {record['reason']}")
        for text in agent_control_lines(record):
            say(f"      {text}")
    return 0


def _root(packet: str) -> Any:
    """The packet directory ``status`` shows: one whose manifest is not a
    regular file (a named pipe, a directory, a link to ``/dev/zero`` or to
    nothing) too -- its state root needs no manifest, and the packet is one
    that does not load (``packet_error``, the file rule's sentence)."""
    return packet_root(packet, faulty_manifest=True)


def _unrun(last: dict[str, Any] | None, pending: list[str]) -> list[str]:
    """The prompts of ``pending`` the current run selected (``last_run.targets``):
    what it left unrun (the packet's other pending prompts no run selected)."""
    targets = set(last.get("targets") or []) if last is not None else set()
    return [prompt_id for prompt_id in pending if prompt_id in targets]


def packet_warning(error: str) -> str:
    """The one line ``status`` says of a packet that does not load (``status``'s
    ``packet_error``, the loader's sentence): then no recorded prompt is taken
    for one removed from the packet, and each is shown as recorded."""
    return f"warning: the packet does not load: {error}"


def removed_lines(removed: dict[str, Any]) -> list[str]:
    """The one line naming the recorded prompts no longer in the packet
    (``status``'s ``removed_prompts``: ``{id: last status}``), not counted above:
    ``2 recorded prompt(s) no longer in the packet (not counted): 01 completed,
    04 verification_failed``; none: no line."""
    if not removed:
        return []
    shown = [f"{prompt_id} {status or '?'}" for prompt_id, status in list(removed.items())[:10]]
    more = ", ..." if len(removed) > 10 else ""
    return [
        f"{len(removed)} recorded prompt(s) no longer in the packet (not counted): "
        + ", ".join(shown)
        + more
    ]


def run_end_lines(last: dict[str, Any] | None, pending: list[str], live: bool) -> list[str]:
    """How the current run ended (``status``'s ``last_run``, api_status.last_run)
    and what it left unrun, when no runner lives: ``Last run ended interrupted at
    T (a `stop --after-prompt`); 2 of its 3 prompts not run: 2, 3 --
    `prompt-runner run --remaining` runs them``. A live run's pending prompts
    are in the counts."""
    if live or last is None or not isinstance(last.get("status"), str):
        return []
    ended = last["status"]
    total = len(last.get("targets") or [])
    if last.get("recorded_status") is not None:  # recorded running, its runner gone
        line = "Last run did not finish: its runner is gone"
    else:
        line = f"Last run ended {ended}"
        if last.get("finished_at"):
            line += f" at {last['finished_at']}"
        stop = last.get("stop")
        if ended == "interrupted" and isinstance(stop, dict):
            line += " (a `stop --after-prompt`)" if stop.get("after_prompt") else " (a `stop`)"
    if pending:
        shown = ", ".join(pending[:10]) + (", ..." if len(pending) > 10 else "")
        line += (
            f"; {len(pending)} of its {total} prompt(s) not run: {shown}"
            " -- `prompt-runner run --remaining` runs them"
        )
    return [line]


def _print_json(packet: str) -> None:
    """``status --json``: the state document's text, from the state root's
    status cache while no run holds the packet (no ``run.pid``) and the files
    it was folded from are unchanged (state/status_cache.py says why that is
    the same text), else folded and printed -- and kept when those files held
    still and no runner lived."""
    root = _root(packet)
    layout = StateLayout.of_packet(root)
    keeper = None
    if layout.root.is_dir():
        kept = status_cache.open_kept(layout)
        if kept is not None:
            with kept:
                if not layout.run_pid.exists():
                    emit_json_kept(kept)
                    return
    from ..api_status import prompt_dir_text, status  # lazy: a kept text needs no fold

    # the document lists the packet's prompts only: its manifest and prompt
    # files are inputs too (a packet whose prompt_dir the scan cannot read: not kept)
    prompt_dir = prompt_dir_text(root) if layout.root.is_dir() else None
    if prompt_dir is not None:
        manifest = os.path.join(root, "prompt_runner_packet.md")  # packet.files.MANIFEST_NAME
        keeper = status_cache.Keeper.start(layout, (str(manifest), prompt_dir))
    state = status(packet)
    text = emit_json(state, decoded=True)
    if keeper is not None and _keepable(state):
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: printed (as before), not kept
            return
        keeper.keep(data)


def _keepable(state: dict[str, Any]) -> bool:
    """No runner lives and no live agent progress was read: then the document is
    folded from the fingerprinted files alone."""
    if state["runner"]["alive"] or "packet_error" in state:
        return False  # a packet's load reads more than the fingerprint holds (its repos)
    for record in state.get("prompts", {}).values():
        control = record.get("agent_control") if isinstance(record, dict) else None
        if isinstance(control, dict) and isinstance(control.get("live"), dict):
            return False
    return True


def wait_lines(state: dict[str, Any], live: bool) -> list[str]:
    """``Waiting until T for claude five_hour (usage_limit): reason`` while a usage wait
    is recorded (``runner/usage_wait.py``); a dead runner's says the next run waits."""
    wait, until = state.get("usage_wait"), state.get("waiting_until")
    if not isinstance(wait, dict) or not until:
        return []
    line = (
        f"Waiting until {until} for {wait.get('provider')} {wait.get('window')} "
        f"({wait.get('kind')}): {wait.get('reason')}"
    )
    if not live:
        return [line + " -- the runner stopped; `run --remaining` waits what is left"]
    return [line, "  `prompt-runner control wake` ends the wait now"]


# -- agent control (issue 8) ------------------------------------------------------------


def agent_control_lines(record: dict[str, Any]) -> list[str]:
    """A controlled prompt's human status lines (SPEC 7).

    ``iteration  N of M · K verified · last action X`` appears only while the
    prompt uses loop semantics (a repeat, a later iteration, or
    ``default_action: repeat``); ``cursor ...`` only when the agent recorded
    progress, labelled ``previous iteration`` (or ``another run``) when stale.
    Ordinary prompts get no lines.
    """
    control = record.get("agent_control")
    if not isinstance(control, dict):
        return []
    lines: list[str] = []
    if control.get("looping"):
        text = (
            f"iteration  {control.get('iteration')} of {control.get('max_iterations')}"
            f" · {control.get('verified_iterations', 0)} verified"
        )
        if control.get("action"):
            text += f" · last action {control['action']}"
            if control.get("source") == "default":
                text += " (default)"
        lines.append(text)
    progress = control.get("progress")
    if isinstance(progress, dict) and progress.get("cursor"):
        parts = [f"cursor     {progress['cursor']}"]
        if progress.get("unit"):
            parts.append(f"unit {progress['unit']}")
        summary = progress.get("summary") or ""
        if progress.get("stale"):
            where = (
                "previous iteration"
                if progress.get("run_id") == record.get("run_id")
                else "another run"
            )
            summary = f"{where} — {summary}"
        parts.append(summary)
        lines.append(" · ".join(parts))
    return lines
