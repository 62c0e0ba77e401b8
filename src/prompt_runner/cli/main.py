"""The ``prompt-runner`` command line: parse, call one library function, map to an exit code.

This module is imported on every start, so it imports only the standard
library's ``argparse``/``os``/``sys``; each command's handler lives in a module
of this package that is imported only when that command runs (the hot paths
``status``, ``control`` and ``agent-control`` never import pydantic).

Exit codes (SPEC 10): 0 success, 1 the work failed, 2 bad usage or input,
3 infrastructure fault; an interrupting signal exits ``128 + signal number``
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP). Errors print one sentence; ``--debug``
(anywhere on the line) adds the traceback.

Prompt ids may follow flags (``run P --no-commit 03``): arguments argparse
leaves over are appended to the command's ids when it takes ids, and are an
error of that command otherwise.
"""

from __future__ import annotations

import sys

from .. import __version__

TYPE_CHECKING = False

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ..errors import PromptRunnerError

RUN_FLAGS_HELP = "override flags (same for run and plan)"
PACKET_HELP = "the packet directory (default: the current directory)"
_JSON_REQUESTED = False  # --json is on the command line being parsed (see _Parser.error)


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            # One sentence naming the problem and where the usage is; --json
            # anywhere on the line still gets its one JSON document on stdout.
            text = f"{message}; see `{self.prog} --help`"
            sys.stderr.write(f"error: {text}\n")
            if _JSON_REQUESTED:
                import json

                doc = {"error": text, "exit_code": 2, "kind": "UsageError"}
                sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
            sys.exit(2)

    return _Parser


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(RUN_FLAGS_HELP)
    g.add_argument("--profile")
    g.add_argument("--provider")
    g.add_argument("--model")
    g.add_argument("--reasoning-effort", dest="reasoning_effort")
    g.add_argument(
        "--permission-mode", dest="permission_mode", choices=["default", "auto", "bypass", "plan"]
    )
    g.add_argument("--timeout", help="session timeout in ms, or 'unbounded'")
    g.add_argument("--log-mode", dest="log_mode", choices=["compact", "verbose", "studio"])
    g.add_argument(
        "--log-meta",
        dest="log_meta",
        nargs="?",
        const="full",
        choices=["none", "full"],
        help="full: print the provider's stderr and failure detail (bare --log-meta = full)",
    )
    g.add_argument("--events-mode", dest="events_mode", choices=["compact", "full", "off"])
    g.add_argument(
        "--tool-output", dest="tool_output", choices=["none", "summary", "preview", "full"]
    )
    g.add_argument("--thinking", choices=["show", "hide"])
    g.add_argument("--diff", choices=["none", "stat", "full"])
    g.add_argument(
        "--cli-confirmation", dest="cli_confirmation", choices=["off", "warn", "require"]
    )
    g.add_argument("--runtime-store", dest="runtime_store", choices=["file", "memory", "noop"])
    g.add_argument("--committer", choices=["git", "noop"])
    g.add_argument(
        "--max-run-cost-usd",
        dest="max_run_cost_usd",
        metavar="USD",
        help="stop the run once its sessions reported this much cost",
    )
    g.add_argument("--skip-preflight", dest="skip_preflight", action="store_true")
    g.add_argument("--no-commit", dest="no_commit", action="store_true")
    g.add_argument("--dry-run", dest="dry_run", action="store_true")
    g.add_argument("--all", dest="select_all", action="store_true")
    g.add_argument("--remaining", action="store_true")
    g.add_argument("--new-run", dest="new_run", action="store_true")
    g.add_argument("--keep-going", dest="keep_going", action="store_true")
    g.add_argument("--verify-first", dest="verify_first", action="store_true", default=None)
    g.add_argument("--no-verify-first", dest="verify_first", action="store_false")
    g.add_argument("--phase")
    g.add_argument("--from", dest="from_id")
    g.add_argument("--through", dest="through_id")


