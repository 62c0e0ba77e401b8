"""The library's watch calls: what ``prompt-runner watch`` prints, as library calls.

One sample, repeated samples, and the bounded ``watch --for`` that leaves
acceptance evidence. Like :mod:`prompt_runner.api_status`, on the standard
library and the light ``state`` helpers (tests/test_cli_startup.py).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .api_calls import StateDirScope, public
from .api_status import _root
from .errors import ArgumentError, UserError, shown_path
from .state.layout import StateLayout

TYPE_CHECKING = (
    False  # typing costs ~4 ms of watch's start-up (api_calls.NamedTuple: the same class)
)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, NamedTuple
else:
    from .api_calls import NamedTuple

DEFAULT_INTERVAL_S = 900.0
"""``watch``'s sampling interval in seconds, the reference's (its guides/cli.md:
``--interval SECONDS (default 900)``)."""


class RepoSample(NamedTuple):
    """One repo of a :class:`WatchSample`: ``dirty`` (``git status --porcelain``
    lines) and ``commits`` (reachable from HEAD), ``None`` with ``error`` set
    when git could not read it."""

    name: str
    path: Path
    dirty: int | None
    commits: int | None
    error: str | None


class WatchSample(NamedTuple):
    """One supervision sample (SPEC 8): is the run alive, and is it advancing?

    Attributes:
        packet: the manifest's name; ``root`` the packet directory.
        at: the sample time, ISO 8601 UTC.
        runner: ``"up"`` (a live process holds ``run.pid``) or ``"down"``; ``pid``
            that process's id, ``None`` while the runner is down (a stale
            ``run.pid`` left by a killed runner names no runner); ``last_pid``
            the pid such a stale file names while down, else ``None``.
        prompt: the id of the newest prompt log, or ``None``.
        quiet_minutes: whole minutes since the newest file change in the logs
            and repos (``None`` when nothing was measurable); ``newest_mtime``
            that change (epoch seconds).
        repos: how many repos; ``dirty`` and ``commits`` summed over them
            (``None`` when one could not be read); ``repo_details`` each one.
        stage: what the live runner does outside a session, as its control
            snapshot shows it (``control status``'s ``Stage committing (prompt
            01) since T``): ``{"name": "verifying" | "committing",
            "prompt_id": str, "since": ISO 8601 UTC}`` -- the prompt's contract
            is being verified (its ``commands`` may run a test suite) or its
            work committed (the repos' commit hooks, the push after it) --
            shown once the stage has lasted 0.25 s. ``None`` when there is no
            stage, and whenever the runner is down (a killed runner's snapshot
            keeps its last stage).
    """

    packet: str
    root: Path
    at: str
    runner: str
    pid: int | None
    last_pid: int | None
    prompt: str | None
    quiet_minutes: int | None
    newest_mtime: float | None
    repos: int
    dirty: int | None
    commits: int | None
    repo_details: tuple[RepoSample, ...]
    stage: dict[str, str] | None = None

    @property
    def line(self) -> str:
        """``WATCH 16:57Z runner=UP prompt=11 quiet=0min repos=3 dirty=0 commits=27``."""
        # lazy: the status/watch start-up path loads only what this call reads
        from .watch import format_line

        return format_line(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The JSON document ``watch --json`` prints (``schema`` ``prompt_runner.watch/v1``)."""
        # lazy: the status/watch start-up path loads only what this call reads
        from .watch import SCHEMA

        doc: dict[str, Any] = {"schema": SCHEMA, **self._asdict()}
        doc["root"] = str(self.root)
        doc["repo_details"] = [
            {**repo._asdict(), "path": str(repo.path)} for repo in self.repo_details
        ]
        doc["stage"] = None if self.stage is None else dict(self.stage)
        return doc


def _typed_sample(doc: dict[str, Any]) -> WatchSample:
    details = tuple(
        RepoSample(d["name"], Path(d["path"]), d.get("dirty"), d.get("commits"), d.get("error"))
        for d in doc["repo_details"]
    )
    fields = {k: doc[k] for k in WatchSample._fields if k not in ("root", "repo_details", "stage")}
    stage = doc.get("stage")
    return WatchSample(
        root=Path(doc["root"]),
        repo_details=details,
        stage=dict(stage) if stage is not None else None,
        **fields,
    )


@public
def watch_sample(
    packet: str | os.PathLike[str],
    *,
    now: float | None = None,
    state_dir: str | os.PathLike[str] | None = None,
) -> WatchSample:
    """Take one supervision sample of the packet (what ``watch --once`` prints).

    Args:
        packet: the packet directory (or its manifest file).
        now: the sample time in epoch seconds (default: the current time).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: not a packet directory, or its manifest is unreadable.
    """
    # lazy: the status/watch start-up path loads only what this call reads
    from .watch import sample

    with StateDirScope(state_dir):
        return _typed_sample(sample(_root("watch_sample", packet), now=now))


@public
def watch_samples(
    packet: str | os.PathLike[str],
    *,
    interval_s: float = DEFAULT_INTERVAL_S,
    once: bool = False,
    sleep: Callable[[float], None] = time.sleep,
    state_dir: str | os.PathLike[str] | None = None,
) -> Iterator[WatchSample]:
    """Yield a sample of the packet every ``interval_s`` seconds (what ``watch`` prints).

    Runs until the caller stops iterating (or ``KeyboardInterrupt``); with
    ``once``, yields one sample and ends. The interval is measured from the
    start of one sample to the start of the next.

    Args:
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``, what
            ``run(state_dir=...)`` wrote; default: ``$PROMPT_RUNNER_STATE_DIR``,
            else the packet's own; see :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: not a packet directory, or ``interval_s`` is not positive
            or longer than 30 days (raised at the first ``next()``).
    """
    from .durations import MOST_S  # lazy: see _seconds

    if not once and not 0 < interval_s <= MOST_S:  # nan and inf too
        raise UserError(
            f"interval {interval_s} is not a positive number of seconds up to 30 days",
            key="--interval",
            fix=f"use seconds > 0 and at most {MOST_S:.0f}",
        )
    root = _root("watch_samples", packet)
    while True:
        started = time.monotonic()
        yield watch_sample(root, state_dir=state_dir)
        if once:
            return
        sleep(max(0.0, interval_s - (time.monotonic() - started)))


class WatchReport(NamedTuple):
    """How a bounded watch (:func:`watch_for`, ``watch --for``) ended.

    Attributes:
        passed: every sample of the whole interval was healthy.
        ended: ``completed`` (the interval ran out), ``unhealthy`` (a sample
            failed) or ``interrupted``.
        violations: the failing sample's violations (``[]`` when passed), each
            ``{"code": "runtime_unhealthy"|"not_running"|"progress_stale", ...}``.
        sample_count: how many samples were taken; ``elapsed_s`` from the first
            to the last, seconds.
        evidence: the samples' JSONL file; ``report`` the report's JSON file.
        document: the report as written (``schema`` ``prompt_runner.watch.report/v1``).
    """

    passed: bool
    ended: str
    violations: tuple[dict[str, Any], ...]
    sample_count: int
    elapsed_s: float
    evidence: Path
    report: Path
    document: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The report document (what ``watch --for --json`` prints last)."""
        return dict(self.document)


def _watched(
    packet: Any, workspace: Any
) -> tuple[Path, StateLayout | None, Path | None, tuple[str, Any] | None]:
    """``(packet directory, state layout, supervisor record, workspace notify
    level)`` of what ``watch_for`` watches; ``None`` for the packet's own defaults."""
    if (packet is None) == (workspace is None):
        raise ArgumentError(
            "takes a packet or a workspace" + (", not both" if packet is not None else ""),
            key="watch_for(packet=... | workspace=...)",
            fix="pass one, e.g. watch_for('path/to/packet', for_s='1h')",
        )
    if packet is not None:
        return _root("watch_for", packet), None, None, None
    # lazy: the workspace model (pydantic, YAML) loads only for a workspace's watch
    from .workspace import Workspace
    from .workspace.registry import resolve_workspace

    if not isinstance(workspace, Workspace | str | os.PathLike):
        raise ArgumentError(
            f"must be a Workspace, a manifest path or a registered id, not {workspace!r}"[:160],
            key="watch_for(workspace=...)",
            fix="pass e.g. workspace='ops/workspace.yml'",
        )
    ws = workspace if isinstance(workspace, Workspace) else resolve_workspace(workspace)
    notify = None
    if ws.notify is not None:
        notify = (shown_path(ws.manifest_path), dict(ws.notify))
    return ws.packet_dir, ws.layout.state, ws.layout.supervisor.record, notify


def _seconds(caller: str, name: str, value: Any, flag: str) -> float:
    """A duration argument: seconds (a positive number, at most 30 days) or text
    such as ``"10m"``."""
    # lazy: the status/watch start-up path loads only what this call reads
    from .durations import MOST_S, parse_duration

    if isinstance(value, str):
        return parse_duration(value, key=flag)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ArgumentError(
            f"must be a positive number of seconds or a duration such as '10m', not {value!r}",
            key=f"{caller}({name}=...)",
            fix=f"pass e.g. {name}='10m' or {name}=600",
        )
    if value > MOST_S:  # inf too: a clock's wait overflows
        raise ArgumentError(
            f"{value!r} s is longer than 30 days ({MOST_S:.0f} s), the longest span taken",
            key=f"{caller}({name}=...)",
            fix=f"pass at most {name}='30d' or {name}={MOST_S:.0f}",
        )
    return float(value)


@public
def watch_for(
    packet: str | os.PathLike[str] | None = None,
    *,
    workspace: Any = None,
    for_s: float | str,
    every_s: float | str | None = None,
    require_running: bool = False,
    require_progress: bool = False,
    progress_timeout_s: float | str | None = None,
    on_sample: Callable[[dict[str, Any]], None] | None = None,
    state_dir: str | os.PathLike[str] | None = None,
) -> WatchReport:
    """Watch the packet's run for a bounded time and leave acceptance evidence
    (what ``watch --for D --every D`` does).

    Samples at once and every ``every_s`` until ``for_s`` has passed; each
    sample (``prompt_runner.watch.sample/v1``) is appended and fsynced to
    ``acceptance/watch-<stamp>.jsonl`` under the run's state root before
    ``on_sample`` sees it. The first unhealthy sample ends the watch; the
    report (``watch-<stamp>.report.json``) is written atomically however it ends,
    and an unhealthy end is sent to the packet's ``notify:`` as ``watch_unhealthy``.

    Args:
        packet: the packet directory (or its manifest file); its state root is
            ``StateLayout.of_packet`` (``$PROMPT_RUNNER_STATE_DIR`` when set).
        workspace: instead of ``packet``, an operator workspace (a
            ``Workspace``, its manifest path or its registered id): its
            packet in the clone, its state under the runtime root, its
            detached run's supervisor record.
        for_s: how long, in seconds or as a duration (``"90s"``, ``"10m"``, ``"4h"``).
        every_s: between samples, likewise (default 10 minutes).
        require_running: a sample whose run is not running is ``not_running``.
        require_progress: a running run silent for longer than
            ``progress_timeout_s`` (default 60 minutes) is ``progress_stale``.
            A run waiting for a known usage-limit reset is not silent.
        on_sample: called with each sample document (a dict), in order.
        state_dir: with ``packet``, the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``; the evidence is
            written under it too); not with ``workspace``, which names its own.

    Returns:
        The :class:`WatchReport`.

    Raises:
        ArgumentError: a duration is not positive, longer than 30 days
            (``inf`` too) or not a duration;
            ``progress_timeout_s`` without ``require_progress``; both or
            neither of ``packet`` and ``workspace``; ``state_dir`` with ``workspace``.
        UserError: not a packet directory, or its manifest is unreadable.
        StorageError: the evidence cannot be written (exit 3).
    """
    if state_dir is not None and workspace is not None:
        raise ArgumentError(
            "takes no state_dir with a workspace: the workspace names its state directory",
            key="watch_for(state_dir=...)",
            fix="pass the workspace alone, or the packet with its state_dir",
        )
    root, state, record, notify = _watched(packet, workspace)
    total, every, req = _watch_bounds(
        for_s, every_s, require_running, require_progress, progress_timeout_s
    )
    if state is None and state_dir is not None and os.fspath(state_dir) != "":
        state = StateLayout.of_packet(root, state_dir)
    with StateDirScope(state_dir if workspace is None else None):
        doc = _run_watch(root, total, every, req, state, record, on_sample, notify)
    return _watch_report(doc)


def _run_watch(
    root: Path,
    total: float,
    every: float,
    req: Any,
    state: StateLayout | None,
    record: Path | None,
    on_sample: Callable[[dict[str, Any]], None] | None,
    notify: tuple[str, Any] | None,
) -> dict[str, Any]:
    # lazy: the status/watch start-up path loads only what this call reads
    from .watch.bounded import watch_for as run_watch

    return run_watch(
        root,
        for_s=total,
        every_s=every,
        requirements=req,
        state=state,
        record=record,
        emit=on_sample,
        notify_workspace=notify,
    )


def _watch_bounds(
    for_s: float | str,
    every_s: float | str | None,
    require_running: bool,
    require_progress: bool,
    progress_timeout_s: float | str | None,
) -> tuple[float, float, Any]:
    """``(for_s, every_s, Requirements)`` of :func:`watch_for`'s arguments, in seconds.

    Raises:
        ArgumentError: as :func:`watch_for` says.
    """
    # lazy: the status/watch start-up path loads only what this call reads
    from .watch.bounded import DEFAULT_EVERY_S
    from .watch.health import DEFAULT_PROGRESS_TIMEOUT_S, Requirements

    total = _seconds("watch_for", "for_s", for_s, "--for")
    every = (
        DEFAULT_EVERY_S if every_s is None else _seconds("watch_for", "every_s", every_s, "--every")
    )
    if progress_timeout_s is not None and not require_progress:
        raise ArgumentError(
            "applies only with require_progress",
            key="watch_for(progress_timeout_s=...)",
            fix="add require_progress=True (--require-progress), or leave the timeout out",
        )
    limit = (
        DEFAULT_PROGRESS_TIMEOUT_S
        if progress_timeout_s is None
        else _seconds("watch_for", "progress_timeout_s", progress_timeout_s, "--progress-timeout")
    )
    return total, every, Requirements(require_running, require_progress, limit)


def _watch_report(doc: dict[str, Any]) -> WatchReport:
    """The :class:`WatchReport` of the bounded watch's report document."""
    return WatchReport(
        passed=bool(doc["passed"]),
        ended=str(doc["ended"]),
        violations=tuple(doc["violations"]),
        sample_count=int(doc["sample_count"]),
        elapsed_s=float(doc["elapsed_s"]),
        evidence=Path(doc["evidence"]),
        report=Path(doc["report"]),
        document=doc,
    )
