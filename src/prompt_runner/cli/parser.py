"""The whole command line of SPEC 10 as one argparse parser.

:func:`build_parser` assembles it from one builder per family of commands, in
the order ``prompt-runner --help`` lists them. Each command's parser names its
handler (``"running:cmd_run"``: module of this package, function), which
``cli/main.py`` imports only when that command runs. The ``run``, ``plan`` and
``repair`` flags come from the option table (``cli/run_flags.py``).

A parser refuses a bad command line by raising :class:`~.exits.UsageError`
(argparse's sentence and where the usage is), which the one error mapping
(``cli/exits.py``) turns into exit 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .parser_kit import (
    PACKET_HELP,
    SKIPPED,
    Commands,
    Parser,
    add_bounded_watch_flags,
    add_packet,
    span,
)
from .parser_ops import dashboard_commands, fleet_commands, supervise_commands, workspace_commands


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole CLI surface of SPEC 10; given the command line ``argv``, only
    as much of it as parsing ``argv`` takes.

    A command line that starts with a command (``status P --json``, ``control
    status``) gets a parser holding that command alone -- building all 63
    parsers was a third of a short command's start-up -- which parses it, and
    prints its ``--help`` and its errors, exactly as the whole parser does
    (each subparser is built by the same code either way, and none depends on
    its siblings). Anything else (no command, a flag first, an unknown command
    or subcommand) gets the whole parser, whose help and errors list them all.
    """
    words = _command_words(argv)
    parser = _build(words)
    return _build(()).parser if words and parser.missed else parser.parser


class _Built:
    """A parser and whether it lacks the command it was built for."""

    def __init__(self, parser: argparse.ArgumentParser, missed: bool) -> None:
        self.parser = parser
        self.missed = missed


