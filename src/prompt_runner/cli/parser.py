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
from collections.abc import Callable
from typing import NoReturn, get_args

from ..durations import parse_duration
from ..errors import UserError
from ..option_table import CliConfirmation
from .exits import UsageError
from .run_flags import add_run_flags

PACKET_HELP = "the packet directory (default: the current directory)"


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are raised, not exited on."""

    def error(self, message: str) -> NoReturn:
        # One sentence naming the problem and where the usage is.
        raise UsageError(f"{message}; see `{self.prog} --help`")


SPAN_MOST_S = 30 * 86400.0
"""The longest span a SECONDS flag takes (30 days): beyond it is a typo, and the
clock's waits overflow long before it matters."""


def span(*, zero: bool = False) -> Callable[[str], float]:
    """An argparse ``type`` for a span of time: ``90s``, ``10m``, ``1h30m`` or bare
    seconds (``durations.parse_duration``), in seconds; negative, non-finite, over
    :data:`SPAN_MOST_S` and (unless ``zero``) zero spans are refused before the
    command does anything."""

    def convert(text: str) -> float:
        try:
            seconds = parse_duration(text, key="", positive=not zero)
        except UserError as exc:
            raise argparse.ArgumentTypeError(f"{exc.reason}; {exc.fix}") from None
        if seconds > SPAN_MOST_S:
            raise argparse.ArgumentTypeError(f"{text!r} is longer than 30 days; give less")
        return seconds

    convert.__name__ = "duration"
    return convert


