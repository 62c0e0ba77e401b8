"""``dashboard``: serve the live web dashboard over the given runs (``docs/dashboard.md``).

A thin handler over :func:`prompt_runner.api_dashboard.serve_dashboard`: it
prints where the dashboard listens (with the token when one is needed) and
serves until Ctrl-C. Starlette and uvicorn load inside that call only.
"""

from __future__ import annotations

import argparse
import socket
import sys

from ..api_dashboard import DashboardAddress, serve_dashboard
from ._out import say


def _announce(address: DashboardAddress) -> None:
    say(f"Dashboard: {address.url}")
    if address.host in ("0.0.0.0", "::"):
        say(
            f"  (bound to every address: from another machine use http://{socket.gethostname()}:"
            f"{address.port}/?token=...)"
        )
    if address.token_generated:
        say(f"Token (generated; every request needs it): {address.token}")
    say("Ctrl-C stops it.")
    sys.stdout.flush()  # a supervisor or a test reads the address from a pipe


def cmd_dashboard(args: argparse.Namespace) -> int:
    packets = list(args.packets or [])
    serve_dashboard(
        packets,
        workspaces=list(args.workspaces or []),
        fleets=list(args.fleets or []),
        host=args.host,
        port=args.port,
        token=args.token,
        open_browser=args.open,
        on_ready=_announce,
    )
    return 0
