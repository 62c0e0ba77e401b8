"""Where every durable file lives under one state root (SPEC 5 and 6).

The state root is a packet's ``.prompt_runner/`` or a directory outside the
packet (an operator workspace keeps it under its runtime root, so the clone
the packet is read from never holds runtime state). :meth:`StateLayout.of_packet`
is the one rule that says which, and every reader and writer asks it:

1. an explicit state directory (the ``state_dir`` run option, ``--state-dir``);
2. else ``$PROMPT_RUNNER_STATE_DIR`` (:data:`STATE_DIR_ENV`), so a detached
   runner, the agents and verify commands it starts, and every ``status`` or
   ``control`` reading beside it agree without being told twice;
3. else ``<packet>/.prompt_runner``.

:class:`StateLayout` is the one place that spells a path below the root::

    .prompt_runner/
      .gitignore                 "*": runtime state is never committed
      run.pid                    the run lock (state/lock.py)
      progress.log               ID:STATUS:ISO8601[:SUFFIX] lines (state/progress.py)
      state.json                 run meta + a summary per prompt (state/summary.py)
      prompts/<id>.jsonl         a prompt's record as an operation log (state/prompt_log.py)
      status-cache               the text of `status --json`, derived (state/status_cache.py)
      watch-manifest.json        the manifest's name and repos, derived (watch/kept_manifest.py)
      runs/current.json          the current run's identity (state/current_run.py)
      runs/<run_id>/journal.jsonl          run lifecycle journal (state/journal.py)
      runs/<run_id>/agent-control/         agent directives of an invocation
      logs/                      session transcripts and event files
      agents/<pid>.json          live agent and verify-command registrations
      notifications.jsonl        one line per notification delivery and outcome (notify/record.py)
      packet-edits.jsonl         prompt-runner's own packet-file writes (packet/own_edits.py)
      interventions/<id>.jsonl   steering records of a prompt
      amendments/<id>.jsonl      contract amendments of a prompt
      amendments/.lock           the amendment lock
      amendments/verifying.json  the verification marker
      control/                   the control plane's transport (control/store.py):
        tmp/ requests/ outcomes/ log.jsonl snapshot.json
        events.jsonl events.meta.json events/<run_id>.jsonl
      acceptance/watch-<stamp>.jsonl        a bounded watch's samples (watch --for)
      acceptance/watch-<stamp>.report.json  its final report
      supervisor/record.json     a detached run's identity and containment (supervise/record.py)
      supervisor/.lock           serialises start and stop
      supervisor/runner.out.log  the detached runner's stdout (runner.err.log: stderr)

The layouts of other roots live beside this one: an operator workspace's
(:mod:`.workspace_layout`), a fleet's and a fleet worker's (:mod:`.fleet_layout`).

Only :mod:`os`, :mod:`pathlib` and the errors are imported: the ``status``, ``control`` and
``agent-control`` commands build a layout on their hot path. Names are joined,
never checked: callers validate prompt and run ids where they take them.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UserError
from .layout_text import STATE_DIR, STATE_DIR_ENV

__all__ = ["STATE_DIR", "STATE_DIR_ENV", "StateLayout", "relocated_state_dir"]


def relocated_state_dir(state_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The state root outside the packet, if one is chosen: ``state_dir``, else
    ``$PROMPT_RUNNER_STATE_DIR``; ``None`` when neither is set (or set empty).

    A relative ``state_dir`` is taken from the current directory and returned
    absolute, so a process started elsewhere (an agent in its repo) reads the
    same directory.

    Raises:
        UserError: ``$PROMPT_RUNNER_STATE_DIR`` is a relative path (it would name
            a different directory in every process that inherits it).
    """
    if state_dir is not None and os.fspath(state_dir) != "":
        return Path(os.path.abspath(Path(state_dir).expanduser()))
    value = os.environ.get(STATE_DIR_ENV, "")
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise UserError(
            f"{STATE_DIR_ENV}={value!r} is a relative path",
            key=STATE_DIR_ENV,
            fix="set it to an absolute directory, or unset it to keep state in the packet",
        )
    return path