def _add_recovery_flags(p: argparse.ArgumentParser) -> None:
    """``packet new`` / ``profile new`` shorthands for the ``recovery`` block (delays in ms)."""
    p.add_argument(
        "--cli-confirmation", dest="cli_confirmation", choices=["off", "warn", "require"]
    )
    p.add_argument("--resume-attempts", type=int)
    p.add_argument("--retry-attempts", type=int)
    p.add_argument("--retry-base-delay-ms", type=int)
    p.add_argument("--retry-max-delay-ms", type=int)
    p.add_argument("--retry-jitter", action="store_true", default=None)
    p.add_argument("--no-retry-jitter", dest="retry_jitter", action="store_false")
    p.add_argument("--repair-attempts", type=int)
    p.add_argument("--auto-repair", action="store_true", default=None)
    p.add_argument("--no-auto-repair", dest="auto_repair", action="store_false")


def _add_packet(p: argparse.ArgumentParser, *, flag: bool = False) -> None:
    """The optional ``PACKET`` positional (the current directory when left out,
    see :func:`_place_packet`); ``flag`` adds ``--packet DIR`` as the reference has."""
    p.add_argument("packet", nargs="?", metavar="PACKET", help=PACKET_HELP)
    if flag:
        p.add_argument(
            "--packet",
            dest="packet_flag",
            metavar="DIR",
            help="the packet (then every word is an id or the text)",
        )


