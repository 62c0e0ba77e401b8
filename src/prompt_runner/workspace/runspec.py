"""How to run a workspace's packet: the argv, the added environment and the directory.

:func:`run_command` is the one place that turns a :class:`~.model.Workspace`
into a ``prompt-runner run`` invocation, so a detached start, a foreground
run and a fleet worker start the same thing::

    python -m prompt_runner run <clone>/<packet> --state-dir <runtime>/state
        --runtime-store file --committer git|noop [--keep-going] [--push after_prompt]
        [--new-run] [--remaining] [EXTRA...]

with ``PROMPT_RUNNER_STATE_DIR`` (the same state directory, so every agent,
verify command and ``status`` started from the run agrees),
``PROMPT_RUNNER_WORKSPACE`` (the manifest path) and
``PROMPT_RUNNER_ARTIFACTS_DIR`` (where ``@artifact:ID`` resolves) added to the
caller's environment, and the packet directory as the working directory (the
run never falls back to the author's checkout).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..state.layout import STATE_DIR_ENV
from ..verifier.command_entry import ARTIFACTS_ENV
from .model import Workspace

__all__ = ["ARTIFACTS_ENV", "WORKSPACE_ENV", "RunCommand", "run_command"]

WORKSPACE_ENV = "PROMPT_RUNNER_WORKSPACE"
"""The manifest path of the workspace a run belongs to (set for the runner and its children)."""


@dataclass(frozen=True)
class RunCommand:
    """One ``prompt-runner run`` of a workspace's packet.

    Attributes:
        argv: the full argv (``sys.executable -m prompt_runner run ...``).
        env: the variables to add to the caller's environment (names -> values;
            no secrets: pass the caller's own environment through by name).
        cwd: the working directory (the packet directory inside its clone).
    """

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path

    def full_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` (e.g. ``os.environ``) with :attr:`env` laid over it."""
        return {**base, **self.env}


def run_command(
    ws: Workspace,
    *,
    new_run: bool = False,
    remaining: bool = False,
    extra: Sequence[str] = (),
    python: str | None = None,
) -> RunCommand:
    """The run of ``ws``'s packet with its state under the runtime root.

    Args:
        ws: the workspace.
        new_run: add ``--new-run`` (a fresh run id; completed progress is kept).
        remaining: add ``--remaining`` (only prompts not yet completed).
        extra: more ``run`` arguments, appended as given (ids, ``--log-mode``...).
        python: the interpreter (default: this one, ``sys.executable``).

    The committer follows ``commits.mode`` (``runner`` -> ``git``, ``session``
    -> ``noop``), ``failure_policy: continue_independent`` adds
    ``--keep-going``, ``commits.push: after_prompt`` adds ``--push after_prompt``.
    """
    argv = [
        python or sys.executable,
        "-m",
        "prompt_runner",
        "run",
        str(ws.packet_dir),
        "--state-dir",
        str(ws.state_dir),
        "--runtime-store",
        "file",
        "--committer",
        ws.commits.committer,
    ]
    if ws.failure_policy == "continue_independent":
        argv.append("--keep-going")
    if ws.commits.push == "after_prompt":
        argv += ["--push", "after_prompt"]
    if new_run:
        argv.append("--new-run")
    if remaining:
        argv.append("--remaining")
    argv += list(extra)
    env = {
        STATE_DIR_ENV: str(ws.state_dir),
        WORKSPACE_ENV: str(ws.manifest_path),
        ARTIFACTS_ENV: str(ws.layout.artifacts_dir),
    }
    return RunCommand(tuple(argv), MappingProxyType(env), ws.packet_dir)