def _command_words(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The command (and a group's subcommand) ``argv`` starts with; ``()`` when it
    starts with a flag or is empty (then only the whole parser will do)."""
    if not argv or argv[0].startswith("-"):
        return ()
    if len(argv) > 1 and not argv[1].startswith("-"):
        return (argv[0], argv[1])
    return (argv[0],)


def _build(words: tuple[str, ...]) -> _Built:
    parser = Parser(
        prog="prompt-runner",
        description="Run packets of prompts through coding agents; a contract decides done.",
    )
    parser.add_argument("-v", "--version", action="store_true", help="print the version")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    commands = Commands(parser, top=True, only=words)
    for add in (
        _info_commands,
        _store_commands,
        _packet_commands,
        _authoring_commands,
        _running_commands,
        supervise_commands,
        _control_commands,
        workspace_commands,
        fleet_commands,
        dashboard_commands,
        _agent_control_commands,
    ):
        add(commands)
    return _Built(parser, commands.missed)


def _add_recovery_flags(p: argparse.ArgumentParser) -> None:
    """``packet new`` / ``profile new`` shorthands for the ``recovery`` block (delays in ms)."""
    if p is SKIPPED:  # a command left out of this parser: nothing to load for it
        return
    # lazy: the option table (typing) loads only for a parser with these flags
    from typing import get_args

    from ..option_table import CliConfirmation

    p.add_argument("--cli-confirmation", dest="cli_confirmation", choices=get_args(CliConfirmation))
    p.add_argument("--resume-attempts", type=int)
    p.add_argument("--retry-attempts", type=int)
    p.add_argument("--retry-base-delay-ms", type=int)
    p.add_argument("--retry-max-delay-ms", type=int)
    p.add_argument("--retry-jitter", action="store_true", default=None)
    p.add_argument("--no-retry-jitter", dest="retry_jitter", action="store_false")
    p.add_argument("--repair-attempts", type=int)
    p.add_argument("--auto-repair", action="store_true", default=None)
    p.add_argument("--no-auto-repair", dest="auto_repair", action="store_false")


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """The ``run``/``plan``/``repair`` flags (``cli/run_flags.py``)."""
    if p is SKIPPED:  # a command left out of this parser: nothing to load for it
        return
    from .run_flags import add_run_flags  # lazy: the option table (typing) with it

    add_run_flags(p)


def _info_commands(commands: Commands) -> None:
    """``version``, ``capabilities``, ``demo``, ``init``."""
    p = commands.add("version", "basic:cmd_version", "print the version")
    p.add_argument("--json", action="store_true")
    p = commands.add("capabilities", "packets:cmd_capabilities", "what this build supports")
    p.add_argument("--json", action="store_true")
    p = commands.add("demo", "running:cmd_demo", "set up the example packet and run it (simulated)")
    p.add_argument("--dir", help="packet directory to create (default: a new temp dir)")
    p.add_argument("--example", default="recovery_demo")
    p = commands.add("init", "store:cmd_init", "create the profile/template store")
    p.add_argument(
        "--default-profile",
        "-p",
        dest="default_profile",
        help="the profile config.md names (created from codex-default's settings if new)",
    )
    p.add_argument("--json", action="store_true")


def _store_commands(commands: Commands) -> None:
    """``profile new|list``, ``template list``: the profile/template store."""
    profile = commands.group("profile", "manage profiles")
    p = profile.add("new", "store:cmd_profile_new", "create a profile")
    p.add_argument("name")
    p.add_argument("--provider")
    p.add_argument("--model")
    p.add_argument("--reasoning", dest="reasoning_effort")
    p.add_argument("--permission", dest="permission_mode")
    p.add_argument("--prompt-template", dest="prompt_template")
    p.add_argument("--tools", help="allowed tools, comma-separated (Read,Edit,Bash)")
    _add_recovery_flags(p)
    p.add_argument("--force", action="store_true")
    p = profile.add("list", "store:cmd_profile_list", "list profiles")
    p.add_argument("--json", action="store_true")
    template = commands.group("template", "prompt templates")
    p = template.add("list", "store:cmd_template_list", "list templates")
    p.add_argument("packet", nargs="?")
    p.add_argument("--json", action="store_true")


def _packet_commands(commands: Commands) -> None:
    """``packet new|migrate-contracts|add-repo|explain|lint|doctor|preflight``, ``repo add``."""
    packet = commands.group("packet", "packet authoring tools")
    p = packet.add("new", "authoring:cmd_packet_new", "scaffold a packet")
    p.add_argument("name")
    p.add_argument("--root", default=".")
    for flag in ("--profile", "--provider", "--model", "--reasoning", "--permission"):
        p.add_argument(flag)
    p.add_argument("--repo", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--default-repo")
    p.add_argument("--prompt-template")
    _add_recovery_flags(p)
    p = packet.add(
        "migrate-contracts",
        "authoring:cmd_packet_migrate_contracts",
        "rewrite legacy shell-string commands as argv entries",
    )
    add_packet(p)
    p.add_argument("--write", action="store_true", help="rewrite the files (default: a diff)")
    p.add_argument("--json", action="store_true")
    p = packet.add("add-repo", "authoring:cmd_packet_add_repo", "add a repo to a packet")
    p.add_argument("name")
    p.add_argument("path")
    p.add_argument("--packet", help=PACKET_HELP)
    p.add_argument("--default", action="store_true")
    for name, handler, help_text in (
        ("explain", "packets:cmd_packet_explain", "the resolved manifest as JSON"),
        ("lint", "authoring:cmd_packet_lint", "find authoring hazards"),
        ("doctor", "authoring:cmd_packet_doctor", "find authoring gaps"),
        ("preflight", "packets:cmd_packet_preflight", "runtime readiness JSON"),
    ):
        p = packet.add(name, handler, help_text)
        add_packet(p)
        p.add_argument("--json", action="store_true")
        if name == "lint":
            p.add_argument("--strict", action="store_true")
    # the reference's spelling of `packet add-repo`: `repo add NAME PATH [PACKET]`
    repo = commands.group("repo", "packet repos (the reference's `repo add`)")
    p = repo.add(
        "add", "authoring:cmd_packet_add_repo", "add a repo to a packet (same as `packet add-repo`)"
    )
    p.add_argument("name")
    p.add_argument("path")
    add_packet(p, flag=True)
    p.add_argument("--default", action="store_true")


def _authoring_commands(commands: Commands) -> None:
    """``prompt new``, ``checklist sync``."""
    prompt = commands.group("prompt", "prompt authoring")
    p = prompt.add("new", "authoring:cmd_prompt_new", "scaffold a prompt")
    p.add_argument("id")
    p.add_argument("--packet", help=PACKET_HELP)
    for flag in ("--phase", "--name", "--targets", "--commit", "--template"):
        p.add_argument(flag)
    checklist = commands.group("checklist", "checklists derived from contracts")
    p = checklist.add("sync", "packets:cmd_checklist_sync", "write *.prompt.checklist.md files")
    add_packet(p)
    p.add_argument("--json", action="store_true")


def _running_commands(commands: Commands) -> None:
    """``list``, ``plan``, ``run``, ``verify``, ``repair``, ``status``, ``watch``, ``schema``."""
    p = commands.add("list", "packets:cmd_list", "list the packet's prompts and their status")
    add_packet(p)
    p.add_argument("--json", action="store_true")
    for name, handler, help_text in (
        ("plan", "running:cmd_plan", "show the resolved execution plan"),
        ("run", "running:cmd_run", "run a packet"),
    ):
        p = commands.add(name, handler, help_text)
        add_packet(p, flag=True)
        p.add_argument("ids", nargs="*", metavar="ID")
        p.add_argument("--json", action="store_true")
        _add_run_flags(p)
    p = commands.add(
        "verify", "running:cmd_verify", "check contracts only (no session, no state change)"
    )
    add_packet(p, flag=True, workspace=True)
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--json", action="store_true")
    p = commands.add(
        "repair", "running:cmd_repair", "re-run one prompt with its recorded unmet items"
    )
    add_packet(p, flag=True)
    p.add_argument("id", nargs="?")
    p.add_argument("--json", action="store_true")
    _add_run_flags(p)
    p = commands.add("status", "status:cmd_status", "show the runtime state")
    add_packet(p, flag=True, workspace=True)
    p.add_argument("--json", action="store_true")
    p = commands.add("watch", "watching:cmd_watch", "one line per sample for a long unattended run")
    add_packet(p, flag=True, workspace=True)
    p.add_argument(
        "--interval", type=span(), default=900.0, metavar="SECONDS", help="default 900 (15 min)"
    )
    p.add_argument("--once", action="store_true")
    p.add_argument("--json", action="store_true")
    add_bounded_watch_flags(p)
    p = commands.add(
        "schema", "authoring:cmd_schema", "JSON Schema for the manifest or prompt front matter"
    )
    p.add_argument("which", choices=["manifest", "prompt", "workspace", "fleet"])


def _control_commands(commands: Commands) -> None:
    """``control status|events|log|view|steer|wake|contract|amend|relax``."""
    control = commands.group("control", "watch and steer a live run")
    p = control.add("status", "controlling:cmd_status", "the run snapshot")
    add_packet(p, flag=True, workspace=True)
    p.add_argument("--json", action="store_true")
    p = control.add("events", "controlling:cmd_events", "the canonical event stream")
    add_packet(p, flag=True, workspace=True)
    p.add_argument("--from", dest="from_", choices=["start", "current"], default="start")
    p.add_argument("--follow", action="store_true")
    p.add_argument("--json", action="store_true")
    p = control.add("log", "controlling:cmd_log", "the control command log")
    add_packet(p, flag=True, workspace=True)
    p.add_argument("--follow", action="store_true")
    p.add_argument("--json", action="store_true")
    p = control.add("view", "controlling:cmd_view", "change rendering at the next event boundary")
    add_packet(p, flag=True, workspace=True)
    for flag in ("--log-mode", "--tool-output", "--thinking", "--diff", "--author"):
        p.add_argument(flag)
    p.add_argument("--json", action="store_true")
    p = control.add(
        "steer", "controlling:cmd_steer", "interrupt and resume the session with guidance"
    )
    add_packet(p, flag=True, workspace=True)
    p.add_argument("text", nargs="?")
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--fleet",
        metavar="F",
        help="steer member --workspace W of fleet F on the machine that runs it",
    )
    p = control.add("wake", "controlling:cmd_wake", "end a usage-limit wait now")
    add_packet(p, flag=True, workspace=True)
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p = control.add(
        "contract", "controlling:cmd_contract", "show a prompt's contract and amendments"
    )
    add_packet(p, flag=True, workspace=True)
    p.add_argument("id", nargs="?")
    p.add_argument("--json", action="store_true")
    _amend_commands(control)


def _amend_commands(control: Commands) -> None:
    """``control amend`` and ``control relax``: the same arguments, then their own flags."""
    for name in ("amend", "relax"):
        p = control.add(
            name,
            f"controlling:cmd_{name}",
            f"{name} a prompt's contract (run-local unless --persist)",
        )
        add_packet(p, flag=True, workspace=True)
        p.add_argument("id", nargs="?")
        p.add_argument("--reason")
        p.add_argument("--author")
        p.add_argument("--persist", action="store_true")
        p.add_argument("--json", action="store_true")
        if name == "amend":
            for flag in ("--add-file", "--add-absent"):
                p.add_argument(flag, action="append", default=[])
            p.add_argument("--add-contains", action="append", default=[], metavar="PATH=TEXT")
            p.add_argument("--add-command", action="append", default=[])
        else:
            p.add_argument("--drop", action="append", default=[], metavar="CLAUSE")
            p.add_argument("--confirm", action="store_true")


def _agent_control_commands(commands: Commands) -> None:
    """``agent-control progress|continue|repeat|finish|blocked`` (for ``--help``: the
    commands themselves run on ``cli/agentctl.py``'s own small parser)."""
    agent = commands.group("agent-control", "directives from inside an agent session")
    p = agent.add("progress", "agentctl:cmd_progress", "record the agent's cursor (repeatable)")
    p.add_argument("--cursor", required=True)
    p.add_argument("--unit")
    p.add_argument("--summary", required=True)
    for name in ("continue", "repeat", "finish", "blocked"):
        p = agent.add(name, "agentctl:cmd_directive", f"directive: {name}")
        p.set_defaults(action=name)
        p.add_argument("--reason")
