"""A run of the packet whose state is kept elsewhere: the hint the observers give.

A ``run --state-dir DIR`` (or ``start --state-dir DIR``, or one with
``$PROMPT_RUNNER_STATE_DIR`` set) keeps its ``run.pid``, records and control
plane in ``DIR``; a ``status``, ``watch`` or ``stop`` given no state directory
looks in ``<packet>/.prompt_runner`` and finds no runner there. The run still
holds the lock of each work tree it targets (``<git dir>/prompt-runner.pid``,
``runner/locks.py``), which a second ``run`` of the packet is refused by:
:func:`held_elsewhere` reads those locks (no git, no YAML once ``watch`` kept
the manifest's repos) so the observer can say where to look
(:func:`elsewhere_sentence`), as ``stop`` does.

Loaded only when no runner holds the state root looked in. Below ``control``
(its layer), so a refusal there can say it too.
"""

from __future__ import annotations

import os

from ..state.layout_text import STATE_DIR, STATE_DIR_ENV

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def elsewhere_sentence(command: str) -> str:
    """``A run started with `start --state-dir DIR` ... pass the same --state-dir DIR
    to COMMAND.`` (``command``: ``stop``, ``status``...)."""
    return (
        "A run started with `start --state-dir DIR` or `run --state-dir DIR` (or "
        f"with ${STATE_DIR_ENV} set) keeps its state elsewhere: pass the same "
        f"--state-dir DIR to {command}."
    )


def state_guessed() -> bool:
    """No state directory was chosen for this command (no ``--state-dir``, no
    ``--workspace``, no ``$PROMPT_RUNNER_STATE_DIR``): the packet's own is looked in."""
    return not os.environ.get(STATE_DIR_ENV)


def held_elsewhere(
    root: str, repos: Iterable[tuple[str, str]] | None = None, *, own_state: str | None = None
) -> tuple[str, int] | None:
    """``(repo name, pid)`` of the first repo of the packet at ``root`` whose run
    lock a live process holds, or ``None``.

    Args:
        root: the packet directory (absolute).
        repos: its repos as ``(name, absolute path)``; default: read from the
            manifest (as ``watch`` reads it). A manifest that cannot be read
            is no repo.
        own_state: the state root looked in: a holder that ``<own_state>/run.pid``
            names (read after the repo's lock) is that state root's own runner
            -- a run starting or ending there, never one whose state is
            elsewhere -- and is no holder.

    The caller has seen that no runner holds the state root it looked in, so
    a holder is a run whose state is elsewhere (or another packet's run on the
    same repo). A repo whose ``.git`` is neither a directory nor a ``gitdir:``
    file is skipped (never a ``git`` process for this).
    """
    if repos is None:
        from pathlib import Path

        from ..errors import PromptRunnerError
        from ..state.layout import StateLayout
        from .facts import manifest_repos

        packet = Path(root)
        try:  # the repos watch kept in the state root: no YAML while the manifest holds
            _, refs = manifest_repos(packet, state=StateLayout.of_packet(packet))
            repos = [(ref.name, str(ref.path)) for ref in refs]
        except (PromptRunnerError, OSError):
            return None
    for name, path in repos:
        lock = _lock_file(path)
        if lock is None or not os.path.exists(lock):  # the file exists only while held
            continue
        # lazy: only a repo a run holds (or held) has its lock read (watch --once's path)
        from ..state.lock import identity_alive, read_pid_file

        try:
            ident = read_pid_file(lock)
        except OSError:
            continue
        if ident is None or not identity_alive(ident):
            continue
        if own_state is not None and read_pid_file(os.path.join(own_state, "run.pid")) == ident:
            continue  # the packet's own runner: it takes run.pid first and lets it go last
        return name, ident.pid
    return None


def elsewhere_hint(
    root: str, command: str, repos: Iterable[tuple[str, str]] | None = None
) -> str | None:
    """The line an observer says when no runner holds the state root it looked in
    while a live run holds one of the packet's repos, or ``None``: none holds
    one, or a state directory was chosen (its own hint says so).

    ``Repo 'app' is held by a live run (pid 4242) whose state is not in the
    packet's .prompt_runner. A run started with ... to status.``"""
    if not state_guessed():
        return None
    held = held_elsewhere(root, repos, own_state=_own_state(root))
    if held is None:
        return None
    name, pid = held
    return (
        f"Repo {name!r} is held by a live run (pid {pid}) whose state is not in the "
        f"packet's .prompt_runner. {elsewhere_sentence(command)}"
    )


def elsewhere_fix(root: str, command: str) -> str | None:
    """:func:`elsewhere_hint` as the fix clause of a refusal (``control steer``
    finding no run to steer), or ``None``: ``repo 'app' is held by a live run
    (pid 4242) that keeps its state elsewhere (a `run --state-dir DIR` or
    `start --state-dir DIR`, or $PROMPT_RUNNER_STATE_DIR): pass the same
    --state-dir DIR to steer``. A holder the packet's own ``run.pid`` names is
    the packet's runner (starting or ending), never one whose state is elsewhere."""
    if not state_guessed():
        return None
    held = held_elsewhere(root, own_state=_own_state(root))
    if held is None:
        return None
    name, pid = held
    return (
        f"repo {name!r} is held by a live run (pid {pid}) that keeps its state elsewhere "
        f"(a `run --state-dir DIR` or `start --state-dir DIR`, or ${STATE_DIR_ENV}): "
        f"pass the same --state-dir DIR to {command}"
    )


def _own_state(root: str) -> str:
    """The state root of the packet at ``root`` when none was chosen
    (:func:`state_guessed`): ``<root>/.prompt_runner``."""
    return os.path.join(root, STATE_DIR)


def _lock_file(work_tree: str) -> str | None:
    """``<git dir>/prompt-runner.pid`` of the work tree at ``work_tree`` read
    without git: ``.git`` a directory, or a ``gitdir: X`` file; else ``None``."""
    dot_git = os.path.join(work_tree, ".git")
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, "prompt-runner.pid")
    try:
        with open(dot_git, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = first[len("gitdir:") :].strip()
    if not os.path.isabs(git_dir):
        git_dir = os.path.join(work_tree, git_dir)
    return os.path.join(os.path.normpath(git_dir), "prompt-runner.pid")