def count(text: str) -> int:
    """An argparse ``type`` for a number of things: a whole number, 1 or more."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return int(text)


class _Commands:
    """The subcommands of one parser: ``add`` a command, or a ``group`` of them."""

    def __init__(self, parent: argparse.ArgumentParser, *, top: bool = False) -> None:
        dest, metavar = ("command", "COMMAND") if top else ("subcommand", "SUBCOMMAND")
        self._sub = parent.add_subparsers(dest=dest, metavar=metavar, parser_class=Parser)
        self._top = top  # a top-level command's help is also its --help description

    def add(self, name: str, handler: str, help_text: str) -> argparse.ArgumentParser:
        if self._top:
            parser = self._sub.add_parser(name, help=help_text, description=help_text)
        else:
            parser = self._sub.add_parser(name, help=help_text)
        parser.set_defaults(handler=handler)
        return parser

    def group(self, name: str, help_text: str) -> _Commands:
        return _Commands(self.add(name, "basic:cmd_group_help", help_text))


def build_parser() -> argparse.ArgumentParser:
    """The whole CLI surface of SPEC 10."""
    parser = Parser(
        prog="prompt-runner",
        description="Run packets of prompts through coding agents; a contract decides done.",
    )
    parser.add_argument("-v", "--version", action="store_true", help="print the version")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    commands = _Commands(parser, top=True)
    for add in (
        _info_commands,
        _store_commands,
        _packet_commands,
        _authoring_commands,
        _running_commands,
        _supervise_commands,
        _control_commands,
        _workspace_commands,
        _fleet_commands,
        _dashboard_commands,
        _agent_control_commands,
    ):
        add(commands)
    return parser


def _add_packet(
    p: argparse.ArgumentParser, *, flag: bool = False, workspace: bool = False
) -> None:
    """The optional ``PACKET`` positional (the current directory when left out,
    see ``cli/positionals.py``); ``flag`` adds ``--packet DIR`` as the reference has;
    ``workspace`` adds ``--workspace W`` and ``--state-dir DIR`` (``cli/state_args.py``)."""
    p.add_argument("packet", nargs="?", metavar="PACKET", help=PACKET_HELP)
    if flag:
        p.add_argument(
            "--packet",
            dest="packet_flag",
            metavar="DIR",
            help="the packet (then every word is an id or the text)",
        )
    if workspace:
        p.add_argument(
            "--workspace",
            metavar="W",
            help="the workspace's packet and state (a manifest, a registered id, or found here)",
        )
        p.add_argument(
            "--state-dir",
            metavar="DIR",
            help="the run's state is in DIR, not in <packet>/.prompt_runner "
            "(default: $PROMPT_RUNNER_STATE_DIR)",
        )


def _add_recovery_flags(p: argparse.ArgumentParser) -> None:
    """``packet new`` / ``profile new`` shorthands for the ``recovery`` block (delays in ms)."""
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


def _info_commands(commands: _Commands) -> None:
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


def _store_commands(commands: _Commands) -> None:
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


def _packet_commands(commands: _Commands) -> None:
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
    _add_packet(p)
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
        _add_packet(p)
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
    _add_packet(p, flag=True)
    p.add_argument("--default", action="store_true")


def _authoring_commands(commands: _Commands) -> None:
    """``prompt new``, ``checklist sync``."""
    prompt = commands.group("prompt", "prompt authoring")
    p = prompt.add("new", "authoring:cmd_prompt_new", "scaffold a prompt")
    p.add_argument("id")
    p.add_argument("--packet", help=PACKET_HELP)
    for flag in ("--phase", "--name", "--targets", "--commit", "--template"):
        p.add_argument(flag)
    checklist = commands.group("checklist", "checklists derived from contracts")
    p = checklist.add("sync", "packets:cmd_checklist_sync", "write *.prompt.checklist.md files")
    _add_packet(p)
    p.add_argument("--json", action="store_true")


def _running_commands(commands: _Commands) -> None:
    """``list``, ``plan``, ``run``, ``verify``, ``repair``, ``status``, ``watch``, ``schema``."""
    p = commands.add("list", "packets:cmd_list", "list the packet's prompts and their status")
    _add_packet(p)
    p.add_argument("--json", action="store_true")
    for name, handler, help_text in (
        ("plan", "running:cmd_plan", "show the resolved execution plan"),
        ("run", "running:cmd_run", "run a packet"),
    ):
        p = commands.add(name, handler, help_text)
        _add_packet(p, flag=True)
        p.add_argument("ids", nargs="*", metavar="ID")
        p.add_argument("--json", action="store_true")
        add_run_flags(p)
    p = commands.add(
        "verify", "running:cmd_verify", "check contracts only (no session, no state change)"
    )
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--json", action="store_true")
    p = commands.add(
        "repair", "running:cmd_repair", "re-run one prompt with its recorded unmet items"
    )
    _add_packet(p, flag=True)
    p.add_argument("id", nargs="?")
    p.add_argument("--json", action="store_true")
    add_run_flags(p)
    p = commands.add("status", "status:cmd_status", "show the runtime state")
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("--json", action="store_true")
    p = commands.add("watch", "watching:cmd_watch", "one line per sample for a long unattended run")
    _add_packet(p, flag=True, workspace=True)
    p.add_argument(
        "--interval", type=span(), default=900.0, metavar="SECONDS", help="default 900 (15 min)"
    )
    p.add_argument("--once", action="store_true")
    p.add_argument("--json", action="store_true")
    _add_bounded_watch_flags(p)
    p = commands.add(
        "schema", "authoring:cmd_schema", "JSON Schema for the manifest or prompt front matter"
    )
    p.add_argument("which", choices=["manifest", "prompt", "workspace", "fleet"])


def _add_bounded_watch_flags(p: argparse.ArgumentParser) -> None:
    """``watch --for D --every D [--require-running] [--require-progress
    --progress-timeout D]`` (``cli/watching.py``; durations as ``90s``, ``10m``, ``4h``)."""
    g = p.add_argument_group("bounded watch (acceptance evidence)")
    g.add_argument(
        "--for", dest="for_", metavar="DURATION", help="watch this long, then pass (e.g. 4h)"
    )
    g.add_argument("--every", metavar="DURATION", help="between samples (default 10m)")
    g.add_argument(
        "--require-running", action="store_true", help="a run that is not running fails it"
    )
    g.add_argument("--require-progress", action="store_true", help="a silent running run fails it")
    g.add_argument(
        "--progress-timeout", metavar="DURATION", help="silent for longer than this (default 60m)"
    )


def _supervise_commands(commands: _Commands) -> None:
    """``start``, ``stop``: a detached, supervised run (``cli/supervising.py``)."""
    target = "a workspace (manifest or registered id) or a packet (default: here)"
    for name, help_text in (
        ("start", "launch the run detached; return once it is live"),
        ("stop", "stop the run and every process of it"),
    ):
        p = commands.add(name, f"supervising:cmd_{name}", help_text)
        p.add_argument("target", nargs="?", metavar="W|PACKET", help=target)
        p.add_argument("--workspace", metavar="W", help="the workspace (manifest or id)")
        p.add_argument("--packet", dest="packet_dir", metavar="DIR", help="the packet")
        p.add_argument("--json", action="store_true")
        if name == "start":
            p.add_argument("--new-run", action="store_true", help="a fresh run id")
            p.add_argument("--remaining", action="store_true", help="prompts not yet completed")
            p.add_argument("--no-commit", action="store_true", help="run --no-commit")
            p.add_argument(
                "--containment",
                choices=["auto", "process_group", "systemd_user"],
                help="default: the workspace's operator.containment (a packet: auto)",
            )
            p.add_argument(
                "--timeout",
                type=span(),
                default=60.0,
                metavar="SECONDS",
                help="longest wait for the run to be live (default 60)",
            )
        else:
            p.add_argument(
                "--after-prompt", action="store_true", help="let the current prompt commit first"
            )
            p.add_argument(
                "--grace",
                type=span(zero=True),
                metavar="SECONDS",
                help="for the runner to stop on the request before SIGTERM (SIGKILL 5 s "
                "later; default 10; with --after-prompt: no bound)",
            )
            p.add_argument("--author")


def _control_commands(commands: _Commands) -> None:
    """``control status|events|log|view|steer|wake|contract|amend|relax``."""
    control = commands.group("control", "watch and steer a live run")
    p = control.add("status", "controlling:cmd_status", "the run snapshot")
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("--json", action="store_true")
    p = control.add("events", "controlling:cmd_events", "the canonical event stream")
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("--from", dest="from_", choices=["start", "current"], default="start")
    p.add_argument("--follow", action="store_true")
    p.add_argument("--json", action="store_true")
    p = control.add("log", "controlling:cmd_log", "the control command log")
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("--follow", action="store_true")
    p.add_argument("--json", action="store_true")
    p = control.add("view", "controlling:cmd_view", "change rendering at the next event boundary")
    _add_packet(p, flag=True, workspace=True)
    for flag in ("--log-mode", "--tool-output", "--thinking", "--diff", "--author"):
        p.add_argument(flag)
    p.add_argument("--json", action="store_true")
    p = control.add(
        "steer", "controlling:cmd_steer", "interrupt and resume the session with guidance"
    )
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("text", nargs="?")
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--fleet",
        metavar="F",
        help="steer member --workspace W of fleet F on the machine that runs it",
    )
    p = control.add("wake", "controlling:cmd_wake", "end a usage-limit wait now")
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p = control.add(
        "contract", "controlling:cmd_contract", "show a prompt's contract and amendments"
    )
    _add_packet(p, flag=True, workspace=True)
    p.add_argument("id", nargs="?")
    p.add_argument("--json", action="store_true")
    _amend_commands(control)


def _amend_commands(control: _Commands) -> None:
    """``control amend`` and ``control relax``: the same arguments, then their own flags."""
    for name in ("amend", "relax"):
        p = control.add(
            name,
            f"controlling:cmd_{name}",
            f"{name} a prompt's contract (run-local unless --persist)",
        )
        _add_packet(p, flag=True, workspace=True)
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


def _dashboard_commands(commands: _Commands) -> None:
    """``dashboard [PACKET ...] [--workspace W ...] [--fleet F ...]``: the live web page
    (``cli/dashboard.py``)."""
    p = commands.add("dashboard", "dashboard:cmd_dashboard", "serve a live web dashboard over runs")
    p.add_argument("packets", nargs="*", metavar="PACKET", help="packet directories (default: .)")
    p.add_argument(
        "--workspace",
        dest="workspaces",
        action="append",
        default=[],
        metavar="W",
        help="a workspace's run too (repeatable)",
    )
    p.add_argument(
        "--fleet",
        dest="fleets",
        action="append",
        default=[],
        metavar="F",
        help="every member of a local fleet too, as one group (repeatable)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0: any)")
    p.add_argument("--token", help="access token (needed off loopback; generated if not given)")
    p.add_argument("--open", action="store_true", help="open it in the web browser")


def _workspace_commands(commands: _Commands) -> None:
    """``workspace plan|prepare|doctor|import-state|status`` (``cli/workspace.py``)."""
    workspace = commands.group("workspace", "operator workspaces: clones and state outside them")
    for name, handler, help_text in (
        ("plan", "workspace:cmd_plan", "what prepare and a run would do (read-only)"),
        ("prepare", "workspace:cmd_prepare", "make the clones, artifacts and runtime root"),
        ("doctor", "workspace:cmd_doctor", "is the workspace ready to run (read-only)"),
        ("import-state", "workspace:cmd_import_state", "import a packet-local progress.log once"),
        ("status", "workspace:cmd_status", "the workspace status document"),
    ):
        p = workspace.add(name, handler, help_text)
        p.add_argument(
            "workspace",
            nargs="?",
            metavar="W",
            help="a manifest path or a registered id (default: found from the current directory)",
        )
        if name == "import-state":
            p.add_argument(
                "source", nargs="?", help="the packet (or its progress.log) to import from"
            )
        p.add_argument("--json", action="store_true")


def _fleet_commands(commands: _Commands) -> None:
    """``fleet plan|submit|status|stop|watch|worker`` (``cli/fleet.py``, ``docs/fleet.md``)."""
    fleet = commands.group("fleet", "many workspaces at once, here or across machines (Temporal)")
    for name, help_text in (
        ("plan", "what submit would run where (read-only)"),
        ("submit", "run the unfinished members (local: until they end; Temporal: start them)"),
        ("status", "one row per member: state, prompts, attempts, cost, host, progress"),
        ("stop", "stop every running member and start no new one"),
        ("watch", "the bounded watch over every member, one report"),
    ):
        p = fleet.add(name, f"fleet:cmd_{name}", help_text)
        p.add_argument("fleet", metavar="F", help="the fleet manifest (fleet.yml)")
        p.add_argument("--json", action="store_true")
        if name == "stop":
            p.add_argument(
                "--after-prompt", action="store_true", help="let each current prompt commit first"
            )
            p.add_argument("--grace", type=span(zero=True), metavar="SECONDS", help="as for `stop`")
            p.add_argument("--author")
        elif name == "watch":
            _add_bounded_watch_flags(p)
    p = fleet.add("worker", "fleet:cmd_worker", "run members from a Temporal task queue here")
    p.add_argument("--address", required=True, metavar="HOST:PORT", help="the Temporal frontend")
    p.add_argument("--namespace", default="default", metavar="N")
    p.add_argument("--task-queue", default="prompt-runner", metavar="Q")
    p.add_argument(
        "--slots", type=count, default=1, metavar="N", help="members at once (default 1)"
    )
    p.add_argument(
        "--identity", metavar="NAME", help="this worker's name in fleet status (default pid@host)"
    )
    p.add_argument(
        "--root",
        metavar="DIR",
        help="where the members' workspaces live (default $XDG_DATA_HOME/prompt_runner/"
        "fleet-worker)",
    )
    tls = p.add_mutually_exclusive_group()
    tls.add_argument(
        "--tls",
        action="store_true",
        default=None,
        help="connect over TLS (default: only with --api-key-env or a PEM file)",
    )
    tls.add_argument("--no-tls", dest="tls", action="store_false", help="never use TLS")
    p.add_argument("--tls-ca", metavar="PEM", help="the CA of the server's certificate")
    p.add_argument("--tls-cert", metavar="PEM", help="mTLS: this worker's certificate")
    p.add_argument("--tls-key", metavar="PEM", help="mTLS: its private key")
    p.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the environment variable holding the API key (Temporal Cloud)",
    )


def _agent_control_commands(commands: _Commands) -> None:
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