class StateLayout:
    """The paths under one state root (nothing is created or read).

    Args:
        root: the state root directory.
    """

    __slots__ = ("root",)

    root: Path

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @classmethod
    def of_packet(
        cls, packet_root: str | Path, state_dir: str | os.PathLike[str] | None = None
    ) -> StateLayout:
        """The layout of the packet's state: ``state_dir``, else
        ``$PROMPT_RUNNER_STATE_DIR``, else ``<packet_root>/.prompt_runner``.

        Raises:
            UserError: ``$PROMPT_RUNNER_STATE_DIR`` is relative (see
                :func:`relocated_state_dir`).
        """
        relocated = relocated_state_dir(state_dir)
        return cls(relocated if relocated is not None else Path(packet_root) / STATE_DIR)

    def __repr__(self) -> str:
        return f"StateLayout({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StateLayout) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    # -- the run ---------------------------------------------------------------

    @property
    def gitignore(self) -> Path:
        """``.gitignore`` (``*``): the state root is never committed."""
        return self.root / ".gitignore"

    @property
    def run_pid(self) -> Path:
        """``run.pid``, the run lock."""
        return self.root / "run.pid"

    @property
    def progress_log(self) -> Path:
        """``progress.log``, the resume source."""
        return self.root / "progress.log"

    @property
    def state_json(self) -> Path:
        """``state.json``, the derived summary document."""
        return self.root / "state.json"

    @property
    def prompts_dir(self) -> Path:
        """``prompts/``, one operation log per prompt."""
        return self.root / "prompts"

    @property
    def status_cache(self) -> Path:
        """``status-cache``, the text ``status --json`` printed, kept while the
        files it was folded from are unchanged (state/status_cache.py)."""
        return self.root / "status-cache"

    @property
    def watch_manifest(self) -> Path:
        """``watch-manifest.json``, the packet name and repos a watch sample read
        from the manifest, kept with its text (watch/kept_manifest.py)."""
        return self.root / "watch-manifest.json"

    def prompt_log(self, prompt_id: str) -> Path:
        """``prompts/<prompt_id>.jsonl``."""
        return self.prompts_dir / f"{prompt_id}.jsonl"

    @property
    def runs_dir(self) -> Path:
        """``runs/``."""
        return self.root / "runs"

    @property
    def current_run(self) -> Path:
        """``runs/current.json``, the current run's identity."""
        return self.runs_dir / "current.json"

    def run_dir(self, run_id: str) -> Path:
        """``runs/<run_id>/``."""
        return self.runs_dir / run_id

    def journal(self, run_id: str) -> Path:
        """``runs/<run_id>/journal.jsonl``."""
        return self.run_dir(run_id) / "journal.jsonl"

    def agent_control_dir(self, run_id: str) -> Path:
        """``runs/<run_id>/agent-control/``, the directive files of a run's invocations."""
        return self.run_dir(run_id) / "agent-control"

    @property
    def logs_dir(self) -> Path:
        """``logs/``, session transcripts and event files."""
        return self.root / "logs"

    @property
    def agents_dir(self) -> Path:
        """``agents/``, registrations of live agents and verify commands."""
        return self.root / "agents"

    @property
    def notifications(self) -> Path:
        """``notifications.jsonl``, each notification delivery and its outcome."""
        return self.root / "notifications.jsonl"

    def interventions(self, prompt_id: str) -> Path:
        """``interventions/<prompt_id>.jsonl``, the steering records of a prompt."""
        return self.root / "interventions" / f"{prompt_id}.jsonl"

    @property
    def amendments_dir(self) -> Path:
        """``amendments/``."""
        return self.root / "amendments"

    def amendments(self, prompt_id: str) -> Path:
        """``amendments/<prompt_id>.jsonl``, the contract amendments of a prompt."""
        return self.amendments_dir / f"{prompt_id}.jsonl"

    @property
    def amendment_lock(self) -> Path:
        """``amendments/.lock``."""
        return self.amendments_dir / ".lock"

    @property
    def verifying_marker(self) -> Path:
        """``amendments/verifying.json``, the verification marker."""
        return self.amendments_dir / "verifying.json"

    # -- the control plane's transport -------------------------------------------

    @property
    def control_dir(self) -> Path:
        """``control/``."""
        return self.root / "control"

    @property
    def control_tmp_dir(self) -> Path:
        """``control/tmp/``, requests being written."""
        return self.control_dir / "tmp"

    @property
    def requests_dir(self) -> Path:
        """``control/requests/``, pending requests."""
        return self.control_dir / "requests"

    @property
    def outcomes_dir(self) -> Path:
        """``control/outcomes/``, write-once receipts."""
        return self.control_dir / "outcomes"

    @property
    def control_log(self) -> Path:
        """``control/log.jsonl``, the control audit log."""
        return self.control_dir / "log.jsonl"

    @property
    def snapshot(self) -> Path:
        """``control/snapshot.json``, the live run header."""
        return self.control_dir / "snapshot.json"

    @property
    def events(self) -> Path:
        """``control/events.jsonl``, the current run's event stream."""
        return self.control_dir / "events.jsonl"

    @property
    def events_meta(self) -> Path:
        """``control/events.meta.json``, the run id ``events.jsonl`` belongs to."""
        return self.control_dir / "events.meta.json"

    @property
    def events_archive_dir(self) -> Path:
        """``control/events/``, earlier runs' streams."""
        return self.control_dir / "events"

    def archived_events(self, run_id: str) -> Path:
        """``control/events/<run_id>.jsonl``."""
        return self.events_archive_dir / f"{run_id}.jsonl"

    # -- acceptance evidence (watch --for) -----------------------------------------

    @property
    def acceptance_dir(self) -> Path:
        """``acceptance/``, the evidence of bounded watches (``watch --for``)."""
        return self.root / "acceptance"

    def watch_samples(self, stamp: str) -> Path:
        """``acceptance/watch-<stamp>.jsonl``, one bounded watch's samples (fsynced lines)."""
        return self.acceptance_dir / f"watch-{stamp}.jsonl"

    def watch_report(self, stamp: str) -> Path:
        """``acceptance/watch-<stamp>.report.json``, that watch's final report (atomic)."""
        return self.acceptance_dir / f"watch-{stamp}.report.json"

    # -- a detached run (start / stop) ---------------------------------------------

    @property
    def supervisor(self) -> SupervisorLayout:
        """The files of a run started detached from this packet: all in ``supervisor/``."""
        return SupervisorLayout(self.root / "supervisor", self.root / "supervisor")


