"""The library's fleets: one call per ``fleet ...`` command (``docs/fleet.md``).

Each call takes the fleet as a :class:`~prompt_runner.fleet.Fleet` value or a
fleet manifest path, and returns a typed, frozen result with ``to_dict()``
(what ``--json`` prints)::

    import prompt_runner
    fleet = prompt_runner.load_fleet("ops/fleet.yml")
    prompt_runner.plan_fleet(fleet).members           # what submit would run where
    prompt_runner.submit_fleet(fleet).outcome         # local: runs them all; temporal: starts
    [r.state for r in prompt_runner.fleet_status(fleet).rows]
    prompt_runner.stop_fleet(fleet, after_prompt=True).ok
    prompt_runner.watch_fleet(fleet, for_s=600, every_s=60)["passed"]
    prompt_runner.fleet_steer(fleet, "migrate-api", "use the new client").outcome

``engine: local`` runs the members here, a bounded pool of supervised
detached runs; ``engine: temporal`` runs each as a Temporal workflow on the
``fleet worker``\\ s (the ``temporal`` extra, imported only by these calls).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .api_calls import public
from .durations import MOST_S
from .errors import ArgumentError, InfrastructureError, UserError
from .fleet import Fleet
from .fleet import load_fleet as _load
from .fleet.local import FleetStopResult, SubmitResult, submit_local
from .fleet.plan import FleetPlan
from .fleet.plan import plan_fleet as _plan
from .fleet.queue import host_name
from .fleet.status import FleetStatus, MemberRow, driver_pid, local_status
from .fleet.steering import FleetSteerReceipt, steer_member
from .fleet.stopping import stop_local
from .fleet.watching import watch_fleet as _watch
from .watch.health import DEFAULT_PROGRESS_TIMEOUT_S, Requirements

__all__ = [
    "Fleet",
    "FleetPlan",
    "FleetStatus",
    "FleetSteerReceipt",
    "FleetStopResult",
    "SubmitResult",
    "fleet_status",
    "fleet_steer",
    "load_fleet",
    "plan_fleet",
    "run_fleet_worker",
    "stop_fleet",
    "submit_fleet",
    "watch_fleet",
]

FleetLike = Fleet | str | os.PathLike[str]


def _fleet(caller: str, fleet: Any) -> Fleet:
    """``fleet`` as a Fleet: as is, or loaded from a manifest path.

    Raises:
        ArgumentError: neither.
        UserError: the manifest is invalid.
    """
    if isinstance(fleet, Fleet):
        return fleet
    if isinstance(fleet, str | os.PathLike):
        return _load(fleet)
    raise ArgumentError(
        f"must be a Fleet or a fleet manifest path, not {fleet!r}",
        key=f"{caller}(fleet=...)",
        fix="pass e.g. 'ops/fleet.yml'",
    )


@public
def load_fleet(path: str | os.PathLike[str]) -> Fleet:
    """The :class:`Fleet` the manifest at ``path`` describes (nothing is written).

    Raises:
        UserError: the fleet manifest or a member's workspace manifest cannot
            be read or is invalid (one sentence naming the file, the key and the fix).
    """
    return _load(path)


@public
def plan_fleet(fleet: FleetLike) -> FleetPlan:
    """What ``submit_fleet`` would run where (read-only; ``fleet plan``).

    Returns:
        The :class:`FleetPlan`: per member its state here, the action
        (start, resume, follow, none, refuse, or its workflow) and the problems.
    """
    return _plan(_fleet("plan_fleet", fleet))


@public
def submit_fleet(
    fleet: FleetLike,
    *,
    say: Callable[[str], None] | None = None,
    poll_s: float = 0.2,
) -> SubmitResult:
    """Run the fleet's unfinished members (``fleet submit``); idempotent.

    Local engine: drives the members here until each has ended, at most
    ``concurrency`` at once; a run that lives already is followed, never
    started twice; a killed submit is continued by the next. Temporal: starts
    one workflow per member (``prompt-runner/<fleet>/<workspace>``) and
    returns; a member whose workflow runs is left alone.

    Args:
        say: called with one line per event (local: started, followed, ended).
        poll_s: local: seconds between two looks at a running member.

    Returns:
        The :class:`SubmitResult` (``outcome``: completed, failed, stopped,
        driving -- another submit drives it, nothing was done -- or submitted).

    Raises:
        UserError: a bad manifest.
        InfrastructureError: the Temporal service cannot be reached.
        StorageError: the fleet's queue cannot be written.
    """
    value = _fleet("submit_fleet", fleet)
    if value.engine == "temporal":
        _need_temporal()
        from .fleet.temporal import client  # lazy: temporalio is the `temporal` extra

        return client.submit(value)
    return submit_local(value, poll_s=poll_s, say=say)


@public
def fleet_status(fleet: FleetLike) -> FleetStatus:
    """One row per member (``fleet status``): state, prompt k/n, attempts, cost,
    host, last progress (``fleet/status.py`` documents each key).

    Raises:
        InfrastructureError: Temporal: the service cannot be reached.
    """
    value = _fleet("fleet_status", fleet)
    if value.engine == "temporal":
        _need_temporal()
        from .fleet.temporal import client  # lazy: temporalio is the `temporal` extra

        return client.status(value)
    return local_status(value, driving=driver_pid(value.layout.submit_pid))


@public
def stop_fleet(
    fleet: FleetLike,
    *,
    after_prompt: bool = False,
    grace_s: float | None = None,
    author: str | None = None,
) -> FleetStopResult:
    """Stop every running member and start no new one (``fleet stop``).

    Args:
        after_prompt: let each member's current prompt end (pass and commit) first.
        grace_s: local: as ``stop``'s (seconds for the runner, then between
            SIGTERM and SIGKILL).
        author: who asks (each member's control log).

    Returns:
        The :class:`FleetStopResult` (``ok``: nothing of a stopped member is left).
    """
    value = _fleet("stop_fleet", fleet)
    if value.engine == "temporal":
        _need_temporal()
        from .fleet.temporal import client  # lazy: temporalio is the `temporal` extra

        return client.stop(value, after_prompt=after_prompt, author=author)
    return stop_local(value, after_prompt=after_prompt, grace_s=grace_s, author=author)


@public
def watch_fleet(
    fleet: FleetLike,
    *,
    for_s: float,
    every_s: float,
    require_running: bool = False,
    require_progress: bool = False,
    progress_timeout_s: float = DEFAULT_PROGRESS_TIMEOUT_S,
    emit: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The bounded watch over every member, one report (``fleet watch --for --every``).

    Local engine: the members' state on this machine; Temporal: each member's
    ``fleet status`` row. ``fleet/watching.py`` documents the samples and the report.

    Args:
        for_s, every_s: how long, and between samples (seconds, > 0, at most 30 days).
        require_running: while a member is unfinished, one must be running.
        require_progress: a running member silent for ``progress_timeout_s`` fails it.
        emit: called with each fleet sample once it is on disk.

    Returns:
        The report document (``passed``, ``ended``, ``violations``...).
    """
    value = _fleet("watch_fleet", fleet)
    if not (0 < for_s <= MOST_S and 0 < every_s <= MOST_S):  # nan and inf too
        raise ArgumentError(
            "for_s and every_s must be positive numbers of seconds up to 30 days",
            key="watch_fleet()",
            fix=f"pass seconds > 0 and at most {MOST_S:.0f}",
        )
    req = Requirements(require_running, require_progress, progress_timeout_s)
    rows = None
    if value.engine == "temporal":
        _need_temporal()
        from .fleet.temporal import client  # lazy: temporalio is the `temporal` extra

        def rows() -> tuple[MemberRow, ...]:
            return client.status(value).rows

    return _watch(value, for_s=for_s, every_s=every_s, requirements=req, emit=emit, rows=rows)


@public
def fleet_steer(
    fleet: FleetLike,
    workspace: str,
    text: str,
    *,
    author: str | None = None,
    wait_s: float = 30.0,
) -> FleetSteerReceipt:
    """Steer member ``workspace`` of ``fleet`` on the machine that runs it
    (``control steer --fleet F --workspace W TEXT``).

    Local engine: the member's control plane here. Temporal: a signal to the
    member's workflow; the worker running it applies it through its local
    control plane and the outcome comes back.

    Args:
        wait_s: longest wait, in seconds, for the runner's decision.

    Raises:
        UserError: blank text, no such member, or nothing running to steer.
        InfrastructureError: Temporal: the service cannot be reached.
    """
    value = _fleet("fleet_steer", fleet)
    member = value.member(workspace)
    if not text.strip():
        raise UserError("a steer needs something to say", key="TEXT", fix="give the text")
    if value.engine == "temporal":
        _need_temporal()
        from .fleet.temporal import client  # lazy: temporalio is the `temporal` extra

        return client.steer(value, member.id, text, author=author, wait_s=wait_s)
    name, outcome, reason = steer_member(member.workspace, text, author=author, wait_s=wait_s)
    return FleetSteerReceipt(value.id, member.id, name, host_name(), outcome, reason)


@public
def run_fleet_worker(
    address: str,
    *,
    namespace: str = "default",
    task_queue: str = "prompt-runner",
    slots: int = 1,
    identity: str | None = None,
    root: str | os.PathLike[str] | None = None,
    say: Callable[[str], None] | None = None,
    tls: bool | None = None,
    tls_ca: str | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    api_key_env: str | None = None,
) -> int:
    """Run a Temporal fleet worker until interrupted (``fleet worker``).

    It polls ``task_queue`` and runs at most ``slots`` members at once, each
    in its own workspace under ``root`` on this machine.

    Args:
        address: the Temporal frontend, ``HOST:PORT``.
        identity: the worker's identity (``fleet status`` shows it as the host;
            default ``<pid>@<hostname>``).
        root: where the members' workspaces live (default
            ``$XDG_DATA_HOME/prompt_runner/fleet-worker``).
        tls: connect over TLS (``None``: only with an API key or a PEM file).
        tls_ca, tls_cert, tls_key: PEM files (relative to the working
            directory): the server's CA; this worker's certificate and key (mTLS).
        api_key_env: the environment variable the API key is read from when
            connecting (Temporal Cloud); the key is never passed or written.

    Returns:
        0 once it has shut down.

    Raises:
        UserError: a certificate without its key, an unreadable PEM file, or
            ``api_key_env`` unset (exit 2).
        InfrastructureError: the service cannot be reached.
    """
    if slots < 1:
        raise ArgumentError("slots must be at least 1", key="--slots", fix="pass 1 or more")
    _need_temporal()
    # lazy: the worker's settings and temporalio load only for this command
    from .fleet.model import TemporalSettings
    from .fleet.temporal import worker  # lazy: temporalio is the `temporal` extra

    service = TemporalSettings(
        address=address,
        namespace=namespace,
        task_queue=task_queue,
        tls=tls,
        tls_ca=tls_ca,
        tls_cert=tls_cert,
        tls_key=tls_key,
        api_key_env=api_key_env,
    )
    return worker.run_worker(
        service=service,
        task_queue=task_queue,
        slots=slots,
        identity=identity,
        root=root,
        say=say,
    )


def _need_temporal() -> None:
    """The Temporal engine's library is installed.

    Raises:
        InfrastructureError: ``temporalio`` is missing (the ``temporal`` extra).
    """
    import importlib.util  # lazy: only the Temporal engine asks

    if importlib.util.find_spec("temporalio") is None:
        raise InfrastructureError(
            "the Temporal engine needs the `temporal` extra (the temporalio SDK); install it "
            "with `pip install 'prompt-runner[temporal]'`"
        )
