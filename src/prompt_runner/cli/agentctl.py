"""``agent-control ...``: directives from inside an agent session (issue 8)."""

from __future__ import annotations

import argparse

from ..errors import NotImplementedYet


def cmd_progress(args: argparse.Namespace) -> int:
    raise NotImplementedYet("agent-control progress")


def cmd_directive(args: argparse.Namespace) -> int:
    raise NotImplementedYet(f"agent-control {args.action}")
