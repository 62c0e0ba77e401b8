"""The operator's commands: detached runs (``start``, ``stop``), the dashboard,
workspaces and fleets -- one builder per family, called by :func:`.parser.build_parser`."""

from __future__ import annotations

from .parser_kit import Commands, add_bounded_watch_flags, count, span


def supervise_commands(commands: Commands) -> None:
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
        p.add_argument(
            "--state-dir",
            metavar="DIR",
            help="a packet's run keeps its state in DIR, as `run --state-dir DIR` "
            "(default: $PROMPT_RUNNER_STATE_DIR, else <packet>/.prompt_runner)",
        )
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


def dashboard_commands(commands: Commands) -> None:
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


def workspace_commands(commands: Commands) -> None:
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


def fleet_commands(commands: Commands) -> None:
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
            add_bounded_watch_flags(p)
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
