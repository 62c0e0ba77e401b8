"""``start`` and ``stop``: a detached, supervised run (``docs/workspaces.md``).

Thin handlers over :func:`prompt_runner.start` and :func:`prompt_runner.stop`.
What to run is ``W|PACKET`` (a workspace manifest, a registered workspace id,
or a packet directory; default: the packet here, else the workspace found
from here), or ``--workspace W`` / ``--packet DIR`` explicitly.
"""

from __future__ import annotations

import argparse
import os
import shlex
from typing import Any

from ..api_supervise import start, stop
from ..paths import MANIFEST_NAME
from ..state import layout_text
from ..state.layout import STATE_DIR_ENV
from ..supervise.hints import command
from ..supervise.start import RunLiveError, StillStartingError, describe_exit
from ._out import emit_json, say, warn
from .state_args import chosen_state_dir, no_run_hint


def cmd_start(args: argparse.Namespace) -> int:
    try:
        result = start(
            _target(args),
            new_run=args.new_run,
            remaining=args.remaining,
            containment=args.containment,
            run_args=("--no-commit",) if args.no_commit else (),
            live_timeout_s=args.timeout,
            state_dir=_state_dir(args),
        )
    except StillStartingError as exc:  # its commands name what this start was given
        raise exc.naming(_named(args, exc.label) + _state_arg(args)) from None
    except RunLiveError as exc:  # likewise
        raise exc.naming(_named(args, exc.label) + _state_arg(args)) from None
    if args.json:
        emit_json(result.to_dict())
        return 0
    named = _named(args, result.label) + _state_arg(args)
    if result.live:
        ended = (
            "" if result.exit_code is None else f"; it has ended already (exit {result.exit_code})"
        )
        say(
            f"Started run {result.run_id} of {result.label}: pid {result.pid}, "
            f"containment {result.containment}{f', unit {result.unit}' if result.unit else ''}"
            f"{ended}."
        )
    else:
        how = describe_exit(result.exit_code)
        say(f"The run of {result.label} ended before it was live ({how}).")
    if result.exit_code is not None:  # it has ended (nothing to do, or done at once)
        say(f"Its output: {result.stdout} (stderr: {result.stderr})")
        say(f"How it ended: {command('status', named)}")
        return 0
    say(
        f"Follow it: {command('watch', named)}  or  "
        f"{command('control', 'events', named, '--follow')}"
    )
    say(f"Its output: {result.stdout} (stderr: {result.stderr})")
    say(f"Stop it: {command('stop', named)}")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    chosen = chosen_state_dir() if getattr(args, "workspace_value", None) is None else None
    existed = chosen is not None and os.path.isdir(chosen)
    report = stop(
        _target(args),
        after_prompt=args.after_prompt,
        grace_s=args.grace,
        author=args.author,
        state_dir=_state_dir(args),
        progress=lambda line: warn(f"{line} (Ctrl-C leaves the request in place)"),
    )
    if args.json:
        emit_json(report.to_dict())
    else:
        for line in report.lines():
            say(line)
        if report.stopped_by == "nothing" and _state_guessed(args):
            from ..watch.elsewhere import elsewhere_sentence  # lazy: only this line needs it

            say(elsewhere_sentence("stop"))
        elif (
            report.stopped_by == "nothing"
            and chosen is not None
            and not (existed and os.path.exists(layout_text.current_run(chosen)))
        ):
            say(no_run_hint(chosen, exists=existed))  # naming what chose the directory
    if report.ok:
        return 0
    warn(
        f"error: {len(report.left)} process(es) of {report.label}'s run are still running "
        f"(pids {', '.join(str(e.pid) for e in report.left)}); they could not be ended"
    )
    return 3


def _state_dir(args: argparse.Namespace) -> str | None:
    """``--state-dir`` for a packet (``--workspace`` sets ``args.state_dir`` to its own,
    ``cli/state_args.py``, and the workspace names its state itself)."""
    return None if getattr(args, "workspace_value", None) is not None else args.state_dir


def _state_arg(args: argparse.Namespace) -> str:
    """`` --state-dir DIR`` (as given) when the run's state is not where the
    commands that follow it look by themselves, else ``""``: the advice
    ``start`` prints (watch, control events, status, stop) must find the run."""
    given = _state_dir(args)
    return f" --state-dir {shlex.quote(str(given))}" if given else ""


def _state_guessed(args: argparse.Namespace) -> bool:
    """A packet's state looked for in its default place (no ``--state-dir``, no
    ``$PROMPT_RUNNER_STATE_DIR``, no workspace): where a ``run --state-dir`` is missed."""
    return (
        not args.state_dir
        and not os.environ.get(STATE_DIR_ENV)
        and getattr(args, "workspace_value", None) is None
    )


def _target(args: argparse.Namespace) -> Any:
    """The workspace (``--workspace``, resolved already), ``--packet DIR``, or ``W|PACKET``."""
    workspace = getattr(args, "workspace_value", None)
    if workspace is not None:
        if args.target is not None or args.packet_dir is not None:
            from .exits import UsageError  # lazy: only this refusal needs it

            raise UsageError("--workspace names what to run; give it or W|PACKET, not both")
        return workspace
    if args.packet_dir is not None:
        return args.packet_dir
    return args.target


def _named(args: argparse.Namespace, label: str) -> str:
    """How the commands that follow the run name it (as the user did; a
    workspace as ``--workspace W``)."""
    if args.workspace is not None:
        return f"--workspace {shlex.quote(args.workspace)}"
    given = args.packet_dir or args.target
    if given is None:
        return "" if os.path.isfile(MANIFEST_NAME) else f"--workspace {shlex.quote(label)}"
    if os.path.isfile(os.path.join(given, MANIFEST_NAME)) or given.endswith(MANIFEST_NAME):
        return shlex.quote(given)
    return f"--workspace {shlex.quote(given)}"
