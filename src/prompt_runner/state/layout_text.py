"""The state root's names as text, for the argparse-free hit paths (``cli/fast.py``).

:class:`~prompt_runner.state.layout.StateLayout` builds ``pathlib`` paths, and
``pathlib`` (with ``urllib.parse`` and ``ipaddress``) costs ~4 ms of a start-up
that prints a kept text in ~15. The few paths those paths read are named here
as ``os.path`` joins of the same names; ``layout.py`` takes :data:`STATE_DIR`
and :data:`STATE_DIR_ENV` from here, and ``tests/state/test_layout.py`` holds
every function below to the layout's property of the same name. Standard
library only (``os``).
"""

from __future__ import annotations

import os

STATE_DIR = ".prompt_runner"
"""The state root's name inside a packet."""

STATE_DIR_ENV = "PROMPT_RUNNER_STATE_DIR"
"""The environment variable naming a state root outside the packet (an absolute path)."""


def state_root(packet_root: str) -> str | None:
    """``StateLayout.of_packet(packet_root).root`` as text: ``$PROMPT_RUNNER_STATE_DIR``
    (``~`` expanded) when set, else ``<packet_root>/.prompt_runner``; ``None``
    where ``of_packet`` raises (a relative ``$PROMPT_RUNNER_STATE_DIR``)."""
    value = os.environ.get(STATE_DIR_ENV, "")
    if not value:
        return os.path.join(packet_root, STATE_DIR)
    path = os.path.expanduser(value)
    return path if os.path.isabs(path) else None


def run_pid(root: str) -> str:
    """``StateLayout.run_pid``."""
    return os.path.join(root, "run.pid")


def state_json(root: str) -> str:
    """``StateLayout.state_json``."""
    return os.path.join(root, "state.json")


def current_run(root: str) -> str:
    """``StateLayout.current_run``."""
    return os.path.join(root, "runs", "current.json")


def prompts_dir(root: str) -> str:
    """``StateLayout.prompts_dir``."""
    return os.path.join(root, "prompts")


def progress_log(root: str) -> str:
    """``StateLayout.progress_log``."""
    return os.path.join(root, "progress.log")


def status_cache(root: str) -> str:
    """``StateLayout.status_cache``."""
    return os.path.join(root, "status-cache")


def snapshot(root: str) -> str:
    """``StateLayout.snapshot``."""
    return os.path.join(root, "control", "snapshot.json")


def requests_dir(root: str) -> str:
    """``StateLayout.requests_dir``."""
    return os.path.join(root, "control", "requests")


def logs_dir(root: str) -> str:
    """``StateLayout.logs_dir``."""
    return os.path.join(root, "logs")


def watch_manifest(root: str) -> str:
    """``StateLayout.watch_manifest``."""
    return os.path.join(root, "watch-manifest.json")
