"""``plan``, ``run``, ``verify``, ``repair``.

With ``--json`` stdout carries exactly one JSON document; everything meant for
a human (progress, warnings, notes) goes to stderr.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TextIO

from .. import git
from ..api import budget_text, plan, repair, run, status, verify
from ..errors import UserError
from ..examples import setup_example
from ..packet.loader import Packet, load_packet
from ..runner.shown import one_line
from ..state.records import RunStatus, exit_code_for
from ..verifier.model import subject
from ._out import emit_json, say, warn
from .run_flags import given_options


def load_for_command(packet: str, *, order_warnings: bool = True) -> Packet:
    """Load ``packet``, warn on stderr about files that will not run as expected.

    Warns once per markdown file in ``prompts/`` that is not a prompt file, and
    (``order_warnings``) once per prompt file without a numeric prefix.

    Raises:
        UserError: an invalid packet, or one with no prompts at all.
    """
    loaded = load_packet(packet)
    for file in loaded.ignored:
        warn(
            f"warning: {loaded.display(file)} is not a prompt file "
            "(prompt files end in .prompt.md); it was not loaded"
        )
    loaded.require_prompts()
    if order_warnings:
        for prompt in loaded.prompts:
            if prompt.order is None:
                warn(
                    f"warning: {loaded.display(prompt.file)} has no numeric prefix, so it runs "
                    "after the numbered prompts; name it NN_name.prompt.md to place it"
                )
    return loaded


def push_without_commits(packet: Packet, options: dict[str, Any]) -> str | None:
    """What a ``--push after_prompt`` with no runner commits does, as a warning
    (``None``: the run pushes what the git committer commits, or never pushes).

    ``--committer noop`` (or ``--no-commit``, or the manifest's ``committer:
    noop``) with ``--push after_prompt`` is no contradiction: it is how a
    workspace's ``commits: {mode: session, push: after_prompt}`` runs, the agent
    committing and the runner pushing. But the runner then commits nothing, so
    each push sends only what the agent committed.
    """
    if options.get("push") != "after_prompt":
        return None
    if options.get("no_commit"):
        why = "--no-commit"
    elif options.get("committer") == "noop":
        why = "--committer noop"
    elif options.get("committer") is None and packet.manifest.committer == "noop":
        why = f"{packet.display(packet.manifest_file)}'s committer: noop"
    else:
        return None
    return (
        f"note: --push after_prompt with {why}: the runner commits nothing, so each push "
        "sends only the commits the agent made itself (pass --committer git for the runner "
        "to commit each completed prompt)"
    )


def cmd_plan(args: argparse.Namespace) -> int:
    loaded = load_for_command(args.packet)
    options = given_options(args)
    p = plan(loaded, default_runtime_store="file", default_committer="git", **options)
    pushing = push_without_commits(loaded, options)
    if pushing is not None:
        warn(pushing)
    if args.json:
        # decoded: orjson's text where it decodes back equal (cli/_out.py), else json's
        emit_json(p.to_dict(), decoded=True)
        return 0
    say(f"Packet: {one_line(p.packet.name)} ({p.packet.root})")
    say(f"Profile: {p.profile or '(none)'}")
    say("Repos: " + ", ".join(f"{k}={v}" for k, v in p.packet.repos.items() if k != "packet"))
    say(
        f"Committer: {p.committer}   Runtime store: {p.runtime_store}   "
        f"Failure policy: {p.failure_policy}"
    )
    say(f"Run cost budget: {budget_text(p.max_run_cost_usd, 'max_run_cost_usd')}")
    say(f"Prompts: {len(p.prompts)}")
    say(f"Selected: {len(p.selected)} ({', '.join(p.selected)})")
    for pp in p.selected_prompts():
        r = pp.recovery
        repair = r.repair.max_attempts if r.repair.enabled else "off"
        say(
            f"  {pp.id} {one_line(pp.prompt.name)}: {pp.provider}/{pp.model or 'default'} "
            f"perm={pp.permission_mode} timeout={pp.timeout_ms or 'unbounded'} "
            f"retry={r.retry.max_attempts} repair={repair} "
            f"resume={r.resume_attempts} "
            f"cost budget={budget_text(pp.max_cost_usd, 'max_cost_usd')}"
        )
    for note in p.notes:
        say(f"note: {note}")
    return 0


class SignalInterrupt(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP) turned into an interruption.

    Attributes:
        signum: the signal number; the CLI exits ``128 + signum``.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def _install_signal_handlers() -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise SignalInterrupt(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


def cmd_run(args: argparse.Namespace) -> int:
    _install_signal_handlers()
    options = given_options(args)
    packet = load_for_command(args.packet)
    pushing = push_without_commits(packet, options)
    if pushing is not None:
        warn(pushing)
    if args.json and options.get("dry_run"):
        p = plan(packet, default_runtime_store="file", default_committer="git", **options)
        for note in p.notes:
            warn(f"warning: {note}")
        emit_json({**p.to_dict(), "dry_run": True})
        return 0
    return _to_the_end(
        lambda stream: run(
            packet, stream=stream, default_runtime_store="file", default_committer="git", **options
        ),
        as_json=args.json,
    )


class _Ended(Protocol):
    """What ``run`` and ``repair`` return (a ``RunResult``), as far as the CLI reads it."""

    @property
    def exit_code(self) -> int: ...

    def to_dict(self) -> dict[str, Any]: ...


def _to_the_end(call: Callable[[TextIO], _Ended], *, as_json: bool) -> int:
    """Run ``call`` (a run or a repair, given the stream its progress goes to) and
    return its exit code; with ``--json``, its result document, or the
    :func:`interrupted_doc` when a signal ends it (the interruption goes on up)."""
    try:
        result = call(sys.stderr if as_json else sys.stdout)
    except KeyboardInterrupt as exc:
        if as_json:
            emit_json(interrupted_doc(exc))
        raise
    if as_json:
        emit_json(result.to_dict())
    return result.exit_code


def interrupted_doc(exc: KeyboardInterrupt) -> dict[str, Any]:
    """``run``/``repair --json``'s document when a signal ends the run: the run's
    result document so far (``status: interrupted``, ``exit_code`` 128 + the
    signal's number) plus ``signal`` (``SIGINT``, ``SIGTERM``, ``SIGHUP``)."""
    signum = int(getattr(exc, "signum", signal.SIGINT))
    name = signal.Signals(signum).name
    partial = getattr(exc, "run_result", None)
    doc: dict[str, Any] = (
        partial.to_dict()
        if partial is not None
        else {"run_id": None, "prompts": {}, "failures": []}
    )
    doc.update(
        status=RunStatus.INTERRUPTED,
        exit_code=exit_code_for(RunStatus.INTERRUPTED, signum=signum),
        signal=name,
        message=f"Run interrupted by {name}.",
    )
    return doc


def cmd_verify(args: argparse.Namespace) -> int:
    _install_signal_handlers()  # SIGTERM ends a running verify command's group too
    doc = verify(load_for_command(args.packet, order_warnings=False), ids=tuple(args.ids))
    if args.json:
        emit_json(doc)
    else:
        for report in doc["reports"]:
            mark = "PASS" if report["pass"] else "FAIL"
            say(f"{mark} {report['prompt_id']} {report['name']}")
            for item in report["items"]:
                if not item["pass"]:
                    shown = subject(item.get("path"), item.get("command"), item.get("repo"))
                    say(f"    {item['verdict']}: {item['kind']} {shown}: {item['details']}")
        say(f"{doc['prompts']} prompt(s): {doc['failures']} failure(s), {doc['faults']} fault(s)")
    if doc["faults"]:
        return exit_code_for(RunStatus.HALTED)
    return exit_code_for(RunStatus.COMPLETED if doc["pass"] else RunStatus.FAILED)


def cmd_repair(args: argparse.Namespace) -> int:
    # `repair [PACKET] ID` and `repair --packet PACKET ID`; the packet defaults to
    # the current directory (cli/positionals.py, place_packet).
    packet = args.packet
    prompt_id = args.id
    if not prompt_id:
        raise UserError(
            "repair needs the id of the prompt to repair",
            fix=f"run `prompt-runner repair {packet} ID` (`prompt-runner list {packet}` shows ids)",
        )
    _install_signal_handlers()
    options = given_options(args)
    return _to_the_end(
        lambda stream: repair(
            packet,
            prompt_id,
            stream=stream,
            default_runtime_store="file",
            default_committer="git",
            **options,
        ),
        as_json=args.json,
    )


def cmd_demo(args: argparse.Namespace) -> int:
    _install_signal_handlers()
    packet = setup_example(args.example, Path(args.dir) if args.dir else None)
    say(f"Demo packet: {packet}")
    say(f"Workspace:   {packet / 'workspace'} (a fresh git repo)")
    say("")
    result = run(packet, stream=sys.stdout, default_runtime_store="file", default_committer="git")
    state = status(packet)
    say("")
    say("Summary")
    for prompt_id, record in sorted(state.get("prompts", {}).items()):
        modes = " -> ".join(str(a.get("mode")) for a in record.get("attempts", []))
        source = record.get("source") or ""
        extra = f" [{source}]" if source and source != "verifier" else ""
        say(f"  {prompt_id}  {record.get('status', '?'):<10} {modes}{extra}")
    commits = git.commit_count(packet / "workspace") - 1
    say(f"  {commits} commit(s) in the workspace; exit code {result.exit_code}")
    say(f"  Inspect: prompt-runner status {packet}")
    return result.exit_code