class SupervisorLayout:
    """The files of one detached run's supervisor (``start`` / ``stop``; nothing is
    created or read)::

        <supervisor_dir>/record.json    its identity and containment (supervise/record.py)
        <supervisor_dir>/.lock          serialises start and stop
        <logs_dir>/runner.out.log       the runner's stdout, appended by each start
        <logs_dir>/runner.err.log       its stderr

    A packet keeps both in ``<state root>/supervisor/``
    (:attr:`StateLayout.supervisor`); a workspace in its runtime root's
    ``supervisor/`` and ``logs/`` (:attr:`WorkspaceLayout.supervisor`).

    Args:
        supervisor_dir: where the record and the lock live.
        logs_dir: where the runner's output goes.
    """

    __slots__ = ("logs_dir", "supervisor_dir")

    supervisor_dir: Path
    logs_dir: Path

    def __init__(self, supervisor_dir: str | Path, logs_dir: str | Path) -> None:
        self.supervisor_dir = Path(supervisor_dir)
        self.logs_dir = Path(logs_dir)

    def __repr__(self) -> str:
        return f"SupervisorLayout({str(self.supervisor_dir)!r}, {str(self.logs_dir)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SupervisorLayout)
            and other.supervisor_dir == self.supervisor_dir
            and other.logs_dir == self.logs_dir
        )

    def __hash__(self) -> int:
        return hash((self.supervisor_dir, self.logs_dir))

    @property
    def record(self) -> Path:
        """``record.json``, the detached run's identity and containment."""
        return self.supervisor_dir / "record.json"

    @property
    def lock(self) -> Path:
        """``.lock``, held while a ``start`` or ``stop`` works."""
        return self.supervisor_dir / ".lock"

    @property
    def stdout(self) -> Path:
        """``runner.out.log``, the detached runner's stdout."""
        return self.logs_dir / "runner.out.log"

    @property
    def stderr(self) -> Path:
        """``runner.err.log``, the detached runner's stderr."""
        return self.logs_dir / "runner.err.log"
