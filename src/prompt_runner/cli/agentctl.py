"""``agent-control ...``: directives and progress from inside an agent session (SPEC 7).

Hot path: the agent runs these commands inside its session, so this module
imports only :mod:`prompt_runner.runner.agent_control_client` (standard library
only). A success prints its JSON receipt on stdout and exits 0; a refusal
prints one ``error:`` line on stderr and exits 1 (refused: a directive already
exists, the invocation ended), 2 (bad input: missing environment, blank
``--cursor``/``--summary``/``--reason``) or 3 (the file could not be written).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..runner import agent_control_client as client


def _emit(receipt: dict[str, object]) -> int:
    sys.stdout.write(json.dumps(receipt, indent=2, ensure_ascii=False) + "\n")
    return 0


def _refused(exc: client.AgentControlError) -> int:
    sys.stderr.write(f"error: {exc.message}\n")
    return exc.exit_code


def cmd_progress(args: argparse.Namespace) -> int:
    """``agent-control progress --cursor C [--unit U] --summary S``."""
    try:
        receipt = client.record_progress(
            os.environ, cursor=args.cursor, summary=args.summary, unit=args.unit
        )
    except client.AgentControlError as exc:
        return _refused(exc)
    return _emit(receipt)


def cmd_directive(args: argparse.Namespace) -> int:
    """``agent-control continue|repeat|finish|blocked [--reason R]``."""
    try:
        receipt = client.issue_directive(os.environ, args.action, args.reason)
    except client.AgentControlError as exc:
        return _refused(exc)
    return _emit(receipt)
