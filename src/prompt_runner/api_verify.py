"""``prompt_runner.verify``: check contracts only -- no session, no state or progress change."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .api_calls import StateDirScope, public
from .api_options import packet_arg, prompt_ids
from .errors import InfrastructureError
from .packet.loader import Packet
from .planning.selection import normalize_id
from .runner import orphans
from .state.layout import StateLayout
from .state.lock import PidIdentity, identity_alive, read_pid_file
from .state.usable import GITIGNORE
from .verifier import VerifyContext
from .verifier import verify as run_contract


@public
def verify(
    packet: Packet | str | Path,
    *,
    ids: str | int | tuple[str, ...] | list[str] = (),
    state_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Check contracts only: no session, no state or progress change.

    Args:
        ids: one prompt id (``"01"``) or several (``["01", "03"]``); empty = all.
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``; default:
            ``$PROMPT_RUNNER_STATE_DIR``, else the packet's own): where the
            live run that refuses a verification holds its ``run.pid``, and
            where the verify commands are registered while they run (see
            :class:`prompt_runner.api_calls.StateDirScope`).

    Returns:
        ``{"schema": "prompt_runner.verify/v1", "pass", "prompts", "failures",
        "faults", "reports": [{prompt_id, name, pass, items: [...]}]}``.

    A verification whose contracts run commands is refused while a live run
    holds the packet (its ``run.pid``) or a work tree those commands run in
    (``<git dir>/prompt-runner.pid``): the commands would write in the work
    trees that run is changing, and ``regenerates:`` would move its outputs
    aside under it. Contracts without commands only read, and verify as
    ever. A ``verify`` started from inside that run (by its agent or one of
    its verify commands: the run's process is among its ancestors) is the
    run's own and is not refused.

    Raises:
        ArgumentError: ``ids`` is not an id or a list of ids.
        UserError: unknown prompt id; a repo's path is a git directory or
            inside one (as ``run`` refuses it).
        InfrastructureError: a live run holds the packet or a work tree the
            chosen contracts' commands run in (exit 3); nothing was run.
    """
    with StateDirScope(state_dir):
        return _verify(packet, ids)


def _verify(
    packet: Packet | str | Path, ids: str | int | tuple[str, ...] | list[str]
) -> dict[str, Any]:
    # lazy: the preflight (git, commit errors) loads only once a packet is verified
    from .packet.preflight import refuse_git_dirs

    loaded = packet_arg("verify", packet)
    # a repo path at a .git: its contracts would be judged inside git's own data
    refuse_git_dirs(loaded)
    wanted = prompt_ids("verify", ids)
    known = loaded.ids()
    chosen = [loaded.prompt(normalize_id(i, known)).id for i in wanted] if wanted else known
    _refuse_under_a_live_run(loaded, chosen)
    reports = []
    failures = faults = 0
    for prompt_id in chosen:
        prompt = loaded.prompt(prompt_id)
        default = prompt.targets[0] if prompt.targets else None
        report = run_contract(
            prompt.contract,
            VerifyContext(
                repos=loaded.repos,
                default_repo=default,
                on_process_start=_verify_registrar(loaded.root, prompt_id),
            ),
        )
        doc = report.to_dict()
        failures += len(report.failures())
        faults += 1 if report.fault is not None else 0
        reports.append({"prompt_id": prompt_id, "name": prompt.name, **doc})
    return {
        "schema": "prompt_runner.verify/v1",
        "pass": failures == 0 and faults == 0,
        "prompts": len(chosen),
        "failures": failures,
        "faults": faults,
        "reports": reports,
    }


def _verify_registrar(root: Path, prompt_id: str) -> Callable[[int], Any]:
    """``verify`` registers each command in the packet's orphan registry while it
    runs, as a run does (runner/orphans.py), so one left by a ``verify`` killed
    with -9 is stopped by the next run. A ``.prompt_runner/`` it had to create
    for that is removed again once empty: ``verify`` leaves no state behind.
    A packet where it cannot be made still verifies, unregistered."""
    layout = StateLayout.of_packet(root)
    state = layout.root
    agents = layout.agents_dir

    def on_start(pid: int) -> Callable[[], None] | None:
        created = not state.exists()
        try:
            if created:
                state.mkdir()
                layout.gitignore.write_bytes(GITIGNORE)
        except OSError:
            return None
        undo = orphans.registrar(
            agents, run_id="verify", prompt_id=prompt_id, kind=orphans.VERIFY_COMMAND
        )(pid)

        def forget() -> None:
            if undo is not None:
                undo()
            if created:
                with contextlib.suppress(OSError):
                    agents.rmdir()
                    if [p.name for p in state.iterdir()] == [".gitignore"]:
                        (state / ".gitignore").unlink()
                        state.rmdir()

        return forget

    return on_start


def _refuse_under_a_live_run(loaded: Packet, chosen: list[str]) -> None:
    """Raise when a live run holds the packet or a work tree the chosen commands run in.

    Raises:
        InfrastructureError: the sentence names the run (pid, lock file) and what to do.
    """
    repos: dict[str, Path] = {}
    for prompt_id in chosen:
        prompt = loaded.prompt(prompt_id)
        default = prompt.targets[0] if prompt.targets else None
        for entry in prompt.contract.entries.get("commands", ()):
            name = entry.repo if entry.repo is not None else default
            if name is not None and name in loaded.repos:
                repos[name] = loaded.repos[name]
    if not repos:
        return  # nothing would run: the clauses only read
    pid_file = StateLayout.of_packet(loaded.root).run_pid
    holder = _live_foreign(pid_file)
    if holder is not None:
        raise InfrastructureError(
            f"verify refused: a live run (pid {holder.pid}, {pid_file}) holds packet "
            f"{loaded.root}, and the contracts' commands would run in the work trees it is "
            "changing; wait for it to finish (`prompt-runner status`, `prompt-runner watch`) "
            "or stop it (`prompt-runner stop`), then verify again"
        )
    # lazy: the run's lock helpers, only when the chosen contracts run commands
    from .runner.locks import work_tree_lock_file

    for name, path in repos.items():
        repo_lock = work_tree_lock_file(path) if path.is_dir() else None
        if repo_lock is None:
            continue
        holder = _live_foreign(repo_lock)
        if holder is not None:
            raise InfrastructureError(
                f"verify refused: repo {name!r} ({path}) is in use by a live run (pid "
                f"{holder.pid}, lock {repo_lock}), and the contracts' commands would run in "
                "the work tree it is changing; wait for that run to finish or stop it, then "
                "verify again"
            )


def _live_foreign(pid_file: Path) -> PidIdentity | None:
    """The live process ``pid_file`` names, unless it is none or this process's ancestor."""
    ident = read_pid_file(pid_file)
    if ident is None or not identity_alive(ident):
        return None
    # lazy: the supervise room's /proc reader, only when a live run holds the lock (a run's
    # start-up imports this module and keeps supervise unloaded: docs/performance.md)
    from .supervise.members import read_process

    pid, seen = os.getpid(), 0
    while pid > 1 and seen < 512:  # this process and its ancestors, up to init
        if pid == ident.pid:
            return None
        info = read_process(pid)
        if info is None:
            break
        pid, seen = info.ppid, seen + 1
    return ident
