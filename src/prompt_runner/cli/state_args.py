"""``--state-dir DIR`` and ``--workspace W``: where a command reads and writes runtime state.

Both end in the one rule of :meth:`~prompt_runner.state.layout.StateLayout.of_packet`
(an explicit state directory, else ``$PROMPT_RUNNER_STATE_DIR``, else
``<packet>/.prompt_runner``): the command's process exports the chosen
directory as ``$PROMPT_RUNNER_STATE_DIR``, so every reader and writer in it,
and every process it starts (agents, verify commands), agree on it. The
``run``, ``plan`` and ``repair`` flag is also the ``state_dir`` run option.

``--workspace W`` names the packet too: the packet inside the workspace's
clone, and the state under its runtime root (``docs/workspaces.md``). This
module is on the ``status`` and ``control`` hot path: the workspace modules
(pydantic, YAML) load only when ``--workspace`` is given.
"""

from __future__ import annotations

import argparse
import os
import shlex

from ..state.layout import STATE_DIR_ENV
from .exits import UsageError
from .positionals import give_following

_PLACED: tuple[str, str] | None = None
_WORKSPACE: str | None = None
"""The ``--workspace`` value as the user typed it (for the hints that name it)."""
"""What :func:`place_state` exported for this command: the flag that chose the
state directory (``--state-dir`` or ``--workspace``) and the directory; ``None``
when no flag chose one (``$PROMPT_RUNNER_STATE_DIR``, if set, did)."""


def place_state(args: argparse.Namespace) -> None:
    """Apply ``args.workspace`` / ``args.state_dir`` (when the command has them).

    Called before :func:`~.positionals.place_packet`: with ``--workspace`` a
    first word is the positional after PACKET (``control steer --workspace W
    TEXT``).

    ``--workspace`` sets ``args.packet`` to the workspace's packet directory and
    ``args.state_dir`` to its state directory; either way a chosen state
    directory is exported as ``$PROMPT_RUNNER_STATE_DIR`` for the command and its
    children (``cli.main`` puts the variable back as it was when the command ends).

    Raises:
        UsageError: ``--workspace`` together with ``--state-dir`` or a packet
            (``PACKET`` or ``--packet``) other than the current directory's default.
        UserError: the workspace cannot be found or its manifest is invalid.
    """
    global _PLACED, _WORKSPACE
    _PLACED = None
    _WORKSPACE = getattr(args, "workspace", None)
    if getattr(args, "command", None) == "control" and getattr(args, "fleet", None) is not None:
        _place_fleet_member(args)
        return
    workspace = getattr(args, "workspace", None)
    if workspace is not None:
        _place_workspace(args, workspace)
    state_dir = getattr(args, "state_dir", None)
    if state_dir:
        chosen = os.path.abspath(os.path.expanduser(state_dir))
        os.environ[STATE_DIR_ENV] = chosen
        _PLACED = ("--workspace" if workspace is not None else "--state-dir", chosen)


def _place_fleet_member(args: argparse.Namespace) -> None:
    """``--fleet F --workspace W``: W is a member of fleet F, which may run on another
    machine; the handler reaches it through the fleet (``docs/fleet.md``)."""
    if getattr(args, "workspace", None) is None:
        raise UsageError("--fleet F needs --workspace W, the member of the fleet to steer")
    word = getattr(args, "packet", None)
    if (
        getattr(args, "state_dir", None)
        or getattr(args, "packet_flag", None) is not None
        or (word is not None and not give_following(args, word))
    ):
        raise UsageError("--fleet and --workspace name the run; give no packet or --state-dir")
    args.packet = None


_NEEDS_CLONES = frozenset({"verify", "watch", "control", "run", "repair", "list", "plan"})
"""Commands that read the workspace's packet in its clone (``status``, ``stop``,
``start`` and ``workspace ...`` answer for one not prepared yet themselves)."""


def _place_workspace(args: argparse.Namespace, workspace: str) -> None:
    if getattr(args, "state_dir", None):
        raise UsageError("--workspace names the state directory; give --workspace or --state-dir")
    word = getattr(args, "packet", None)
    if getattr(args, "packet_flag", None) is not None or (
        word is not None and not give_following(args, word)
    ):
        raise UsageError("--workspace names the packet; give --workspace or a packet, not both")
    # lazy: the workspace manifest (pydantic, YAML) loads only for --workspace
    from ..verifier.command_entry import ARTIFACTS_ENV
    from ..workspace.registry import resolve_workspace

    ws = resolve_workspace(workspace)
    if not ws.packet_dir.is_dir() and getattr(args, "command", None) in _NEEDS_CLONES:
        # the packet lives in a clone: name the workspace's problem, not "PATH is
        # not a directory; pass the packet directory" (the user passed none)
        from ..workspace.ready import packet_problem, root_problems, unprepared

        for problem in (
            *root_problems(ws),
            unprepared(ws, then="run this command again"),
            packet_problem(ws),
        ):
            if problem is not None:
                raise problem
    os.environ[ARTIFACTS_ENV] = str(ws.layout.artifacts_dir)  # @artifact:ID in verify
    args.packet = str(ws.packet_dir)
    args.state_dir = str(ws.state_dir)
    args.workspace_value = ws


def chosen_state_dir() -> str | None:
    """The state directory ``--state-dir`` / ``--workspace`` / ``$PROMPT_RUNNER_STATE_DIR``
    chose for this process (absolute), else ``None`` (the packet's own)."""
    return os.environ.get(STATE_DIR_ENV) or None


def chosen_by() -> str | None:
    """What chose :func:`chosen_state_dir`: ``"--state-dir"``, ``"--workspace"``,
    ``"$PROMPT_RUNNER_STATE_DIR"`` (the environment alone), or ``None`` (none:
    the packet's own)."""
    chosen = chosen_state_dir()
    if chosen is None:
        return None
    if _PLACED is not None and _PLACED[1] == chosen:
        return _PLACED[0]
    return f"${STATE_DIR_ENV}"


def no_run_hint(state_dir: str, *, exists: bool | None = None) -> str:
    """Why a chosen state directory shows no run: it does not exist, or holds no
    run -- and how to find the right one, naming what chose it (:func:`chosen_by`):
    the same ``--state-dir DIR`` for the flag, ``$PROMPT_RUNNER_STATE_DIR`` when
    only the environment chose it. ``exists``: whether it existed when the
    command began (``stop`` makes its ``supervisor/`` there), else looked at now."""
    if exists is None:
        exists = os.path.isdir(state_dir)
    what = "holds no recorded run" if exists else "does not exist"
    by = chosen_by()
    if by == f"${STATE_DIR_ENV}":
        return (
            f"The state directory looked in ({state_dir}, from ${STATE_DIR_ENV}) {what}: "
            f"set ${STATE_DIR_ENV} to the state directory the run was started with "
            "(`start` prints it), or unset it to use the packet's own .prompt_runner."
        )
    if by == "--workspace":
        return (
            f"The state directory looked in ({state_dir}, the workspace's) {what}: "
            "the workspace has not run yet "
            f"(`prompt-runner start {shlex.quote(_WORKSPACE or 'W')}` starts it)."
        )
    return (
        f"The state directory looked in ({state_dir}) {what}: pass the same "
        "--state-dir DIR the run was started with (`start` prints it)."
    )
