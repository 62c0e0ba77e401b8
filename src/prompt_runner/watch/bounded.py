"""``watch --for D --every D``: a bounded watch that leaves acceptance evidence.

The watch samples the run at once and then every ``every_s`` seconds until
``for_s`` seconds have passed (the last sample is taken at the end of the
interval). Each sample is judged (:func:`.health.violations`), appended as
one line to ``acceptance/watch-<stamp>.jsonl`` and fsynced *before* it is
handed to the caller, so what was shown is on disk. The first unhealthy
sample ends the watch; a whole interval of healthy samples passes it. Either
way -- and when the watch is interrupted (Ctrl-C, or SIGTERM or SIGHUP, which
the watch turns into an interruption while it runs in the main thread and
they are not handled already) -- the final report replaces
``acceptance/watch-<stamp>.report.json`` atomically; an interrupted report
names the ``signal`` and :class:`WatchSignalled` (a ``KeyboardInterrupt``
carrying ``signum``; the CLI exits ``128 + signum``) is raised after it.

A sample (``schema: prompt_runner.watch.sample/v1``)::

    {"schema", "seq" (1-based), "at" (ISO UTC, ms), "elapsed_s" (since the
     first sample), "packet", "root", "state_root", "run_id", "state",
     "recorded_status", "runner" ("up"|"down"), "pid" (null while down),
     "last_pid" (a stale run.pid's while down, else null), "prompt",
     "stage" (a live runner's stage outside a session: {"name": "verifying"|
     "committing", "prompt_id", "since"}; null without one or while down),
     "waiting_until", "last_progress_at", "progress_age_s", "journal_seq",
     "push", "supervisor", "repos", "dirty", "commits", "repo_details", "state_error",
     "packet_error" (the loader's sentence when the packet does not load, shown
     and not judged, as ``status`` shows it: :mod:`.packet_check`; else null),
     "healthy", "violations": [{"code", ...}]}

The report (``schema: prompt_runner.watch.report/v1``)::

    {"schema", "passed", "ended" ("completed"|"unhealthy"|"interrupted"),
     "packet", "root", "state_root", "for_s", "every_s", "requirements",
     "started_at", "finished_at", "elapsed_s", "sample_count", "violations"
     (the failing sample's), "failed_sample" (its seq, or null), "evidence"
     (the JSONL path), "report" (this file), "first_sample", "last_sample",
     "notify_error" (only when a ``watch_unhealthy`` notification could not be
     sent: the packet's ``notify:`` is wrong), "signal" (only when interrupted:
     ``SIGINT``, ``SIGTERM`` or ``SIGHUP``)}

An unhealthy end is also sent to the packet's ``notify:`` as
``watch_unhealthy`` (:mod:`.notice`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from ..errors import PromptRunnerError, StorageError
from ..paths import packet_root
from ..state import layout_text
from ..state.atomic import write_json_atomic
from ..state.jsonl import JsonlWriter
from ..state.layout import StateLayout
from . import facts, health
from .health import Requirements
from .notice import Level, notify_unhealthy
from .packet_check import PacketCheck
from .records import RecordsCheck

SAMPLE_SCHEMA = "prompt_runner.watch.sample/v1"
REPORT_SCHEMA = "prompt_runner.watch.report/v1"

DEFAULT_EVERY_S = 600.0
"""``--every`` when ``--for`` is given alone (the reference's 10 minutes)."""

Emit = Callable[[dict[str, Any]], None]

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a bounded watch as Ctrl-C does (its report written first)."""


class WatchSignalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP ended a bounded watch (after its report was written).

    Attributes:
        signum: the signal's number (the CLI exits ``128 + signum``).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


class _EndingSignals:
    """While installed, SIGTERM/SIGHUP raise :class:`WatchSignalled` -- or, while
    ``held`` (the report is being written), wait in ``pending`` to be raised by
    :meth:`raise_pending`. Installed only in the main thread, and only over a
    signal's default disposition: a caller's own handler is left alone."""

    def __init__(self) -> None:
        self.held = False
        self.pending: int | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in ENDING_SIGNALS:
            if signal.getsignal(signum) is signal.SIG_DFL:
                self._previous[signum] = signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.pending is not None:
            return  # one ending is enough; the first is being handled
        self.pending = signum
        if not self.held:
            raise WatchSignalled(signum)

    def raise_pending(self) -> None:
        if self.pending is not None:
            raise WatchSignalled(self.pending)

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()


def take_sample(
    root: Path,
    state: StateLayout,
    req: Requirements,
    *,
    seq: int,
    elapsed_s: float,
    now: float,
    record: Path | None = None,
    packet: PacketCheck | None = None,
    records: RecordsCheck | None = None,
) -> dict[str, Any]:
    """One judged sample of the packet at ``root`` whose state is ``state``
    (``record``: where a detached run's supervisor record would be; ``packet``:
    the watch's :class:`.packet_check.PacketCheck`, which keeps its answer
    while the packet's files are unchanged -- default: a new one; ``records``:
    its :class:`.records.RecordsCheck`, which reads each line of the prompt logs
    and ``progress.log`` once -- default: a new one, which reads them whole).

    A sample that cannot be taken (the manifest vanished, a repo cannot be
    listed) is a sample too: ``runtime_unhealthy`` with reason
    ``sample_failed`` and the error's sentence.
    """
    head: dict[str, Any] = {
        "schema": SAMPLE_SCHEMA,
        "seq": seq,
        "at": health.iso_of(now),
        "elapsed_s": round(elapsed_s, 3),
        "root": str(root),
        "state_root": str(state.root),
    }
    try:
        raw = facts.sample(root, now=now, state=state)
    except (PromptRunnerError, OSError) as exc:
        v = [{"code": "runtime_unhealthy", "reason": "sample_failed", "detail": str(exc)}]
        return {**head, "state": "unknown", "healthy": False, "violations": v}
    run = health.run_facts(
        state, alive=raw["runner"] == "up", now=now, record=record, records=records
    )
    last, age = health.progress_age(
        newest=[raw["newest_mtime"], run["state_progress"]],
        started_at=run["started_at"],
        waiting_until=run["waiting_until"],
        now=now,
    )
    doc: dict[str, Any] = {
        **head,
        "packet": raw["packet"],
        "run_id": run["run_id"],
        "state": run["state"],
        "recorded_status": run["recorded_status"],
        "runner": raw["runner"],
        "pid": raw["pid"],
        "last_pid": raw["last_pid"],
        "prompt": raw["prompt"],
        "stage": run["stage"],  # read with the run's facts, after the liveness check
        "waiting_until": run["waiting_until"],
        "last_progress_at": health.iso_of(last),
        "progress_age_s": None if age is None else round(age, 3),
        "journal_seq": run["journal_seq"],
        "push": run["push"],
        "supervisor": run["supervisor"],
        "repos": raw["repos"],
        "dirty": raw["dirty"],
        "commits": raw["commits"],
        "repo_details": raw["repo_details"],
        "state_error": run["state_error"],
        "packet_error": (packet or PacketCheck()).error(root),
    }
    found = health.violations(doc, req)
    doc["healthy"] = not found
    doc["violations"] = found
    return doc


def claim_stamp(state: StateLayout, now: float) -> tuple[Path, Path]:
    """Create this watch's empty evidence file under a name no other watch has,
    and return ``(samples path, report path)``.

    The stamp is the UTC start time to the second (``20261201T120000Z``), with
    ``-2``, ``-3``... when another watch started in the same second.

    Raises:
        StorageError: the acceptance directory cannot be made or written.
    """
    base = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    for n in range(1, 1000):
        stamp = base if n == 1 else f"{base}-{n}"
        samples = state.watch_samples(stamp)
        try:
            samples.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(samples, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        except OSError as exc:
            raise StorageError(samples, exc) from exc
        return samples, state.watch_report(stamp)
    raise StorageError(state.acceptance_dir, FileExistsError("no free watch stamp"))


@dataclass(frozen=True)
class Clock:
    """The time a watch runs on: ``monotonic`` (intervals), ``wall`` (sample
    times) and ``sleep`` (seconds)."""

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class _Target:
    root: Path
    state: StateLayout
    record: Path | None
    req: Requirements
    packet: PacketCheck = field(default_factory=PacketCheck)
    records: RecordsCheck = field(default_factory=RecordsCheck)

    def sample(self, seq: int, elapsed_s: float, now: float) -> dict[str, Any]:
        return take_sample(
            self.root,
            self.state,
            self.req,
            seq=seq,
            elapsed_s=elapsed_s,
            now=now,
            record=self.record,
            packet=self.packet,
            records=self.records,
        )


def watch_for(
    packet: Path | str,
    *,
    for_s: float,
    every_s: float = DEFAULT_EVERY_S,
    requirements: Requirements | None = None,
    state: StateLayout | None = None,
    record: Path | None = None,
    emit: Emit | None = None,
    clock: Clock | None = None,
    notify: bool = True,
    notify_workspace: Level | None = None,
) -> dict[str, Any]:
    """Watch the run of ``packet`` for ``for_s`` seconds, a sample every ``every_s``.

    Args:
        packet: the packet directory (or its manifest file).
        for_s: how long the watch lasts, seconds (> 0).
        every_s: the time between two samples, seconds (> 0); a sample that
            took longer than that is followed at once by the next.
        requirements: what every sample must meet (default: only runtime health).
        state: the run's state root (default: the packet's, see
            :meth:`~prompt_runner.state.layout.StateLayout.of_packet`); the
            evidence goes to its ``acceptance/``.
        record: a detached run's supervisor record (default: the state root's,
            ``supervisor/record.json``; a workspace keeps it in its runtime root).
        emit: called with each sample once it is on disk.
        clock: the clocks and the sleep the loop uses (default: the real ones).
        notify: when the watch ends unhealthy, send ``watch_unhealthy`` through
            the packet's ``notify:`` (:mod:`.notice`), after the report is
            written; a bad ``notify:`` is noted as the report's ``notify_error``.
        notify_workspace: the workspace manifest's ``notify`` level, if any.

    Returns:
        The report document (see the module docstring), as written.

    Raises:
        UserError: not a packet directory, or its manifest is unreadable
            (before anything is written).
        StorageError: the state root is a file (before anything is read or
            written), or the evidence cannot be written.
        KeyboardInterrupt: re-raised after the report (``ended: interrupted``,
            ``signal: SIGINT``); :class:`WatchSignalled` for SIGTERM or SIGHUP
            (``signal: SIGTERM``...), also when one arrives while the report
            of an ended watch is written.
    """
    root = packet_root(packet)
    # a file where the state root should be: exit 3 with `status`'s sentence,
    # before the manifest is read and before any sample or evidence
    facts.check_root(layout_text.state_root(str(root)) if state is None else str(state.root))
    name, _ = facts.manifest_repos(root)  # bad input fails here, before any evidence
    state = StateLayout.of_packet(root) if state is None else state
    target = _Target(
        root,
        state,
        state.supervisor.record if record is None else record,
        requirements or Requirements(),
    )
    clock = clock or Clock()
    samples_path, report_path, report = _open_report(
        name, root, state, target, for_s, every_s, clock
    )
    ending = _EndingSignals()
    ending.install()
    try:
        try:
            with JsonlWriter(samples_path) as writer:
                _loop(target, writer, report, for_s, every_s, emit, clock)
        except KeyboardInterrupt as exc:
            ending.held = True
            report["ended"] = "interrupted"
            report["signal"] = signal.Signals(getattr(exc, "signum", signal.SIGINT)).name
            raise
        finally:
            ending.held = True
            report["finished_at"] = health.iso_of(clock.wall())
            write_json_atomic(report_path, report)
        ending.held = False
        ending.raise_pending()
        if notify:
            _notify_if_unhealthy(root, state, report, report_path, notify_workspace)
    finally:
        ending.restore()
    return report


def _open_report(
    name: str,
    root: Path,
    state: StateLayout,
    target: _Target,
    for_s: float,
    every_s: float,
    clock: Clock,
) -> tuple[Path, Path, dict[str, Any]]:
    """Claim the stamp: ``(samples path, report path, the report as it starts)``."""
    started_wall = clock.wall()
    samples_path, report_path = claim_stamp(state, started_wall)
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "passed": False,
        "ended": "interrupted",
        "packet": name,
        "root": str(root),
        "state_root": str(state.root),
        "for_s": for_s,
        "every_s": every_s,
        "requirements": target.req.to_dict(),
        "started_at": health.iso_of(started_wall),
        "finished_at": None,
        "elapsed_s": 0.0,
        "sample_count": 0,
        "violations": [],
        "failed_sample": None,
        "evidence": str(samples_path),
        "report": str(report_path),
        "first_sample": None,
        "last_sample": None,
    }
    return samples_path, report_path, report


def _notify_if_unhealthy(
    root: Path, state: StateLayout, report: dict[str, Any], path: Path, level: Level | None
) -> None:
    """Send ``watch_unhealthy`` if the watch ended so (a problem: ``notify_error``)."""
    if report["ended"] == "unhealthy":
        problem = notify_unhealthy(root, state, report, workspace=level)
        if problem is not None:
            report["notify_error"] = problem
            write_json_atomic(path, report)


def _loop(
    target: _Target,
    writer: JsonlWriter,
    report: dict[str, Any],
    for_s: float,
    every_s: float,
    emit: Emit | None,
    clock: Clock,
) -> None:
    """Sample until the interval is over or a sample is unhealthy; ``report`` is
    kept up to date after every sample (it is written even if this raises)."""
    start = clock.monotonic()
    end = start + for_s
    due = start
    seq = 0
    while True:
        final = due >= end
        seq += 1
        elapsed = clock.monotonic() - start
        doc = target.sample(seq, elapsed, clock.wall())
        writer.append(doc)
        report.update(sample_count=seq, elapsed_s=round(elapsed, 3), last_sample=doc)
        if report["first_sample"] is None:
            report["first_sample"] = doc
        if emit is not None:
            emit(doc)
        if not doc["healthy"]:
            report.update(ended="unhealthy", violations=doc["violations"], failed_sample=seq)
            return
        if final:
            report.update(passed=True, ended="completed")
            return
        due = min(max(due + every_s, clock.monotonic()), end)
        clock.sleep(max(0.0, due - clock.monotonic()))