def build_parser() -> argparse.ArgumentParser:
    """The whole CLI surface of SPEC 10."""
    _Parser = _parser_class()
    parser = _Parser(
        prog="prompt-runner",
        description="Run packets of prompts through coding agents; a contract decides done.",
    )
    parser.add_argument("-v", "--version", action="store_true", help="print the version")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def cmd(name: str, handler: str, help_text: str, **kw: object) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, **kw)  # type: ignore[arg-type]
        p.set_defaults(handler=handler)
        return p

    p = cmd("version", "basic:cmd_version", "print the version")
    p.add_argument("--json", action="store_true")
    p = cmd("capabilities", "basic:cmd_capabilities", "what this build supports")
    p.add_argument("--json", action="store_true")

    p = cmd("demo", "running:cmd_demo", "set up the example packet and run it (simulated)")
    p.add_argument("--dir", help="packet directory to create (default: a new temp dir)")
    p.add_argument("--example", default="recovery_demo")

    p = cmd("init", "basic:cmd_init", "create the profile/template store")
    p.add_argument(
        "--default-profile",
        "-p",
        dest="default_profile",
        help="the profile config.md names (created from codex-default's settings if new)",
    )
    p.add_argument("--json", action="store_true")

    prof = cmd("profile", "basic:cmd_group_help", "manage profiles")
    psub = prof.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = psub.add_parser("new", help="create a profile")
    p.set_defaults(handler="basic:cmd_profile_new")
    p.add_argument("name")
    p.add_argument("--provider")
    p.add_argument("--model")
    p.add_argument("--reasoning", dest="reasoning_effort")
    p.add_argument("--permission", dest="permission_mode")
    p.add_argument("--prompt-template", dest="prompt_template")
    p.add_argument("--tools", help="allowed tools, comma-separated (Read,Edit,Bash)")
    _add_recovery_flags(p)
    p.add_argument("--force", action="store_true")
    p = psub.add_parser("list", help="list profiles")
    p.set_defaults(handler="basic:cmd_profile_list")
    p.add_argument("--json", action="store_true")

    tmpl = cmd("template", "basic:cmd_group_help", "prompt templates")
    tsub = tmpl.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = tsub.add_parser("list", help="list templates")
    p.set_defaults(handler="basic:cmd_template_list")
    p.add_argument("packet", nargs="?")
    p.add_argument("--json", action="store_true")

    pk = cmd("packet", "basic:cmd_group_help", "packet authoring tools")
    pksub = pk.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = pksub.add_parser("new", help="scaffold a packet")
    p.set_defaults(handler="authoring:cmd_packet_new")
    p.add_argument("name")
    p.add_argument("--root", default=".")
    p.add_argument("--profile")
    p.add_argument("--provider")
    p.add_argument("--model")
    p.add_argument("--reasoning")
    p.add_argument("--permission")
    p.add_argument("--repo", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--default-repo")
    p.add_argument("--prompt-template")
    _add_recovery_flags(p)
    p = pksub.add_parser(
        "migrate-contracts", help="rewrite legacy shell-string commands as argv entries"
    )
    p.set_defaults(handler="authoring:cmd_packet_migrate_contracts")
    _add_packet(p)
    p.add_argument("--write", action="store_true", help="rewrite the files (default: a diff)")
    p.add_argument("--json", action="store_true")
    p = pksub.add_parser("add-repo", help="add a repo to a packet")
    p.set_defaults(handler="authoring:cmd_packet_add_repo")
    p.add_argument("name")
    p.add_argument("path")
    p.add_argument("--packet", help=PACKET_HELP)
    p.add_argument("--default", action="store_true")
    # the reference's spelling of `packet add-repo`: `repo add NAME PATH [PACKET]`
    rp = cmd("repo", "basic:cmd_group_help", "packet repos (the reference's `repo add`)")
    rsub = rp.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = rsub.add_parser("add", help="add a repo to a packet (same as `packet add-repo`)")
    p.set_defaults(handler="authoring:cmd_packet_add_repo")
    p.add_argument("name")
    p.add_argument("path")
    _add_packet(p, flag=True)
    p.add_argument("--default", action="store_true")
    for name, handler, help_text in (
        ("explain", "basic:cmd_packet_explain", "the resolved manifest as JSON"),
        ("lint", "authoring:cmd_packet_lint", "find authoring hazards"),
        ("doctor", "authoring:cmd_packet_doctor", "find authoring gaps"),
        ("preflight", "basic:cmd_packet_preflight", "runtime readiness JSON"),
    ):
        p = pksub.add_parser(name, help=help_text)
        p.set_defaults(handler=handler)
        _add_packet(p)
        p.add_argument("--json", action="store_true")
        if name == "lint":
            p.add_argument("--strict", action="store_true")

    pr = cmd("prompt", "basic:cmd_group_help", "prompt authoring")
    prsub = pr.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = prsub.add_parser("new", help="scaffold a prompt")
    p.set_defaults(handler="authoring:cmd_prompt_new")
    p.add_argument("id")
    p.add_argument("--packet", help=PACKET_HELP)
    p.add_argument("--phase")
    p.add_argument("--name")
    p.add_argument("--targets")
    p.add_argument("--commit")
    p.add_argument("--template")

    ck = cmd("checklist", "basic:cmd_group_help", "checklists derived from contracts")
    cksub = ck.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = cksub.add_parser("sync", help="write *.prompt.checklist.md files")
    p.set_defaults(handler="basic:cmd_checklist_sync")
    _add_packet(p)
    p.add_argument("--json", action="store_true")

    p = cmd("list", "basic:cmd_list", "list the packet's prompts and their status")
    _add_packet(p)
    p.add_argument("--json", action="store_true")

    for name, handler, help_text in (
        ("plan", "running:cmd_plan", "show the resolved execution plan"),
        ("run", "running:cmd_run", "run a packet"),
    ):
        p = cmd(name, handler, help_text)
        _add_packet(p, flag=True)
        p.add_argument("ids", nargs="*", metavar="ID")
        p.add_argument("--json", action="store_true")
        _add_run_flags(p)

    p = cmd("verify", "running:cmd_verify", "check contracts only (no session, no state change)")
    _add_packet(p, flag=True)
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--json", action="store_true")

    p = cmd("repair", "running:cmd_repair", "re-run one prompt with its recorded unmet items")
    _add_packet(p, flag=True)
    p.add_argument("id", nargs="?")
    p.add_argument("--json", action="store_true")
    _add_run_flags(p)

    p = cmd("status", "status:cmd_status", "show the runtime state")
    _add_packet(p, flag=True)
    p.add_argument("--json", action="store_true")

    p = cmd("watch", "watching:cmd_watch", "one line per sample for a long unattended run")
    _add_packet(p, flag=True)
    p.add_argument(
        "--interval", type=float, default=900.0, metavar="SECONDS", help="default 900 (15 min)"
    )
    p.add_argument("--once", action="store_true")
    p.add_argument("--json", action="store_true")

    p = cmd("schema", "authoring:cmd_schema", "JSON Schema for the manifest or prompt front matter")
    p.add_argument("which", choices=["manifest", "prompt"])

    ctl = cmd("control", "basic:cmd_group_help", "watch and steer a live run")
    csub = ctl.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = csub.add_parser("status", help="the run snapshot")
    p.set_defaults(handler="controlling:cmd_status")
    _add_packet(p, flag=True)
    p.add_argument("--json", action="store_true")
    p = csub.add_parser("events", help="the canonical event stream")
    p.set_defaults(handler="controlling:cmd_events")
    _add_packet(p, flag=True)
    p.add_argument("--from", dest="from_", choices=["start", "current"], default="start")
    p.add_argument("--follow", action="store_true")
    p.add_argument("--json", action="store_true")
    p = csub.add_parser("log", help="the control command log")
    p.set_defaults(handler="controlling:cmd_log")
    _add_packet(p, flag=True)
    p.add_argument("--follow", action="store_true")
    p.add_argument("--json", action="store_true")
    p = csub.add_parser("view", help="change rendering at the next event boundary")
    p.set_defaults(handler="controlling:cmd_view")
    _add_packet(p, flag=True)
    p.add_argument("--log-mode", dest="log_mode")
    p.add_argument("--tool-output", dest="tool_output")
    p.add_argument("--thinking")
    p.add_argument("--diff")
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p = csub.add_parser("steer", help="interrupt and resume the session with guidance")
    p.set_defaults(handler="controlling:cmd_steer")
    _add_packet(p, flag=True)
    p.add_argument("text", nargs="?")
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p = csub.add_parser("contract", help="show a prompt's contract and amendments")
    p.set_defaults(handler="controlling:cmd_contract")
    _add_packet(p, flag=True)
    p.add_argument("id", nargs="?")
    p.add_argument("--json", action="store_true")
    for name in ("amend", "relax"):
        p = csub.add_parser(name, help=f"{name} a prompt's contract (run-local unless --persist)")
        p.set_defaults(handler=f"controlling:cmd_{name}")
        _add_packet(p, flag=True)
        p.add_argument("id", nargs="?")
        p.add_argument("--reason")
        p.add_argument("--author")
        p.add_argument("--persist", action="store_true")
        p.add_argument("--json", action="store_true")
        if name == "amend":
            p.add_argument("--add-file", dest="add_file", action="append", default=[])
            p.add_argument("--add-absent", dest="add_absent", action="append", default=[])
            p.add_argument(
                "--add-contains",
                dest="add_contains",
                action="append",
                default=[],
                metavar="PATH=TEXT",
            )
            p.add_argument("--add-command", dest="add_command", action="append", default=[])
        else:
            p.add_argument("--drop", action="append", default=[], metavar="CLAUSE")
            p.add_argument("--confirm", action="store_true")

    ac = cmd("agent-control", "basic:cmd_group_help", "directives from inside an agent session")
    asub = ac.add_subparsers(dest="subcommand", metavar="SUBCOMMAND", parser_class=_Parser)
    p = asub.add_parser("progress", help="record the agent's cursor (repeatable)")
    p.set_defaults(handler="agentctl:cmd_progress")
    p.add_argument("--cursor", required=True)
    p.add_argument("--unit")
    p.add_argument("--summary", required=True)
    for name in ("continue", "repeat", "finish", "blocked"):
        p = asub.add_parser(name, help=f"directive: {name}")
        p.set_defaults(handler="agentctl:cmd_directive", action=name)
        p.add_argument("--reason")
    return parser


def _strip_debug(args_list: list[str]) -> tuple[list[str], bool]:
    """Remove every ``--debug`` before a ``--`` separator; return ``(rest, debug)``."""
    cut = args_list.index("--") if "--" in args_list else len(args_list)
    head = args_list[:cut]
    rest = [a for a in head if a != "--debug"] + args_list[cut:]
    return rest, len(rest) != len(args_list)


def _command_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The (sub)parser of the command ``args`` was parsed for (``run``, ``profile new``...)."""
    import argparse

    current = parser
    for name in (getattr(args, "command", None), getattr(args, "subcommand", None)):
        if name is None:
            break
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                current = action.choices.get(name, current)
                break
    return current


def _absorb_leftovers(
    parser: argparse.ArgumentParser, args: argparse.Namespace, leftovers: list[str]
) -> None:
    """Give leftover positional arguments to the command's unfilled positionals.

    argparse fills positionals only from the run of arguments before the first
    flag, so ``run P --no-commit 03`` and ``repair P --json 01`` leave the id
    over. Leftovers go, in order, to optional positionals still unset
    (``nargs="?"``), then onto a list positional (``ids``, ``nargs="*"``).

    Raises:
        SystemExit: exit 2, one line naming the leftover flags, or the
            arguments no positional could take, and the command's ``--help``.
    """
    command = _command_parser(parser, args)
    # After a "--" separator everything is positional (argparse leaves the "--" in).
    cut = leftovers.index("--") if "--" in leftovers else len(leftovers)
    unknown = [a for a in leftovers[:cut] if a.startswith("-")]
    if unknown:
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    pending = leftovers[:cut] + leftovers[cut + 1 :]
    for action in command._actions:
        if action.option_strings or not pending or not hasattr(args, action.dest):
            continue
        value = getattr(args, action.dest)
        if action.nargs == "?" and value is None:
            setattr(args, action.dest, pending.pop(0))
        elif action.nargs in ("*", "+") and isinstance(value, list):
            value.extend(pending)
            pending = []
    if pending:
        command.error(f"unrecognized arguments: {' '.join(pending)}")


_FOLLOWING = {
    ("run", None): "ids",
    ("plan", None): "ids",
    ("verify", None): "ids",
    ("repair", None): "id",
    ("control", "steer"): "text",
    ("control", "contract"): "id",
    ("control", "amend"): "id",
    ("control", "relax"): "id",
}
"""The positional after PACKET, which a first word that is no packet belongs to."""

_NO_DEFAULT = {("template", "list")}  # without a packet: the home and built-in templates only


def _is_packet_dir(path: str) -> bool:
    import os

    return os.path.isfile(os.path.join(path, "prompt_runner_packet.md"))


def _place_packet(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Decide the packet of a command that takes one, as the reference does.

    Its guides/cli.md: "If you omit the directory, Prompt Runner uses the
    current working directory." So ``PACKET`` (or ``--packet DIR`` where the
    reference has it) defaults to the current directory, and a first word that
    is no packet belongs to the positional after it: ``run 01 02`` inside a
    packet runs its 01 and 02, ``control steer "TEXT"`` steers the run here,
    ``repair 02`` and ``control amend 03 ...`` act on its prompt. A first word
    is kept as the packet when it exists, names a path (``/``), or when the
    current directory is no packet (then the error names that word).

    Raises:
        SystemExit: exit 2 when ``--packet`` and a PACKET argument are both given
            and no positional can take the word.
    """
    import os

    if not hasattr(args, "packet"):
        return
    key: tuple[str, str | None] = (args.command, getattr(args, "subcommand", None))
    if key in _NO_DEFAULT:
        return
    following = _FOLLOWING.get(key)
    given: str | None = args.packet
    flag: str | None = getattr(args, "packet_flag", None)
    if flag is not None:
        if given is not None and not (following and _shift(args, following, given)):
            _command_parser(parser, args).error(
                f"the packet is given twice ({given!r} and --packet {flag!r}); give it once"
            )
        args.packet = flag
        return
    here = os.getcwd()
    if given is None:
        args.packet = here
        return
    if following is None or os.path.exists(given) or "/" in given or os.sep in given:
        return
    value = getattr(args, following, None)
    # a single positional (an id, a steer's text) takes the word wherever we are;
    # a list of ids only inside a packet (outside one the error names the word)
    if (value is None or _is_packet_dir(here)) and _shift(args, following, given):
        args.packet = here


def _shift(args: argparse.Namespace, dest: str, word: str) -> bool:
    """Give ``word`` to positional ``dest`` (first of a list); False when it is taken."""
    value = getattr(args, dest, None)
    if isinstance(value, list):
        value.insert(0, word)
        return True
    if value is None:
        setattr(args, dest, word)
        return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``prompt-runner``; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list in (["--version"], ["-v"]):
        sys.stdout.write(f"{__version__}\n")
        return 0
    if args_list[:1] == ["agent-control"]:
        # The agent's hot path: its own small parser, no full CLI tree.
        from .agentctl import main as agent_control_main

        # --debug is accepted anywhere on any command line (it adds nothing here).
        return agent_control_main([a for a in args_list[1:] if a != "--debug"])
    args_list, debug = _strip_debug(args_list)
    parser = build_parser()
    global _JSON_REQUESTED
    _JSON_REQUESTED = "--json" in args_list
    args, leftovers = parser.parse_known_args(args_list)
    if leftovers:
        _absorb_leftovers(parser, args, leftovers)
    _place_packet(parser, args)
    if args.version:
        sys.stdout.write(f"{__version__}\n")
        return 0
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    module_name, func_name = handler.split(":")
    from ..errors import PromptRunnerError

    try:
        import importlib

        module = importlib.import_module(f"prompt_runner.cli.{module_name}")
        func = getattr(module, func_name)
        code: int = func(args)
        return code
    except PromptRunnerError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        return main_error(exc, args)
    except KeyboardInterrupt as exc:
        # SignalInterrupt (cli/running.py) carries SIGTERM/SIGHUP; plain Ctrl-C is SIGINT (2).
        signum = getattr(exc, "signum", 2)
        sys.stderr.write("interrupted\n" if signum == 2 else f"terminated (signal {signum})\n")
        from ._out import json_emitted

        if getattr(args, "json", False) and not json_emitted():
            # --json promises one document on stdout, an interrupted command too.
            import json
            import signal

            name = signal.Signals(signum).name
            doc = {
                "error": f"interrupted by {name}",
                "exit_code": 128 + signum,
                "kind": "Interrupted",
                "signal": name,
            }
            sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 128 + signum
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # An I/O fault no layer below named (full or read-only disk, a file where
        # a directory should be): an infrastructure fault, said in one sentence.
        if debug:
            raise
        from ..errors import StorageError

        return main_error(StorageError(exc.filename or "a file", exc, doing="used"), args)
    except Exception as exc:  # the last door: never a bare traceback without --debug
        if debug:
            raise
        sys.stderr.write(
            f"internal error: {exc!r}; this is a bug in prompt-runner, rerun with --debug "
            "and report the traceback\n"
        )
        return 1


def main_error(exc: PromptRunnerError, args: argparse.Namespace) -> int:
    """Say ``exc`` in one ``error:`` line (and, with ``--json``, the error
    document on stdout unless one was printed); return its exit code."""
    from ._out import json_emitted, warn

    warn(f"error: {exc}")  # file names in the sentence are shown printable
    if getattr(args, "json", False) and not json_emitted():
        # --json promises one JSON document on stdout, failures included.
        import json

        doc = {"error": str(exc), "exit_code": exc.exit_code, "kind": type(exc).__name__}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return exc.exit_code


def entry() -> None:
    sys.exit(main())
